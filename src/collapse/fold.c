/* hotstack collapse: one sample of `perf script` text to one folded line, by the rules of
 * stackcollapse-perf.pl, into the stack table (fold.h). */
#include <stdlib.h>
#include <string.h>

#include "collapse/fold.h"
#include "collapse/tidy.h"

static bool has(const char *p, size_t n, const char *what)
{
	return memmem(p, n, what, strlen(what)) != NULL;
}

/* With --inline: what addr2line expands frame f to, or NULL when the frame stays as it is. */
static const char *inline_expand(struct hs_collapse_fold *c, const struct hs_ps_frame *f)
{
	return c->opts->inline_ ? hs_addr2line_expand(c->a2l, f) : NULL;
}

/* Appends ";name;name..." for one frame line (nothing for a process name). */
static void fold_frame(struct hs_collapse_fold *c, struct hs_strbuf *sb, const struct hs_ps_sample *s,
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
			if (c->opts->addrs) {
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
		} else if (c->opts->kernel && (f->flags & HS_PS_KERNEL)) {
			hs_strbuf_adds(sb, "_[k]");
		} else if (c->opts->jit && (f->flags & HS_PS_JIT)) {
			if (!has(sb->buf + start, sb->len - start, "_[j]"))
				hs_strbuf_adds(sb, "_[j]");
		}
		if (c->opts->srcline && !unknown && k < f->nsrcline)
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
	const struct hs_collapse_fold *c;
	const char *p;
	size_t n;
};

static bool raw_eq(const void *ctx, uint32_t id)
{
	const struct raw_key *k = ctx;
	const struct hs_fold_raw *r = &k->c->raws.v[id];

	return r->len == k->n && !memcmp(k->c->raw_keys.buf + r->off, k->p, k->n);
}

void hs_collapse_fold_sample(struct hs_collapse_fold *c, const struct hs_ps_sample *s)
{
	struct hs_strbuf *sb = &c->line, *rk = &c->raw_key;
	struct hs_ps_str pid = s->pid_text.n ? s->pid_text : s->tid_text;
	struct hs_ps_str tid = s->pid_text.n ? s->tid_text : (struct hs_ps_str){NULL, 0};
	struct raw_key key = {c, NULL, 0};
	bool raw = !c->opts->srcline;
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
	if (c->opts->tid || c->opts->pid) {
		hs_strbuf_addc(sb, '-');
		hs_strbuf_add(sb, pid.p, pid.n);
		if (c->opts->tid) {
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
			hs_stack_table_count(c->table, c->raws.v[id].stack, &v);
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

		if (f->id == UINT32_MAX || c->opts->srcline) {
			start = c->scratch.len;
			fold_frame(c, &c->scratch, s, f, java);
			c->parts.v[i] = (struct hs_fold_frag){start, c->scratch.len - start, false};
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
			c->frags.v[slot] = (struct hs_fold_frag){start, c->frag_bytes.len - start, true};
		}
		c->parts.v[i] = c->frags.v[slot];
	}
	for (size_t i = s->nframes; i-- > 0;) {
		const struct hs_fold_frag *fr = &c->parts.v[i];
		hs_strbuf_add(sb, (fr->set ? c->frag_bytes.buf : c->scratch.buf) + fr->off, fr->len);
	}
	id = hs_stack_table_add(c->table, sb->buf, sb->len, &v);
	if (raw && c->raw_keys.len < HS_FOLD_RAW_KEYS_MAX) {
		struct hs_fold_raw r = {c->raw_keys.len, key.n, id};

		hs_strbuf_add(&c->raw_keys, key.p, key.n);
		hs_vec_push(&c->raws, r);
		hs_index_insert(&c->raw_ix, h, (uint32_t)(c->raws.n - 1));
	}
}

void hs_collapse_fold_release(struct hs_collapse_fold *c)
{
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
}
