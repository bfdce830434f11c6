/* Unit tests for src/format/perf-script: every header and frame line form perf prints (and
 * the odd ones FlameGraph's tests hold), the sample rules stackcollapse-perf.pl keeps, input
 * cut anywhere, and lines and samples over their caps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/perf-script.h"

#define assert_str(s, want)                                                          \
	do {                                                                         \
		struct hs_ps_str s_ = (s);                                           \
		const char *w_ = (want);                                             \
		if (s_.n != strlen(w_) || memcmp(s_.p, w_, s_.n))                    \
			fail_msg("got '%.*s', want '%s'", (int)s_.n, s_.p, w_);      \
	} while (0)

static bool header(const char *line, struct hs_ps_sample *h)
{
	return hs_perf_script_parse_header(line, strlen(line), h);
}

static bool frame(const char *line, struct hs_ps_frame *f)
{
	return hs_perf_script_parse_frame(line, strlen(line), f);
}

struct header_case {
	const char *line;
	const char *comm, *pid, *tid;
	int cpu;
	uint64_t time_ns;
	const char *period, *event;
};

static void test_header_forms(void **state)
{
	static const struct header_case cases[] = {
		/* perf script's default: the tid only */
		{"java 25607 4794564.109216: 1 cycles:", "java", "", "25607", -1, 4794564109216000, "1", "cycles"},
		{"java 12688 [002] 6544038.708352: 235 cpu-clock:", "java", "", "12688", 2, 6544038708352000, "235",
		 "cpu-clock"},
		/* a command name with a space */
		{"V8 WorkerThread 25607 4794564.109216: 104345 cycles:", "V8 WorkerThread", "", "25607", -1,
		 4794564109216000, "104345", "cycles"},
		/* -F pid,tid */
		{"java 24636/25607 [000] 4794564.109216: 1 cycles:", "java", "24636", "25607", 0, 4794564109216000, "1",
		 "cycles"},
		{"java 12688/12764 6544038.708352: 10309278 cpu-clock:", "java", "12688", "12764", -1,
		 6544038708352000, "10309278", "cpu-clock"},
		{"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:", "V8 WorkerThread", "24636", "25607", 0,
		 94564109216000, "100", "cycles"},
		/* event modifiers, padding, a blank after the last colon */
		{"sleep 25756  3829.602270:     250000 cpu-clock:pppH: ", "sleep", "", "25756", -1, 3829602270000,
		 "250000", "cpu-clock:pppH"},
		{"emulator  4152 75695.008865:          1 cycles:u: ", "emulator", "", "4152", -1, 75695008865000, "1",
		 "cycles:u"},
		{"a.out 35081 252436.005167:     667783 cycles:ppp:", "a.out", "", "35081", -1, 252436005167000,
		 "667783", "cycles:ppp"},
		/* no period (perf before 4.x), no time, no cpu */
		{"iperf 27409/28744 [000] 441995.133575: cpu-clock: ", "iperf", "27409", "28744", 0, 441995133575000,
		 "", "cpu-clock"},
		/* with no time, no ':' comes before the event: Perl's pattern finds none, so these
		 * samples are never filtered out */
		{"java 19983 cycles:", "java", "", "19983", -1, 0, "", ""},
		{"node-v011 31912 cpu-clock: ", "node-v011", "", "31912", -1, 0, "", ""},
		/* --ns */
		{"ab 1 [007] 12.123456789: 3 task-clock:", "ab", "", "1", 7, 12123456789, "3", "task-clock"},
		/* command names with colons, slashes, digits, dashes */
		{"kworker/u8:2-ev 123 [001] 1.000001: 1 cpu-clock:", "kworker/u8:2-ev", "", "123", 1, 1000001000, "1",
		 "cpu-clock"},
		{"perf-exec 0/0 [000] 0.5: 1 cpu-clock:", "perf-exec", "0", "0", 0, 500000000, "1", "cpu-clock"},
		{"4x4 77 1.0: 1 cycles:", "4x4", "", "77", -1, 1000000000, "1", "cycles"},
		/* the Perl pattern takes the first blank-number-blank after two bytes: a command
		 * "Thread 2 of 4" reads as "Thread" with tid 2, as stackcollapse-perf.pl reads it */
		{"Thread 2 of 4 100 1.0: 1 cycles:", "Thread", "", "2", -1, 0, "1", "cycles"},
		/* a one-byte command: the name needs two bytes, so it takes a blank, or more */
		{"a  5 1.0: 1 cycles:", "a ", "", "5", -1, 1000000000, "1", "cycles"},
		{"a 1 [007] 12.1: 3 task-clock:", "a 1 [007] 12.1:", "", "3", -1, 0, "3", "task-clock"},
		/* fields after the event (no -g): a header, but no event to filter on */
		{"foo 1 [000] 1.0: 1 cycles:  ffffffff81 func ([kernel.kallsyms])", "foo", "", "1", 0, 1000000000, "",
		 ""},
		/* a period glued to the event is part of the event name */
		{"xy 1 2.0: 123cpu-clock:", "xy", "", "1", -1, 2000000000, "", "123cpu-clock"},
	};
	struct hs_ps_sample h;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct header_case *c = &cases[i];

		if (!header(c->line, &h))
			fail_msg("not a header: '%s'", c->line);
		assert_str(h.comm, c->comm);
		assert_str(h.pid_text, c->pid);
		assert_str(h.tid_text, c->tid);
		assert_int_equal(h.cpu, c->cpu);
		if (c->time_ns)
			assert_int_equal(h.time_ns, c->time_ns);
		assert_str(h.period_text, c->period);
		assert_str(h.event, c->event);
		assert_int_equal(h.pid, *c->pid ? atoll(c->pid) : -1);
		assert_int_equal(h.tid, atoll(c->tid));
		assert_int_equal(h.period, *c->period ? strtoull(c->period, NULL, 10) : 0);
	}

	/* not headers */
	assert_false(header("\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])", &h));
	assert_false(header("ab 123", &h)); /* no blank after the number */
	assert_false(header("a 12x 3y", &h));
	assert_false(header("x", &h));
	assert_false(header("", &h));
	assert_false(header(" java 1 1.0: 1 cycles:", &h));
	assert_false(header("ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])", &h));

	/* a pid beyond int32 keeps its text; its value is -1 */
	assert_true(header("big 99999999999/1 1.0: 18446744073709551616 cycles:", &h));
	assert_str(h.pid_text, "99999999999");
	assert_int_equal(h.pid, -1);
	assert_int_equal(h.tid, 1);
	assert_int_equal(h.period, UINT64_MAX);
	assert_str(h.period_text, "18446744073709551616");
}

static void test_frame_forms(void **state)
{
	struct hs_ps_frame f;

	(void)state;
	assert_true(frame("\t    ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])", &f));
	assert_str(f.addr, "ffffffff8103ce3b");
	assert_int_equal(f.ip, 0xffffffff8103ce3bULL);
	assert_str(f.sym, "native_safe_halt");
	assert_str(f.module, "[kernel.kallsyms]");
	assert_int_equal(f.flags, HS_PS_KERNEL);

	/* symbol offsets (perf >= 4.8), stripped from sym */
	assert_true(frame("\t    7f6d2148eb25 __libc_start_main+0xd5 (/lib64/libc-2.33.so)", &f));
	assert_str(f.rawsym, "__libc_start_main+0xd5");
	assert_str(f.sym, "__libc_start_main");
	assert_int_equal(f.offset, 0xd5);
	assert_int_equal(f.flags, 0);
	assert_true(frame("7fffb84c9afc cpu_startup_entry+0x800047c022ec ([kernel.kallsyms])", &f));
	assert_str(f.sym, "cpu_startup_entry");
	assert_int_equal(f.offset, 0x800047c022ecULL);
	/* upper-case hex is not an offset to Perl's pattern */
	assert_true(frame("  1 f+0xAB (/x)", &f));
	assert_str(f.sym, "f+0xAB");

	/* no leading blank (old perf) */
	assert_true(frame("ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])", &f));
	assert_str(f.sym, "native_write_msr_safe");

	/* kernel from vmlinux and modules; [unknown] is not kernel */
	assert_true(frame("  8c3453 tcp_sendmsg (/lib/modules/4.3.0-rc1-virtual/build/vmlinux)", &f));
	assert_int_equal(f.flags, HS_PS_KERNEL);
	assert_true(frame("  7d8 ipv4_conntrack_local+0x7f8f80b8 ([nf_conntrack_ipv4])", &f));
	assert_int_equal(f.flags, HS_PS_KERNEL);
	assert_true(frame("\t               0 [unknown] ([unknown])", &f));
	assert_str(f.sym, "[unknown]");
	assert_int_equal(f.flags, 0);
	assert_int_equal(f.ip, 0);

	/* JIT: a perf map anywhere in the module */
	assert_true(frame("  7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)", &f));
	assert_str(f.sym, "Ljava/io/PrintStream;::print");
	assert_int_equal(f.flags, HS_PS_JIT);
	assert_true(frame("  13a80b608e0a RegExp:[&<>\\\"\\'] (/tmp/perf-7539.map)", &f));
	assert_int_equal(f.flags, HS_PS_JIT);
	assert_true(frame("  1 x (/tmp/perf-.map)", &f));
	assert_int_equal(f.flags, 0);

	/* perf script --inline */
	assert_true(frame("\t          401136 inner (inlined)", &f));
	assert_str(f.sym, "inner");
	assert_str(f.module, "inlined");
	assert_int_equal(f.flags, HS_PS_INLINED);

	/* C++ and Go names keep their parentheses; the module is the last " (...)" */
	assert_true(frame("  7f (anonymous namespace)::f(int) const+0x10 (/usr/lib/libx.so)", &f));
	assert_str(f.sym, "(anonymous namespace)::f(int) const");
	assert_str(f.module, "/usr/lib/libx.so");
	assert_true(frame("  4a1b net/http.(*Client).Do+0x5 (/bin/app)", &f));
	assert_str(f.sym, "net/http.(*Client).Do");
	assert_true(frame("  abc func (/tmp/x (deleted))", &f));
	assert_str(f.sym, "func (/tmp/x");
	assert_str(f.module, "deleted)");

	/* where Perl's pattern backtracks: no symbol column */
	assert_true(frame("\t    7f1234 (/lib/x.so)", &f));
	assert_str(f.addr, "7f123");
	assert_str(f.sym, "4");
	assert_true(frame("\t    7f12  (/lib/x.so)", &f));
	assert_str(f.addr, "7f12");
	assert_str(f.sym, " ");
	assert_false(frame("  7 (/lib/x.so)", &f));

	/* a \w run that is not hex */
	assert_true(frame("  zz_top f (m)", &f));
	assert_str(f.addr, "zz_top");
	assert_int_equal(f.ip, 0);

	/* not frames */
	assert_false(frame("  func without parens", &f));
	assert_false(frame("  (x) (y)", &f));
	assert_false(frame("  abc (x", &f));
	assert_false(frame("  uniform_int_dist.h:300", &f));
	assert_false(frame("", &f));
	assert_false(frame("   ", &f));
}

static void parts(const char *sym, const char *want)
{
	struct hs_ps_parts it;
	struct hs_ps_str p;
	char got[256] = "";

	hs_ps_parts_init(&it, (struct hs_ps_str){sym, strlen(sym)});
	while (hs_ps_parts_next(&it, &p)) {
		strcat(got, "<");
		strncat(got, p.p, p.n);
		strcat(got, ">");
	}
	if (strcmp(got, want))
		fail_msg("parts of '%s': got %s, want %s", sym, got, want);
}

static void test_inline_parts(void **state)
{
	(void)state;
	parts("a", "<a>");
	parts("a->b->c", "<a><b><c>");
	parts("a->", "<a>");
	parts("a->->", "<a>");
	parts("->a", "<><a>");
	parts("a->->b", "<a><><b>");
	parts("->", "");
	parts("a-->b", "<a-><b>");
	parts("a->-", "<a><->");
	parts("a-b>c", "<a-b>c>");
}

/* ---- whole inputs ---- */

struct mem {
	const char *p;
	size_t n, step;
	size_t fail_at; /* -EIO once this many bytes were given; SIZE_MAX: never */
	size_t given;
};

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
	struct mem *m = ctx;
	size_t k = HS_MIN(n, m->n);

	if (m->given >= m->fail_at)
		return -EIO;
	if (m->step)
		k = HS_MIN(k, m->step);
	k = HS_MIN(k, m->fail_at - m->given);
	memcpy(buf, m->p, k);
	m->p += k;
	m->n -= k;
	m->given += k;
	return (ssize_t)k;
}

/* Reads text with the given options; prints each sample as one line into out:
 * "comm/tid@event period: frame;frame..." (leaf first). Returns the final return code. */
static int run(const char *text, size_t step, const struct hs_perf_script_opts *o, char *out, size_t cap,
	       struct hs_perf_script_stats *st, struct hs_error *err)
{
	struct mem m = {text, strlen(text), step, SIZE_MAX, 0};
	struct hs_perf_script *r = hs_perf_script_new(mem_read, &m, o);
	struct hs_ps_sample s;
	size_t len = 0;
	int rc;

	out[0] = '\0';
	while ((rc = hs_perf_script_next(r, &s, err)) > 0) {
		len += (size_t)snprintf(out + len, cap - len, "%.*s/%.*s@%.*s %llu:", (int)s.comm.n, s.comm.p,
					(int)s.tid_text.n, s.tid_text.p, (int)s.event.n, s.event.p,
					(unsigned long long)s.period);
		for (size_t i = 0; i < s.nframes; i++) {
			const struct hs_ps_frame *f = &s.frames[i];
			len += (size_t)snprintf(out + len, cap - len, "%s%.*s", i ? ";" : " ", (int)f->sym.n, f->sym.p);
			for (uint32_t k = 0; k < f->nsrcline; k++)
				len += (size_t)snprintf(out + len, cap - len, "{%.*s}", (int)s.srclines[f->srcline + k].n,
							s.srclines[f->srcline + k].p);
		}
		len += (size_t)snprintf(out + len, cap - len, "\n");
		assert_true(len < cap);
	}
	if (st)
		*st = *hs_perf_script_stats(r);
	hs_perf_script_free(r);
	return rc;
}

static const char two_events[] =
	"# ========\n"
	"# cmdline : /usr/bin/perf record -e cycles -e instructions -g ./a.out\n"
	"# ========\n"
	"#\n"
	"a.out 101 1.000001:     1000 cycles:ppp: \n"
	"\t    401136 leaf+0x6 (/tmp/a.out)\n"
	"# a comment inside a sample\n"
	"\t    401150 main+0x10 (/tmp/a.out)\n"
	"\n"
	"a.out 101 1.000002:     2000 instructions: \n"
	"\t    401136 leaf+0x6 (/tmp/a.out)\n"
	"\n"
	"a.out 101 1.000003:     3000 cycles:ppp: \n"
	"\t    401150 main+0x10 (/tmp/a.out)\n"
	"\n";

static void test_samples_and_events(void **state)
{
	struct hs_perf_script_opts o = {0};
	struct hs_perf_script_stats st;
	char out[4096];

	(void)state;
	/* the first event in the input is the default filter */
	assert_int_equal(run(two_events, 0, NULL, out, sizeof(out), &st, NULL), 0);
	assert_string_equal(out, "a.out/101@cycles:ppp 1000: leaf;main\n"
				 "a.out/101@cycles:ppp 3000: main\n");
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.filtered, 1);
	assert_int_equal(st.orphan_frames, 1); /* the instructions sample's frame */
	assert_false(st.truncated);

	o.event_filter = "instructions";
	assert_int_equal(run(two_events, 0, &o, out, sizeof(out), &st, NULL), 0);
	assert_string_equal(out, "a.out/101@instructions 2000: leaf\n");
	assert_int_equal(st.filtered, 2);

	o.event_filter = "cycles"; /* modifiers are part of the name */
	assert_int_equal(run(two_events, 0, &o, out, sizeof(out), &st, NULL), 0);
	assert_string_equal(out, "");
}

static void test_sample_rules(void **state)
{
	struct hs_perf_script_stats st;
	char out[4096];

	(void)state;
	/* frames before any header are dropped; a blank line with no sample is nothing */
	assert_int_equal(run("\n\n  1 lost (/x)\n\nxx 1 1.0: 5 e:\n  2 f (/x)\n\n", 0, NULL, out, sizeof(out), &st, NULL),
			 0);
	assert_string_equal(out, "xx/1@e 5: f\n");
	assert_int_equal(st.orphan_frames, 1);

	/* a header before the blank line: one sample, the newer header, every frame; each
	 * frame knows which header it followed */
	{
		static const char text[] = "java 1 1.0: 5 e:\n  1 La/B;.m (/tmp/perf-1.map)\n"
					   "other 2 2.0: 7 e:\n  2 g (/x)\n\n";
		struct mem m = {text, sizeof(text) - 1, 0, SIZE_MAX, 0};
		struct hs_perf_script *r = hs_perf_script_new(mem_read, &m, NULL);
		struct hs_ps_sample s;

		assert_int_equal(hs_perf_script_next(r, &s, NULL), 1);
		assert_str(s.comm, "other");
		assert_int_equal(s.period, 7);
		assert_int_equal(s.line, 3);
		assert_int_equal(s.nframes, 2);
		assert_str(s.frames[0].comm, "java");
		assert_str(s.frames[1].comm, "other");
		assert_int_equal(hs_perf_script_next(r, &s, NULL), 0);
		assert_int_equal(hs_perf_script_stats(r)->merged_headers, 1);
		hs_perf_script_free(r);
	}

	/* header lines without call chains or blank lines (perf script without -g): nothing,
	 * whatever their number, and no memory kept for them */
	{
		size_t n = 200000, len = 0;
		char *text = malloc(n * 40);
		assert_non_null(text);
		for (size_t i = 0; i < n; i++)
			len += (size_t)sprintf(text + len, "xx %zu 1.0: 1 cpu-clock:  1 f (/x)\n", i);
		assert_int_equal(run(text, 0, NULL, out, sizeof(out), &st, NULL), 0);
		assert_string_equal(out, "");
		assert_int_equal(st.headers, n);
		assert_true(st.truncated);
		free(text);
	}

	/* the last sample with no blank line after it is left out, as the Perl script does */
	assert_int_equal(run("xx 1 1.0: 5 e:\n  1 f (/x)\n\nxx 1 2.0: 5 e:\n  1 g (/x)\n", 0, NULL, out, sizeof(out),
			     &st, NULL),
			 0);
	assert_string_equal(out, "xx/1@e 5: f\n");
	assert_true(st.truncated);

	/* CRLF: "\r" is not a blank line, so nothing ends (as in Perl) */
	assert_int_equal(run("xx 1 1.0: 5 e:\r\n  1 f (/x)\r\n\r\n", 0, NULL, out, sizeof(out), &st, NULL), 0);
	assert_string_equal(out, "");
	assert_int_equal(st.unrecognized, 1);
	assert_int_equal(st.first_unrecognized, 3);

	/* lines that are none of the kinds are counted, not fatal */
	assert_int_equal(run("garbage\n\x01\x02\x03\nxx 1 1.0: 5 e:\n  1 f (/x)\n??\n\n", 0, NULL, out, sizeof(out),
			     &st, NULL),
			 0);
	assert_string_equal(out, "xx/1@e 5: f\n");
	assert_int_equal(st.unrecognized, 3);
	assert_int_equal(st.first_unrecognized, 1);

	/* empty input */
	assert_int_equal(run("", 0, NULL, out, sizeof(out), &st, NULL), 0);
	assert_int_equal(st.lines, 0);
}

static void test_srcline(void **state)
{
	static const char text[] = "a.out 35081 252436.005167:     667783 cycles:\n"
				   "                  408ebb some_method_name+0x8b (/full/path/to/a.out)\n"
				   "  uniform_int_dist.h:300\n"
				   "                  4069f5 main+0x935 (/full/path/to/a.out)\n"
				   "  file.cpp:137\n"
				   "            7ffc71ee9580 [unknown] ([unknown])\n"
				   "            7f6d2148eb25 x->y (/lib64/libc-2.33.so)\n"
				   "  a.c:1\n"
				   "  b.c:2\n"
				   "\n";
	struct hs_perf_script_opts o = {.srcline = true};
	char out[4096];

	(void)state;
	assert_int_equal(run(text, 0, &o, out, sizeof(out), NULL, NULL), 0);
	assert_string_equal(out, "a.out/35081@cycles 667783: some_method_name{  uniform_int_dist.h:300};"
				 "main{  file.cpp:137};[unknown];x->y{  a.c:1}{  b.c:2}\n");
	/* without the option the source lines are unrecognized lines */
	assert_int_equal(run(text, 0, NULL, out, sizeof(out), NULL, NULL), 0);
	assert_string_equal(out, "a.out/35081@cycles 667783: some_method_name;main;[unknown];x->y\n");
}

static int no_srclines_after_x(void *ctx, const struct hs_ps_frame *f)
{
	(*(int *)ctx)++;
	return f->sym.n == 1 && f->sym.p[0] == 'x' ? 0 : -1;
}

/* A consumer can say that a frame has no source lines after it (the Perl script reads none
 * after a frame it expanded with addr2line); it is asked once per distinct line. */
static void test_srcline_hook(void **state)
{
	static const char text[] = "prog 1 1.0: 5 e:\n  1 x (/p)\n  2 main (/p)\n  m.c:1\n\n"
				   "prog 1 1.0: 5 e:\n  1 x (/p)\n  2 main (/p)\n  m.c:2\n\n";
	int calls = 0;
	struct hs_perf_script_opts o = {.srcline = true, .srclines = no_srclines_after_x, .srclines_ctx = &calls};
	char out[4096];

	(void)state;
	assert_int_equal(run(text, 0, &o, out, sizeof(out), NULL, NULL), 0);
	assert_string_equal(out, "prog/1@e 5: x;main{  m.c:1}\nprog/1@e 5: x;main{  m.c:2}\n");
	assert_int_equal(calls, 2);
	/* without it, the line after x is x's source line */
	o.srclines = NULL;
	assert_int_equal(run(text, 0, &o, out, sizeof(out), NULL, NULL), 0);
	assert_string_equal(out, "prog/1@e 5: x{  2 main (/p)}\nprog/1@e 5: x{  2 main (/p)}\n");
}

/* Reading in pieces of every size gives what reading at once gives. */
static void test_chunks(void **state)
{
	char whole[4096], piece[4096];

	(void)state;
	assert_int_equal(run(two_events, 0, NULL, whole, sizeof(whole), NULL, NULL), 0);
	for (size_t step = 1; step < 64; step++) {
		assert_int_equal(run(two_events, step, NULL, piece, sizeof(piece), NULL, NULL), 0);
		assert_string_equal(piece, whole);
	}
}

/* Input cut at every byte: never an error, never a sample that was not complete. */
static void test_truncated(void **state)
{
	char out[4096], cut[sizeof(two_events)];

	(void)state;
	for (size_t n = 0; n < sizeof(two_events) - 1; n++) {
		struct hs_perf_script_stats st;

		memcpy(cut, two_events, n);
		cut[n] = '\0';
		assert_int_equal(run(cut, 7, NULL, out, sizeof(out), &st, NULL), 0);
		assert_true(st.samples <= 2);
		if (st.samples == 2)
			assert_string_equal(out, "a.out/101@cycles:ppp 1000: leaf;main\na.out/101@cycles:ppp 3000: main\n");
	}
}

static void test_caps(void **state)
{
	struct hs_perf_script_opts o = {0};
	struct hs_error err;
	static char big[300000];
	char out[4096];
	size_t n;

	(void)state;
	/* a line over the cap: its number, wherever the reads split it */
	n = (size_t)sprintf(big, "xx 1 1.0: 5 e:\n  1 f (/x)\n\n  2 ");
	memset(big + n, 'a', 200000);
	strcpy(big + n + 200000, " (/x)\n\n");
	o.max_line = 100000;
	for (size_t step = 0; step <= 4096; step += 4096) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(run(big, step, &o, out, sizeof(out), NULL, &err), -EOVERFLOW);
		assert_int_equal(err.line, 4);
		assert_int_equal(err.offset, n - 4);
		assert_non_null(strstr(err.detail, "longer than 100000"));
		assert_string_equal(out, "xx/1@e 5: f\n");
	}
	/* under the cap it is one long name */
	o.max_line = 0;
	assert_int_equal(run(big, 0, &o, out, sizeof(out), NULL, NULL), 0);

	/* too many frames */
	n = (size_t)sprintf(big, "xx 1 1.0: 5 e:\n");
	for (int i = 0; i < 20; i++)
		n += (size_t)sprintf(big + n, "  %x f%d (/x)\n", i, i);
	strcpy(big + n, "\n");
	o.max_frames = 10;
	memset(&err, 0, sizeof(err));
	assert_int_equal(run(big, 0, &o, out, sizeof(out), NULL, &err), -EOVERFLOW);
	assert_int_equal(err.line, 12);
	assert_non_null(strstr(err.detail, "more than 10 frames"));

	/* too many bytes in one sample (frame lines the reader remembers take none) */
	o.max_frames = 0;
	o.max_sample = 100;
	o.max_known = 1;
	memset(&err, 0, sizeof(err));
	assert_int_equal(run(big, 0, &o, out, sizeof(out), NULL, &err), -EOVERFLOW);
	assert_true(err.line > 2 && err.line < 12);
	
	/* a perf.data file */
	memset(&err, 0, sizeof(err));
	assert_int_equal(run("PERFILE2\x68\0\0\0\0\0\0\0", 0, NULL, out, sizeof(out), NULL, &err), -EMEDIUMTYPE);
	assert_int_equal(err.line, 1);
}

static void test_read_error(void **state)
{
	struct mem m = {two_events, sizeof(two_events) - 1, 16, 100, 0};
	struct hs_perf_script *r = hs_perf_script_new(mem_read, &m, NULL);
	struct hs_error err = {0};
	struct hs_ps_sample s;

	(void)state;
	assert_int_equal(hs_perf_script_next(r, &s, &err), -EIO);
	assert_non_null(strstr(err.detail, "read error"));
	assert_true(err.line > 1);
	/* and again: errors are sticky */
	assert_int_equal(hs_perf_script_next(r, &s, NULL), -EIO);
	hs_perf_script_free(r);
	hs_perf_script_free(NULL);
}

/* Identical frame lines share an id; past max_known lines are parsed each time, same result. */
static void test_frame_ids(void **state)
{
	static const char text[] = "xx 1 1.0: 5 e:\n  1 f (/x)\n  2 g (/x)\n\n"
				   "xx 1 1.0: 5 e:\n  2 g (/x)\n  3 h (/x)\n  1 f (/x)\n\n";
	struct hs_perf_script_opts o = {0};

	(void)state;
	for (int full = 0; full < 2; full++) {
		struct mem m = {text, sizeof(text) - 1, 0, SIZE_MAX, 0};
		struct hs_perf_script *r;
		struct hs_ps_sample s;

		o.max_known = full ? 20 : 0; /* room for two lines */
		r = hs_perf_script_new(mem_read, &m, &o);
		assert_int_equal(hs_perf_script_next(r, &s, NULL), 1);
		assert_int_equal(s.frames[0].id, 0);
		assert_int_equal(s.frames[1].id, 1);
		assert_int_equal(hs_perf_script_next(r, &s, NULL), 1);
		assert_int_equal(s.nframes, 3);
		assert_int_equal(s.frames[0].id, 1);
		assert_int_equal(s.frames[1].id, full ? UINT32_MAX : 2);
		assert_str(s.frames[1].sym, "h");
		assert_str(s.frames[1].module, "/x");
		assert_int_equal(s.frames[1].ip, 3);
		assert_int_equal(s.frames[2].id, 0);
		assert_int_equal(hs_perf_script_next(r, &s, NULL), 0);
		hs_perf_script_free(r);
	}
}

/* Random bytes and mangled perf lines: no crash, no error but the caps. */
static void test_garbage(void **state)
{
	static const char alphabet[] = " \t\n\n\n()[]:/0123456789abcdefx_+->;#\r\x80\xff";
	char *text = malloc(1 << 16), out[1 << 16];
	unsigned seed = 12345;

	(void)state;
	assert_non_null(text);
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(round * 311) % (1 << 15);
		struct hs_error err = {0};
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245 + 12345;
			text[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		text[n] = '\0';
		assert_int_equal(run(text, (size_t)round % 9, NULL, out, sizeof(out), NULL, &err), 0);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_forms),
		cmocka_unit_test(test_frame_forms),
		cmocka_unit_test(test_inline_parts),
		cmocka_unit_test(test_samples_and_events),
		cmocka_unit_test(test_sample_rules),
		cmocka_unit_test(test_srcline),
		cmocka_unit_test(test_srcline_hook),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_frame_ids),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
