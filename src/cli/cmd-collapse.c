/* hotstack collapse: perf script text to folded stacks, line for line what FlameGraph's
 * stackcollapse-perf.pl prints for the same input and options, streamed: memory grows with
 * the number of distinct stacks, not with the input. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "collapse/addr2line.h"
#include "collapse/input.h"
#include "collapse/stack-table.h"
#include "collapse/tidy.h"
#include "format/perf-script.h"
#include "util/hashmap.h"
#include "util/outfile.h"
#include "util/strbuf.h"

static const char collapse_usage[] =
	"usage: hotstack collapse [FILE|-] [options]\n"
	"Folds `perf script` text (FILE, gzipped or not; standard input by default) into one line\n"
	"per distinct stack, \"comm;root;...;leaf count\", as stackcollapse-perf.pl does.\n"
	"\n"
	"  -o, --output FILE       write FILE instead of standard output\n"
	"      --pid               root is comm-PID\n"
	"      --tid               root is comm-PID/TID\n"
	"      --kernel            _[k] after kernel functions\n"
	"      --jit               _[j] after JIT functions (from /tmp/perf-PID.map)\n"
	"      --all               --kernel and --jit\n"
	"      --addrs             [module <address>] for frames without a symbol\n"
	"      --event-filter=EVENT  only samples of EVENT (default: the first event in the input)\n"
	"      --inline            expand inlined functions with addr2line (binutils)\n"
	"      --context           with --inline: function:file:line\n"
	"      --srcline           the input is from perf script -F+srcline: add :file:line to names\n"
	"  -q, --quiet             no warnings\n";

enum {
	OPT_PID = OPT_CMD_BASE,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_ADDRS,
	OPT_EVENT_FILTER,
	OPT_INLINE,
	OPT_CONTEXT,
	OPT_SRCLINE,
};

/* A sample seen before as the same root and the same frame lines folds to the same line:
 * the raw key (root, then each line's reader id and java bit) finds it without folding. */
#define RAW_KEYS_MAX (256u << 20) /* past this, samples are folded without the shortcut */

struct raw_stack {
	size_t off, len; /* in raw_keys */
	uint32_t stack;
};

/* What one frame line folds to: bytes in frag_bytes (set), or in scratch. */
struct frag {
	size_t off, len;
	bool set;
};

struct collapse {
	bool pid, tid, kernel, jit, addrs, inline_, context, srcline;

	struct hs_stack_table table;

	struct hs_strbuf line, tmp;

	HS_VEC(struct frag) frags; /* by frame id * 2 + (comm starts with "java") */
	struct hs_strbuf frag_bytes;
	HS_VEC(struct frag) parts; /* the frames of the sample being folded */
	struct hs_strbuf scratch;

	HS_VEC(struct raw_stack) raws;
	struct hs_strbuf raw_keys, raw_key;
	struct hs_index raw_ix;

	struct hs_addr2line a2l;
};

/* ---- one sample to one folded line ---- */

static bool has(const char *p, size_t n, const char *what)
{
	return memmem(p, n, what, strlen(what)) != NULL;
}

/* With --inline: what addr2line expands frame f to, or NULL when the frame stays as it is. */
static const char *inline_expand(struct collapse *c, const struct hs_ps_frame *f)
{
	return c->inline_ ? hs_addr2line_expand(&c->a2l, f) : NULL;
}

/* The reader's srclines hook: the Perl script reads no source lines after a frame it
 * expanded with addr2line. */
static int inline_srclines(void *ctx, const struct hs_ps_frame *f)
{
	return inline_expand(ctx, f) ? 0 : -1;
}

/* Appends ";name;name..." for one frame line (nothing for a process name). */
static void fold_frame(struct collapse *c, struct hs_strbuf *sb, const struct hs_ps_sample *s,
		       const struct hs_ps_frame *f, bool java)
{
	struct hs_ps_parts it;
	struct hs_ps_str part;
	bool unknown = false;
	size_t k = 0;

	const char *expanded = inline_expand(c, f);

	if (expanded) {
		hs_strbuf_addc(sb, ';');
		hs_strbuf_adds(sb, expanded);
		return;
	}
	if (f->sym.n && f->sym.p[0] == '(')
		return; /* a process name, not a function */

	hs_ps_parts_init(&it, f->sym);
	for (; hs_ps_parts_next(&it, &part); k++) {
		size_t start;

		hs_strbuf_addc(sb, ';');
		start = sb->len;
		if (part.n == 9 && !memcmp(part.p, "[unknown]", 9)) {
			/* no symbol: the module's file name, or "unknown" */
			struct hs_ps_str m = f->module;
			const char *slash;

			hs_strbuf_reset(&c->tmp);
			hs_strbuf_addc(&c->tmp, '[');
			if (m.n == 9 && !memcmp(m.p, "[unknown]", 9)) {
				hs_strbuf_adds(&c->tmp, "unknown");
				unknown = true;
			} else {
				slash = memrchr(m.p, '/', m.n);
				if (slash)
					hs_strbuf_add(&c->tmp, slash + 1, (size_t)(m.p + m.n - slash - 1));
				else
					hs_strbuf_add(&c->tmp, m.p, m.n);
			}
			if (c->addrs) {
				hs_strbuf_adds(&c->tmp, " <");
				hs_strbuf_add(&c->tmp, f->addr.p, f->addr.n);
				hs_strbuf_addc(&c->tmp, '>');
			}
			hs_strbuf_addc(&c->tmp, ']');
			hs_collapse_tidy(sb, c->tmp.buf, c->tmp.len);
		} else {
			hs_collapse_tidy(sb, part.p, part.n);
		}
		if (java && sb->buf[start] == 'L' && memchr(sb->buf + start, '/', sb->len - start)) {
			memmove(sb->buf + start, sb->buf + start + 1, sb->len - start);
			sb->len--;
		}
		if (k > 0) {
			if (!has(sb->buf + start, sb->len - start, "_[i]"))
				hs_strbuf_adds(sb, "_[i]");
		} else if (c->kernel && (f->flags & HS_PS_KERNEL)) {
			hs_strbuf_adds(sb, "_[k]");
		} else if (c->jit && (f->flags & HS_PS_JIT)) {
			if (!has(sb->buf + start, sb->len - start, "_[j]"))
				hs_strbuf_adds(sb, "_[j]");
		}
		if (c->srcline && !unknown && k < f->nsrcline)
			hs_collapse_srcline(sb, s->srclines[f->srcline + k]);
	}
}

/* $period: 1 when not printed or "0" */
static void sample_count(const struct hs_ps_sample *s, struct hs_perl_count *v)
{
	memset(v, 0, sizeof(*v));
	if (!s->period_text.n || (s->period_text.n == 1 && s->period_text.p[0] == '0')) {
		v->u = 1;
	} else if (s->period == UINT64_MAX) {
		/* saturated: Perl keeps numbers above 2^64-1 as doubles */
		static const char max[] = "18446744073709551615";
		struct hs_ps_str t = s->period_text;

		while (t.n > 1 && t.p[0] == '0')
			t.p++, t.n--;
		if (t.n > sizeof(max) - 1 || (t.n == sizeof(max) - 1 && memcmp(t.p, max, t.n) > 0)) {
			char *z = hs_xstrndup(t.p, t.n);
			v->d = strtod(z, NULL);
			v->nv = true;
			free(z);
		} else {
			v->u = UINT64_MAX;
		}
	} else {
		v->u = s->period;
	}
}

/* $pname =~ /^java/, with the header in force when the frame was read; the suffixes --pid
 * and --tid add cannot complete a "java". */
static bool java_frame(const struct hs_ps_frame *f)
{
	return f->comm.n >= 4 && !memcmp(f->comm.p, "java", 4);
}

struct raw_key {
	const struct collapse *c;
	const char *p;
	size_t n;
};

static bool raw_eq(const void *ctx, uint32_t id)
{
	const struct raw_key *k = ctx;
	const struct raw_stack *r = &k->c->raws.v[id];

	return r->len == k->n && !memcmp(k->c->raw_keys.buf + r->off, k->p, k->n);
}

static void fold(struct collapse *c, const struct hs_ps_sample *s)
{
	struct hs_strbuf *sb = &c->line, *rk = &c->raw_key;
	struct hs_ps_str pid = s->pid_text.n ? s->pid_text : s->tid_text;
	struct hs_ps_str tid = s->pid_text.n ? s->tid_text : (struct hs_ps_str){NULL, 0};
	struct raw_key key = {c, NULL, 0};
	bool raw = !c->srcline;
	uint32_t id = UINT32_MAX;
	uint64_t h = 0;
	struct hs_perl_count v;

	sample_count(s, &v);
	hs_strbuf_reset(sb);
	/* "not $tid": absent or "0" -- then the one number is the tid and the pid is "?". */
	if (!tid.n || (tid.n == 1 && tid.p[0] == '0')) {
		tid = pid;
		pid = (struct hs_ps_str){"?", 1};
	}
	hs_strbuf_add(sb, s->comm.p, s->comm.n);
	if (c->tid || c->pid) {
		hs_strbuf_addc(sb, '-');
		hs_strbuf_add(sb, pid.p, pid.n);
		if (c->tid) {
			hs_strbuf_addc(sb, '/');
			hs_strbuf_add(sb, tid.p, tid.n);
		}
	}
	for (size_t i = 0; i < sb->len; i++)
		if (sb->buf[i] == ' ')
			sb->buf[i] = '_';

	/* What a frame line folds to depends on the line alone (and java), except for the
	 * source lines after it: a sample of lines the reader knows, and their java bits,
	 * under the same root, is a line folded before. */
	if (raw) {
		uint64_t rootlen = sb->len;

		hs_strbuf_reset(rk);
		hs_strbuf_add(rk, &rootlen, sizeof(rootlen));
		hs_strbuf_add(rk, sb->buf, sb->len);
		hs_xgrow((void **)&rk->buf, &rk->cap, rk->len + s->nframes * 4 + 1, 1);
		for (size_t i = 0; i < s->nframes && raw; i++) {
			const struct hs_ps_frame *f = &s->frames[i];
			uint32_t slot = f->id * 2 + java_frame(f);

			raw = f->id < UINT32_MAX / 2;
			memcpy(rk->buf + rk->len + i * 4, &slot, 4);
		}
		rk->len += s->nframes * 4;
		rk->buf[rk->len] = '\0';
	}
	if (raw) {
		key.p = rk->buf;
		key.n = rk->len;
		h = hs_hash_mem(key.p, key.n);
		id = hs_index_find(&c->raw_ix, h, raw_eq, &key);
		if (id != UINT32_MAX) {
			hs_stack_table_count(&c->table, c->raws.v[id].stack, &v);
			return;
		}
	}

	/* Each frame line folds to ";name..." -- worked out in input order, as the Perl script
	 * runs addr2line in input order -- and they join root first. */
	hs_vec_reserve(&c->parts, s->nframes);
	hs_strbuf_reset(&c->scratch);
	for (size_t i = 0; i < s->nframes; i++) {
		const struct hs_ps_frame *f = &s->frames[i];
		bool java = java_frame(f);
		size_t slot = (size_t)f->id * 2 + java, start;

		if (f->id == UINT32_MAX || c->srcline) {
			start = c->scratch.len;
			fold_frame(c, &c->scratch, s, f, java);
			c->parts.v[i] = (struct frag){start, c->scratch.len - start, false};
			continue;
		}
		if (slot >= c->frags.n) {
			hs_vec_reserve(&c->frags, slot + 1);
			memset(c->frags.v + c->frags.n, 0, (slot + 1 - c->frags.n) * sizeof(*c->frags.v));
			c->frags.n = slot + 1;
		}
		if (!c->frags.v[slot].set) {
			start = c->frag_bytes.len;
			fold_frame(c, &c->frag_bytes, s, f, java);
			c->frags.v[slot] = (struct frag){start, c->frag_bytes.len - start, true};
		}
		c->parts.v[i] = c->frags.v[slot];
	}
	for (size_t i = s->nframes; i-- > 0;) {
		const struct frag *fr = &c->parts.v[i];
		hs_strbuf_add(sb, (fr->set ? c->frag_bytes.buf : c->scratch.buf) + fr->off, fr->len);
	}
	id = hs_stack_table_add(&c->table, sb->buf, sb->len, &v);
	if (raw && c->raw_keys.len < RAW_KEYS_MAX) {
		struct raw_stack r = {c->raw_keys.len, key.n, id};

		hs_strbuf_add(&c->raw_keys, key.p, key.n);
		hs_vec_push(&c->raws, r);
		hs_index_insert(&c->raw_ix, h, (uint32_t)(c->raws.n - 1));
	}
}

static void collapse_release(struct collapse *c)
{
	hs_stack_table_release(&c->table);
	hs_strbuf_release(&c->line);
	hs_strbuf_release(&c->tmp);
	hs_vec_free(&c->frags);
	hs_strbuf_release(&c->frag_bytes);
	hs_vec_free(&c->parts);
	hs_strbuf_release(&c->scratch);
	hs_vec_free(&c->raws);
	hs_strbuf_release(&c->raw_keys);
	hs_strbuf_release(&c->raw_key);
	hs_index_release(&c->raw_ix);
	hs_addr2line_release(&c->a2l);
}

static const char *plural(uint64_t n, const char *one, const char *more)
{
	return n == 1 ? one : more;
}

/* What was left out, and why: stackcollapse-perf.pl drops the same things, mostly silently. */
static void report_stats(const struct hs_perf_script *r, const char *filter)
{
	const struct hs_perf_script_stats *st = hs_perf_script_stats(r);
	const char *ev = hs_perf_script_event(r);

	if (st->filtered && !filter)
		cli_warn("left out %" PRIu64 " %s of events other than '%s', the first in the input (choose with "
			 "--event-filter)",
			 st->filtered, plural(st->filtered, "sample", "samples"), ev);
	if (filter && !st->headers)
		cli_warn("no samples of event '%s'", filter);
	else if (!st->samples && st->headers)
		cli_warn("no sample ends with a blank line: was this recorded without call graphs (perf record -g)?");
	else if (st->truncated)
		cli_warn("the input ends inside a sample (no blank line after it): that sample is left out, as "
			 "stackcollapse-perf.pl leaves it out");
	if (st->unrecognized)
		cli_warn("%" PRIu64 " %s not perf script text (the first is line %" PRIu64 ")", st->unrecognized,
			 plural(st->unrecognized, "line is", "lines are"), st->first_unrecognized);
}

static void print_warning(void *ctx, const char *msg)
{
	cli_warn("%s", msg);
}

int cmd_collapse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"pid", no_argument, NULL, OPT_PID},
		{"tid", no_argument, NULL, OPT_TID},
		{"kernel", no_argument, NULL, OPT_KERNEL},
		{"jit", no_argument, NULL, OPT_JIT},
		{"all", no_argument, NULL, OPT_ALL},
		{"addrs", no_argument, NULL, OPT_ADDRS},
		{"event-filter", required_argument, NULL, OPT_EVENT_FILTER},
		{"inline", no_argument, NULL, OPT_INLINE},
		{"context", no_argument, NULL, OPT_CONTEXT},
		{"srcline", no_argument, NULL, OPT_SRCLINE},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct hs_perf_script_opts po = {0};
	struct collapse c = {0};
	struct hs_parse_error err = {0};
	struct hs_perf_script *r;
	struct hs_ps_sample s;
	struct hs_collapse_input in;
	struct hs_outfile of;
	const char *path = "-", *out = "-";
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case OPT_PID:
			c.pid = true;
			break;
		case OPT_TID:
			c.tid = true;
			break;
		case OPT_KERNEL:
			c.kernel = true;
			break;
		case OPT_JIT:
			c.jit = true;
			break;
		case OPT_ALL:
			c.kernel = c.jit = true;
			break;
		case OPT_ADDRS:
			c.addrs = true;
			break;
		case OPT_EVENT_FILTER:
			po.event_filter = optarg;
			break;
		case OPT_INLINE:
			c.inline_ = true;
			break;
		case OPT_CONTEXT:
			c.context = true;
			break;
		case OPT_SRCLINE:
			c.srcline = po.srcline = true;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'h':
			fputs(collapse_usage, stdout);
			return 0;
		default:
			fputs(collapse_usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	rc = hs_outfile_open(&of, out);
	if (rc) {
		cli_error("cannot write '%s': %s", out, strerror(-rc));
		hs_outfile_abort(&of);
		return 1;
	}
	rc = hs_collapse_input_open(&in, path);
	if (rc) {
		cli_error("cannot read '%s': %s", path, strerror(-rc));
		hs_collapse_input_close(&in);
		hs_outfile_abort(&of);
		return 1;
	}
	if (c.inline_) {
		c.a2l.context = c.context;
		c.a2l.warn = print_warning;
		po.srclines = inline_srclines;
		po.srclines_ctx = &c;
	}
	r = hs_perf_script_new(hs_collapse_input_read, &in, &po);
	while ((rc = hs_perf_script_next(r, &s, &err)) > 0)
		fold(&c, &s);
	if (rc < 0) {
		const char *name = strcmp(path, "-") ? path : "<stdin>";
		if (rc == -EPROTO)
			cli_error("%s: the gzip data is corrupt or cut short", name);
		else if (in.bomb)
			cli_error("%s: gzip data expands to more than %llu MiB from %llu KiB, over %u times its size: "
				  "not read (a decompression bomb?)",
				  name, (unsigned long long)(in.plain >> 20), (unsigned long long)(in.raw >> 10),
				  HS_DECOMPRESS_RATIO);
		else if (err.msg[0])
			cli_error("%s: line %" PRIu64 ": %s", name, err.line, err.msg);
		else
			cli_error("cannot read '%s': %s", path, strerror(-rc));
		hs_outfile_abort(&of);
	} else {
		report_stats(r, po.event_filter && *po.event_filter ? po.event_filter : NULL);
		hs_stack_table_write(&c.table, &of);
		rc = hs_outfile_commit(&of);
		if (rc)
			cli_error("cannot write '%s': %s", out, strerror(-rc));
	}
	hs_perf_script_free(r);
	hs_collapse_input_close(&in);
	collapse_release(&c);
	return rc ? 1 : 0;
}
