/* Unit tests for the profile IR and the folded stacks writer and reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include <zlib.h>

#include "output/output.h"
#include "profile/folded-read.h"
#include "profile/load.h"
#include "profile/pprof-read.h"
#include "profile/profile.h"
#include "util/strbuf.h"

static uint32_t loc(struct hs_profile *p, const char *name, uint8_t kind)
{
	uint32_t n = hs_profile_intern_str(p, name);
	struct hs_line ln = {hs_profile_function(p, n, n, 0, 0), 0};
	return hs_profile_location(p, 0, 0, kind, &ln, 1);
}

static void test_intern(void **state)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t a, b, c;

	(void)state;
	a = hs_profile_intern_str(p, "main");
	b = hs_profile_intern_str(p, "leaf");
	c = hs_profile_intern(p, "mainx", 4);
	assert_int_not_equal(a, b);
	assert_int_equal(a, c);
	assert_int_equal(hs_profile_intern_str(p, ""), 0);
	assert_string_equal(hs_profile_str(p, b), "leaf");
	assert_int_equal(loc(p, "f", HS_KIND_USER), loc(p, "f", HS_KIND_USER));
	assert_int_not_equal(loc(p, "f", HS_KIND_USER), loc(p, "f", HS_KIND_KERNEL));
	hs_profile_free(p);
}

/* --value TYPE: the index of a type, or the names there are to say so. */
static void test_value_index(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_strbuf have = {0};
	int i = -7;

	(void)state;
	assert_int_equal(hs_profile_value_index(p, "samples", &i, &have), -ENOENT);
	assert_string_equal(hs_strbuf_str(&have), "none");
	assert_int_equal(i, -7);
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	assert_int_equal(hs_profile_value_index(p, "cpu", &i, NULL), 0);
	assert_int_equal(i, 1);
	hs_strbuf_reset(&have);
	assert_int_equal(hs_profile_value_index(p, "wall", &i, &have), -ENOENT);
	assert_string_equal(hs_strbuf_str(&have), "samples, cpu");
	assert_int_equal(hs_profile_value_index(p, "wall", &i, NULL), -ENOENT);
	assert_int_equal(i, 1);
	hs_strbuf_release(&have);
	hs_profile_free(p);
}

static void test_samples_aggregate(void **state)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t l[3], s1, s2;
	int64_t v[2] = {1, 1000};

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	l[0] = loc(p, "leaf", HS_KIND_USER);
	l[1] = loc(p, "a", HS_KIND_USER);
	l[2] = loc(p, "main", HS_KIND_USER);
	s1 = hs_profile_stack(p, l, 3);
	s2 = hs_profile_stack(p, l + 1, 2);
	assert_int_equal(s1, hs_profile_stack(p, l, 3));
	assert_int_not_equal(s1, s2);
	for (int i = 0; i < 5; i++)
		hs_profile_add_sample(p, s1, hs_profile_intern_str(p, "demo"), 10, 11, 0, v);
	hs_profile_add_sample(p, s1, hs_profile_intern_str(p, "demo"), 10, 12, 0, v);
	hs_profile_add_sample(p, s2, hs_profile_intern_str(p, "demo"), 10, 11, 0, v);
	assert_int_equal(p->samples.n, 3);
	assert_int_equal(hs_profile_sample_values(p, 0)[0], 5);
	assert_int_equal(hs_profile_sample_values(p, 0)[1], 5000);
	assert_int_equal(hs_profile_total(p, 0), 7);
	assert_int_equal(hs_profile_find_type(p, "cpu"), 1);
	assert_int_equal(hs_profile_find_type(p, "nope"), -1);
	hs_profile_free(p);
}

static const char folded_in[] = "demo;main;a;b;leaf 10\n"
				"demo;main;c;leaf 5\n"
				"demo;main;c;leaf 2\n"
				"my prog;main;sys_write_[k];do_it_[k] 3\n"
				"java;Interpreter_[j];foo;bar_[i] 4\n";

static void test_folded_round_trip(void **state)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	assert_int_equal(hs_folded_read(folded_in, sizeof(folded_in) - 1, &p, &err), 0);
	assert_int_equal(hs_profile_total(p, 0), 24);
	o.annotate_inline = true;
	out = hs_test_write_format(p, "folded", &o);
	/* merged, sorted, annotations kept, the space in a command name made an underscore */
	assert_string_equal(out, "demo;main;a;b;leaf 10\n"
				 "demo;main;c;leaf 7\n"
				 "java;Interpreter_[j];foo;bar_[i] 4\n"
				 "my_prog;main;sys_write_[k];do_it_[k] 3\n");
	free(out);
	/* without --inline-annotate the inlined frame is a plain frame */
	o.annotate_inline = false;
	out = hs_test_write_format(p, "folded", &o);
	assert_non_null(strstr(out, "java;Interpreter_[j];foo;bar 4\n"));
	free(out);
	hs_profile_free(p);
}

static void test_folded_inline_structure(void **state)
{
	static const char in[] = "t;main;foo;bar_[i];baz_[i];leaf 1\n";
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	const struct hs_location *l;

	(void)state;
	assert_int_equal(hs_folded_read(in, sizeof(in) - 1, &p, &err), 0);
	/* main, foo(+bar+baz inlined), leaf: three locations */
	assert_int_equal(p->stacks.v[1].nlocs, 3);
	l = &p->locations.v[hs_profile_stack_locs(p, 1)[1]];
	assert_int_equal(l->nlines, 3);
	/* innermost first */
	assert_string_equal(hs_profile_str(p, p->functions.v[p->lines.v[l->line0].function].name), "baz");
	assert_string_equal(hs_profile_location_name(p, hs_profile_stack_locs(p, 1)[1]), "foo");
	hs_profile_free(p);
}

static void test_folded_bad_input(void **state)
{
	static const char bad[] = "a;b 1\nno count here\n";
	struct hs_profile *p = NULL;
	struct hs_error err = {0};

	(void)state;
	assert_int_equal(hs_folded_read(bad, sizeof(bad) - 1, &p, &err), -EBADMSG);
	assert_null(p);
	assert_int_equal(err.offset, 6);
	assert_non_null(strstr(err.detail, "line 2"));
	assert_true(hs_folded_sniff(folded_in, sizeof(folded_in) - 1));
	assert_false(hs_folded_sniff(bad, sizeof(bad) - 1));
	assert_false(hs_folded_sniff("\x1f\x8b\x08", 3));
}

static void test_folded_roots(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_output_opts o = {0};
	uint32_t l = loc(p, "main", HS_KIND_USER), s;
	int64_t v = 1;
	char *out;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	s = hs_profile_stack(p, &l, 1);
	hs_profile_add_sample(p, s, hs_profile_intern_str(p, "w"), 7, 8, 0, &v);
	hs_profile_add_sample(p, s, hs_profile_intern_str(p, "w"), 7, 9, 0, &v);
	out = hs_test_write_format(p, "folded", &o);
	assert_string_equal(out, "w;main 2\n");
	free(out);
	o.root_pid = true;
	out = hs_test_write_format(p, "folded", &o);
	assert_string_equal(out, "w-7;main 2\n");
	free(out);
	o.root_tid = true;
	out = hs_test_write_format(p, "folded", &o);
	assert_string_equal(out, "w-7/8;main 1\nw-7/9;main 1\n");
	free(out);
	hs_profile_free(p);
}

/* The cap on distinct stacks: past it, new stacks become the one "[too many stacks]" stack,
 * counted; stacks already there keep their ids and every sample still counts. */
static void test_stack_cap(void **state)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t l[6], ids[6], comm;
	int64_t v = 1;
	char *out;

	(void)state;
	p->max_stacks = 4; /* the reserved entry and three stacks */
	hs_profile_add_type(p, "samples", "count");
	comm = hs_profile_intern_str(p, "demo");
	l[0] = loc(p, "main", HS_KIND_USER);
	for (int i = 1; i < 6; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		l[i] = loc(p, name, HS_KIND_USER);
	}
	for (int i = 1; i < 6; i++) {
		uint32_t st[2] = {l[i], l[0]};
		ids[i] = hs_profile_stack(p, st, 2);
		hs_profile_add_sample(p, ids[i], comm, 1, 1, 0, &v);
	}
	assert_int_not_equal(ids[1], ids[2]);
	assert_int_not_equal(ids[2], ids[3]);
	assert_int_equal(ids[4], ids[5]);
	assert_int_equal(ids[4], p->over_cap_stack);
	assert_int_equal(p->stacks_over_cap, 2);
	{
		uint32_t st[2] = {l[2], l[0]};
		assert_int_equal(hs_profile_stack(p, st, 2), ids[2]);
	}
	assert_int_equal(hs_profile_total(p, 0), 5);
	out = hs_test_write_format(p, "folded", &(struct hs_output_opts){0});
	assert_string_equal(out, "demo;" HS_PROFILE_OVER_CAP_NAME " 2\n"
				 "demo;main;f1 1\n"
				 "demo;main;f2 1\n"
				 "demo;main;f3 1\n");
	free(out);
	hs_profile_free(p);
}

/* Counts that are no sample counts are named as such, by line; a count up to INT64_MAX is one. */
static void test_folded_count_messages(void **state)
{
	static const char neg[] = "main;a 1\nmain;b 2\nmain;c -5\n";
	static const char big[] = "main;a 1\nmain;b 9223372036854775808\n";
	static const char frac[] = "main;a 1.5\n";
	static const char max[] = "main;a 4611686018427387904\nmain;b 9223372036854775807\n";
	struct hs_profile *p = NULL;
	struct hs_error err = {0};

	(void)state;
	/* each is recognised as folded text, so that the reader can say what is wrong */
	assert_true(hs_folded_sniff(neg, sizeof(neg) - 1));
	assert_true(hs_folded_sniff(big, sizeof(big) - 1));
	assert_int_equal(hs_folded_read(neg, sizeof(neg) - 1, &p, &err), -EBADMSG);
	assert_string_equal(err.detail, "line 3: count '-5' is not a whole number of samples");
	assert_int_equal(err.offset, 25);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_folded_read(big, sizeof(big) - 1, &p, &err), -EBADMSG);
	assert_string_equal(err.detail, "line 2: count 9223372036854775808 is too large (more than 9223372036854775807)");
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_folded_read(frac, sizeof(frac) - 1, &p, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "count '1.5' is not a whole number"));
	assert_null(p);
	/* 2^62 and INT64_MAX are counts; their sum is held at INT64_MAX */
	assert_int_equal(hs_folded_read(max, sizeof(max) - 1, &p, &err), 0);
	assert_true(hs_profile_total(p, 0) == INT64_MAX);
	assert_true(hs_profile_sums_saturate(p, 0));
	hs_profile_free(p);
}

/* A reader handing out a few bytes at a time: lines cross every read boundary. */
struct drip {
	const char *s;
	size_t len, pos, step;
};

static ssize_t drip_read(void *ctx, void *buf, size_t n)
{
	struct drip *d = ctx;

	n = HS_MIN(HS_MIN(n, d->step), d->len - d->pos);
	memcpy(buf, d->s + d->pos, n);
	d->pos += n;
	if (d->step <= 5)
		d->step = d->step % 5 + 1;
	return (ssize_t)n;
}

static void test_folded_stream(void **state)
{
	struct drip d = {folded_in, sizeof(folded_in) - 1, 0, 1};
	struct hs_profile *p = NULL, *q = NULL;
	struct hs_error err = {0};
	struct hs_folded_stats st;
	char *a, *b;

	(void)state;
	assert_int_equal(hs_folded_read_stream(drip_read, &d, &p, &st, &err), 0);
	assert_int_equal(st.lines, 5);
	assert_int_equal(hs_folded_read(folded_in, sizeof(folded_in) - 1, &q, &err), 0);
	a = hs_test_write_format(p, "folded", &(struct hs_output_opts){.annotate_inline = true});
	b = hs_test_write_format(q, "folded", &(struct hs_output_opts){.annotate_inline = true});
	assert_string_equal(a, b);
	free(a);
	free(b);
	hs_profile_free(p);
	hs_profile_free(q);
}

/* A line of a million inlined frames (it took minutes when each frame was moved to the front):
 * cut at HS_FOLDED_MAX_FRAMES, and counted. */
static void test_folded_deep_line(void **state)
{
	size_t n = 1000000, len;
	char *text = malloc(n * 6 + 32), *o = text;
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	struct hs_folded_stats st;
	struct drip d;
	const struct hs_location *l;

	(void)state;
	o += sprintf(o, "main;");
	for (size_t i = 0; i < n; i++)
		o += sprintf(o, "f_[i];");
	o += sprintf(o, "leaf 3\n");
	len = (size_t)(o - text);
	d = (struct drip){text, len, 0, 1 << 20};
	assert_int_equal(hs_folded_read_stream(drip_read, &d, &p, &st, &err), 0);
	assert_int_equal(st.lines_cut, 1);
	assert_int_equal(hs_profile_total(p, 0), 3);
	/* main, and f with every inlined frame that fits */
	assert_int_equal(p->stacks.v[1].nlocs, 1);
	l = &p->locations.v[hs_profile_stack_locs(p, 1)[0]];
	assert_int_equal(l->nlines, HS_FOLDED_MAX_FRAMES);
	hs_profile_free(p);
	free(text);
}

/* A line longer than HS_FOLDED_MAX_LINE: an error, read no further than it. */
static ssize_t endless_read(void *ctx, void *buf, size_t n)
{
	size_t *total = ctx;

	memset(buf, 'x', n);
	*total += n;
	return (ssize_t)n;
}

static void test_folded_long_line(void **state)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	size_t total = 0;

	(void)state;
	assert_int_equal(hs_folded_read_stream(endless_read, &total, &p, NULL, &err), -EOVERFLOW);
	assert_non_null(strstr(err.detail, "line 1: longer than"));
	assert_true(total <= HS_FOLDED_MAX_LINE + (1 << 20));
}

/* gzip-compresses n bytes of head, then zeros more zeros, into a new file. */
static char *write_gz(const void *head, size_t n, size_t zeros)
{
	char *path = hs_test_temp_file("hs-load"), *zero = calloc(1, 1 << 20);
	gzFile gz = gzopen(path, "wb9");

	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, head, (unsigned)n), (int)n);
	while (zeros) {
		unsigned k = (unsigned)HS_MIN(zeros, (size_t)1 << 20);
		assert_int_equal(gzwrite(gz, zero, k), (int)k);
		zeros -= k;
	}
	assert_int_equal(gzclose(gz), Z_OK);
	free(zero);
	return path;
}

/* gzipped folded text is read as folded text (it was once taken for a broken pprof file). */
static void test_load_gzipped_folded(void **state)
{
	char *path = write_gz(folded_in, sizeof(folded_in) - 1, 0);
	struct hs_profile *p = NULL;
	struct hs_error err = {0};

	(void)state;
	assert_int_equal(hs_profile_load(path, &p, &err), 0);
	assert_int_equal(hs_profile_total(p, 0), 24);
	hs_profile_free(p);
	unlink(path);
	free(path);
}

/* What nothing recognises is HS_INPUT_UNKNOWN (the CLI says "not a profile hotstack reads"):
 * text, an ELF header, random bytes; a damaged file of a known kind is still that kind, so
 * that its reader's precise message is the one shown. */
static void test_input_recognised(void **state)
{
	static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n";
	static const uint8_t elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x3e, 0};
	/* a key that fits profile.proto (field 5, bytes) and a length past the end */
	static const uint8_t one_key[] = {0x2a, 0xbf, 0x78, 0x13, 0x99};
	/* a whole sample_type field (two varints), then a field cut short: a cut pprof */
	static const uint8_t cut_pprof[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x40, 0x01};
	uint8_t rnd[4096];
	unsigned seed = 14, unknown = 0;

	(void)state;
	assert_int_equal(hs_input_sniff(passwd, sizeof(passwd) - 1, false), HS_INPUT_UNKNOWN);
	assert_int_equal(hs_input_sniff(elf, sizeof(elf), false), HS_INPUT_UNKNOWN);
	assert_int_equal(hs_input_sniff(one_key, sizeof(one_key), false), HS_INPUT_UNKNOWN);
	/* the same bytes as the head of a longer input may be a large first field */
	assert_int_equal(hs_input_sniff(one_key, sizeof(one_key), true), HS_INPUT_PPROF);
	assert_int_equal(hs_input_sniff(cut_pprof, sizeof(cut_pprof), false), HS_INPUT_PPROF);
	assert_int_equal(hs_input_sniff("PERFILE2\x68\0\0\0", 12, false), HS_INPUT_PERF_DATA);
	assert_int_equal(hs_input_sniff("main;f 3\n", 9, false), HS_INPUT_FOLDED);
	for (int i = 0; i < 200; i++) {
		size_t n = 1 + (size_t)rand_r(&seed) % sizeof(rnd);
		for (size_t k = 0; k < n; k++)
			rnd[k] = (uint8_t)rand_r(&seed);
		rnd[0] = rnd[0] == 0x1f ? 0 : rnd[0]; /* not gzip's magic */
		unknown += hs_input_sniff(rnd, n, false) == HS_INPUT_UNKNOWN;
	}
	/* two keys in a row that fit, the first field whole: about 1 in 250 */
	assert_true(unknown >= 196);
}

/* The input the views read without a FILE: a pipe on standard input, else hotstack's, else
 * perf's, else none. */
static void test_default_input(void **state)
{
	char dir[] = "/tmp/hs-default-XXXXXX", cwd[4096];
	int saved = dup(STDIN_FILENO), null = open("/dev/null", O_RDONLY), pfd[2];
	FILE *f;

	(void)state;
	assert_true(saved >= 0 && null >= 0);
	assert_int_equal(dup2(null, STDIN_FILENO), STDIN_FILENO); /* whatever ran the test gave */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_null(hs_profile_default_input(false));
	assert_string_equal(hs_profile_default_input(true), "perf.data");
	assert_non_null(f = fopen("perf.data", "w"));
	fclose(f);
	assert_string_equal(hs_profile_default_input(false), "perf.data");
	assert_non_null(f = fopen("hotstack.pb.gz", "w"));
	fclose(f);
	assert_string_equal(hs_profile_default_input(false), "hotstack.pb.gz");
	assert_string_equal(hs_profile_default_input(true), "perf.data");
	/* a pipe on standard input comes first, as in perf report; a FIFO too */
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(dup2(pfd[0], STDIN_FILENO), STDIN_FILENO);
	assert_string_equal(hs_profile_default_input(false), "-");
	assert_string_equal(hs_profile_default_input(true), "-");
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(mkfifo("fifo", 0600), 0);
	pfd[0] = open("fifo", O_RDONLY | O_NONBLOCK);
	assert_true(pfd[0] >= 0);
	assert_int_equal(dup2(pfd[0], STDIN_FILENO), STDIN_FILENO);
	assert_string_equal(hs_profile_default_input(false), "-");
	close(pfd[0]);
	unlink("fifo");
	/* a regular file on standard input is not taken: perf report does not either */
	pfd[0] = open("perf.data", O_RDONLY);
	assert_true(pfd[0] >= 0);
	assert_int_equal(dup2(pfd[0], STDIN_FILENO), STDIN_FILENO);
	close(pfd[0]);
	assert_string_equal(hs_profile_default_input(false), "hotstack.pb.gz");
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	close(null);
	unlink("perf.data");
	unlink("hotstack.pb.gz");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

/* The profiles diff compares when given fewer than two: perf diff's rule, hotstack's pair first. */
static void test_diff_inputs(void **state)
{
	char dir[] = "/tmp/hs-diff-XXXXXX", cwd[4096], b[] = "b.pb.gz", a[] = "a.pb.gz", c[] = "c";
	char *two[] = {a, b, c}, *one[] = {b};
	const char *ab[2] = {NULL, NULL};
	struct hs_error err = {0};

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(hs_profile_diff_inputs(2, two, ab, &err), 0);
	assert_true(ab[0] == a && ab[1] == b);
	assert_int_equal(hs_profile_diff_inputs(3, two, ab, &err), -E2BIG);
	assert_string_equal(err.detail, "unexpected argument 'c'");
	/* nothing here: none to compare, one line that says what was looked for */
	ab[0] = ab[1] = NULL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_profile_diff_inputs(0, NULL, ab, &err), -ENOENT);
	assert_non_null(
		strstr(err.detail, "no hotstack.pb.gz.old and hotstack.pb.gz, nor perf.data.old and perf.data"));
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_profile_diff_inputs(1, one, ab, &err), -ENOENT);
	assert_non_null(strstr(err.detail, "to compare 'b.pb.gz' with"));
	assert_null(ab[0]);
	/* perf's pair, then hotstack's, which comes first; one .old alone is no pair */
	touch("perf.data.old");
	touch("perf.data");
	touch("hotstack.pb.gz.old");
	assert_int_equal(hs_profile_diff_inputs(0, NULL, ab, &err), 0);
	assert_string_equal(ab[0], "perf.data.old");
	assert_string_equal(ab[1], "perf.data");
	touch("hotstack.pb.gz");
	assert_int_equal(hs_profile_diff_inputs(0, NULL, ab, &err), 0);
	assert_string_equal(ab[0], "hotstack.pb.gz.old");
	assert_string_equal(ab[1], "hotstack.pb.gz");
	/* one: the new profile, against the old one here */
	assert_int_equal(hs_profile_diff_inputs(1, one, ab, &err), 0);
	assert_true(!strcmp(ab[0], "hotstack.pb.gz.old") && ab[1] == b);
	unlink("hotstack.pb.gz.old");
	assert_int_equal(hs_profile_diff_inputs(1, one, ab, &err), 0);
	assert_true(!strcmp(ab[0], "perf.data.old") && ab[1] == b);
	unlink("hotstack.pb.gz");
	unlink("perf.data.old");
	unlink("perf.data");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
}

/* What is no profile is refused from its first bytes, gzipped or not; a gzip bomb that starts as
 * a pprof file is refused once it expands past the ratio, not at the 2 GiB cap. */
static void test_load_refuses_early(void **state)
{
	/* string_table[0] = "", then a string of 512 MiB, its bytes zeros */
	static const uint8_t pprof_head[] = {0x32, 0x00, 0x32, 0x80, 0x80, 0x80, 0x80, 0x02};
	char *bomb = write_gz("", 0, (size_t)256 << 20), *pbomb = write_gz(pprof_head, sizeof(pprof_head), (size_t)256 << 20);
	char *zeros = hs_test_temp_file("hs-load");
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	FILE *f = fopen(zeros, "w");

	(void)state;
	assert_int_equal(ftruncate(fileno(f), 1 << 20), 0);
	fclose(f);
	assert_int_equal(hs_profile_load(zeros, &p, &err), -EPROTONOSUPPORT);
	assert_string_equal(err.detail, HS_NOT_A_PROFILE);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_profile_load(bomb, &p, &err), -EPROTONOSUPPORT);
	assert_non_null(strstr(err.detail, "gzip data holding no profile"));
	memset(&err, 0, sizeof(err));
	{
		/* a gzipped perf.data is named as such */
		char *gzdata = write_gz("PERFILE2\x68\0\0\0\0\0\0\0", 16, 4096);
		assert_int_equal(hs_profile_load(gzdata, &p, &err), -EPROTONOSUPPORT);
		assert_string_equal(err.detail, "a gzipped perf.data: decompress it first (gunzip)");
		unlink(gzdata);
		free(gzdata);
	}
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_profile_load(pbomb, &p, &err), -EFBIG);
	assert_non_null(strstr(err.detail, "a decompression bomb?"));
	/* stopped at the ratio: far short of the 256 MiB the file holds */
	assert_true(err.offset < (1 << 20));
	assert_null(p);
	unlink(bomb);
	unlink(pbomb);
	unlink(zeros);
	free(bomb);
	free(pbomb);
	free(zeros);
}

/* Whether text holds a negative number as writers print values: a '-' and a digit after a
 * space, '(', ':', '[' or ','. */
static bool has_negative_number(const char *text)
{
	for (const char *s = strchr(text, '-'); s; s = strchr(s + 1, '-'))
		if (s > text && strchr(" (:[,", s[-1]) && s[1] >= '0' && s[1] <= '9')
			return true;
	return false;
}

/* Values near INT64_MAX (a pprof may hold any int64): every sum a writer makes is held at
 * INT64_MAX instead of wrapping into a negative total, and the profile says so. */
static void test_sums_saturate(void **state)
{
	static const char *const formats[] = {"folded", "txt", "svg", "speedscope"};
	struct hs_profile *p = hs_profile_new();
	struct hs_output_opts o = {0};
	uint32_t l[2], s1, s2, comm;
	int64_t big = INT64_MAX - 50, small = 100, neg = INT64_MIN + 10;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	comm = hs_profile_intern_str(p, "demo");
	l[0] = loc(p, "leaf", HS_KIND_USER);
	l[1] = loc(p, "main", HS_KIND_USER);
	s1 = hs_profile_stack(p, l, 2);
	s2 = hs_profile_stack(p, l + 1, 1);
	hs_profile_add_sample(p, s1, comm, 1, 1, 0, &big);
	hs_profile_add_sample(p, s2, comm, 1, 1, 0, &big);
	assert_int_equal(p->values_saturated, 0);
	assert_true(hs_profile_sums_saturate(p, 0));
	assert_true(hs_profile_total(p, 0) == INT64_MAX);
	for (size_t f = 0; f < HS_ARRAY_SIZE(formats); f++) {
		char *out = hs_test_write_format(p, formats[f], &o);
		/* no total wrapped around into a negative number: not in a title, a weight, a row */
		if (!strcmp(formats[f], "svg")) {
			/* its script has "-1" in it: the figures are in the titles */
			for (const char *t = strstr(out, "<title>"); t; t = strstr(t + 1, "<title>"))
				assert_true(strstr(t, "(") < strstr(t, "</title>") && strstr(t, "(")[1] != '-');
		} else {
			assert_false(has_negative_number(out));
		}
		if (!strcmp(formats[f], "svg"))
			assert_non_null(strstr(out, "<title>all (9223372036854775807 samples, 100.00%)</title>"));
		if (!strcmp(formats[f], "speedscope"))
			assert_non_null(strstr(out, "\"endValue\":9223372036854775807,"));
		if (!strcmp(formats[f], "txt"))
			assert_non_null(strstr(out, "# 9223372036854775807 samples"));
		if (!strcmp(formats[f], "folded"))
			assert_string_equal(out, "demo;main 9223372036854775757\ndemo;main;leaf 9223372036854775757\n");
		free(out);
	}
	/* merged into one sample: the sample's own value is held, and counted */
	hs_profile_add_sample(p, s1, comm, 1, 1, 0, &small);
	assert_int_equal(p->values_saturated, 1);
	assert_true(hs_profile_sample_values(p, 0)[0] == INT64_MAX);
	hs_profile_free(p);

	/* the other end: negative values past INT64_MIN */
	p = hs_profile_new();
	hs_profile_add_type(p, "samples", "count");
	l[0] = loc(p, "leaf", HS_KIND_USER);
	s1 = hs_profile_stack(p, l, 1);
	hs_profile_add_sample(p, s1, 0, 1, 1, 0, &neg);
	assert_false(hs_profile_sums_saturate(p, 0));
	assert_int_equal(hs_profile_saturated_type(p), -1);
	hs_profile_add_sample(p, s1, 0, 1, 2, 0, &neg);
	assert_true(hs_profile_sums_saturate(p, 0));
	assert_int_equal(hs_profile_saturated_type(p), 0);
	assert_true(hs_profile_total(p, 0) == INT64_MIN);
	hs_profile_free(p);
}

/* The frame budget of a profile read from a file: a location of many inlined lines counts each
 * line; the stacks past the budget become the "[too many stacks]" stack, totals kept. */
static void test_frame_budget(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_line lines[100];
	uint32_t fat, l[3], st[64], ids[3];
	int64_t v = 1;

	(void)state;
	hs_profile_bound_frames(p, 0);
	assert_true(p->max_frames == HS_PROFILE_FRAMES_MIN);
	hs_profile_bound_frames(p, 1000);
	assert_true(p->max_frames == HS_PROFILE_FRAMES_MIN + 1000 * HS_PROFILE_FRAMES_PER_BYTE);
	p->max_frames = 1000;
	hs_profile_add_type(p, "samples", "count");
	for (int i = 0; i < 100; i++) {
		lines[i].function = hs_profile_function(p, hs_profile_intern_str(p, "inl"), 0, 0, 0);
		lines[i].line = i + 1;
	}
	fat = hs_profile_location(p, 0, 0x10, HS_KIND_USER, lines, 100);
	l[0] = loc(p, "a", HS_KIND_USER);
	l[1] = loc(p, "b", HS_KIND_USER);
	l[2] = loc(p, "c", HS_KIND_USER);
	/* 1 + 9 * 100 = 901 frames: within the budget */
	st[0] = l[0];
	for (int i = 1; i < 10; i++)
		st[i] = fat;
	ids[0] = hs_profile_stack(p, st, 10);
	assert_int_not_equal(ids[0], p->over_cap_stack);
	assert_true(p->frames == 901);
	/* another 901: over it */
	st[0] = l[1];
	ids[1] = hs_profile_stack(p, st, 10);
	assert_int_equal(ids[1], p->over_cap_stack);
	assert_true(p->frames_over_cap);
	/* a small one still fits */
	ids[2] = hs_profile_stack(p, &l[2], 1);
	assert_int_not_equal(ids[2], p->over_cap_stack);
	for (int i = 0; i < 3; i++)
		hs_profile_add_sample(p, ids[i], 0, 1, 1, 0, &v);
	assert_int_equal(hs_profile_total(p, 0), 3);
	assert_int_equal(p->stacks_over_cap, 1);
	assert_int_equal(p->samples_over_cap, 0);
	hs_profile_free(p);
}

/* The same budget for the frames of all samples: samples of one stack told apart by their times
 * each count its frames again (writers go through each), until the next one's would pass it;
 * those go to the "[too many stacks]" stack, their values kept, and are said. A sample added to
 * again costs nothing. */
static void test_sample_frame_budget(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_line lines[100];
	struct hs_strbuf notes = {0};
	uint32_t fat, stack, small;
	int64_t v = 1;
	size_t kept = 0;

	(void)state;
	p->max_frames = 1000;
	hs_profile_add_type(p, "samples", "count");
	for (int i = 0; i < 100; i++) {
		lines[i].function = hs_profile_function(p, hs_profile_intern_str(p, "inl"), 0, 0, 0);
		lines[i].line = i + 1;
	}
	fat = hs_profile_location(p, 0, 0x10, HS_KIND_USER, lines, 100);
	stack = hs_profile_stack(p, &fat, 1);
	small = loc(p, "a", HS_KIND_USER);
	small = hs_profile_stack(p, &small, 1);
	assert_int_equal(p->stacks.v[stack].frames, 100);
	/* a sample of 1 frame, then 20 of 100 frames each: 9 of them fit beside it */
	hs_profile_add_sample(p, small, 0, 1, 1, 1, &v);
	for (uint64_t t = 1; t <= 20; t++)
		hs_profile_add_sample(p, stack, 0, 1, 1, t, &v);
	hs_profile_add_sample(p, small, 0, 1, 1, 1, &v); /* the same sample: nothing more */
	for (size_t i = 0; i < p->samples.n; i++)
		kept += p->samples.v[i].stack == stack;
	assert_int_equal(kept, 9);
	assert_int_equal(p->samples_over_cap, 11);
	assert_int_equal(p->stacks_over_cap, 0);
	assert_int_equal(hs_profile_total(p, 0), 22);
	assert_true(p->sample_frames <= 1000 + 10);
	assert_int_equal(hs_profile_held_notes(p, &notes), 1);
	assert_non_null(strstr(hs_strbuf_str(&notes), "11 more samples are counted under one '[too many stacks]'"));
	hs_strbuf_release(&notes);
	hs_profile_free(p);
}

static void test_report(void **state)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	assert_int_equal(hs_folded_read(folded_in, sizeof(folded_in) - 1, &p, &err), 0);
	out = hs_test_write_format(p, "txt", &o);
	/* leaf is self 17 of 24 = 70.83%; main is total 20 of 24 = 83.33% */
	assert_non_null(strstr(out, "  70.83%           17   70.83%           17  leaf"));
	assert_non_null(strstr(out, "   0.00%            0   83.33%           20  main"));
	free(out);
	hs_profile_free(p);
}

static void add_leaf(struct hs_profile *p, uint32_t mapping, const char *name, int64_t n)
{
	uint32_t fn = hs_profile_intern_str(p, name);
	struct hs_line ln = {hs_profile_function(p, fn, fn, 0, 0), 0};
	uint32_t l = hs_profile_location(p, mapping, 0x1000 + (uint64_t)p->locations.n, HS_KIND_USER, &ln, 1);
	uint32_t locs[2] = {l, loc(p, "main", HS_KIND_USER)};

	hs_profile_add_sample(p, hs_profile_stack(p, locs, 2), 0, 1, 1, 0, &n);
}

/* Most user-space leaves without a name: the file most of them are in, over every mapping of it */
static void test_unnamed_share(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_mapping m = {0x1000, 0x2000, 0, 0, 0, HS_KIND_USER};
	struct hs_unnamed_share u;
	uint32_t lz1, lz2, libc, kern;
	int64_t n = 30;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	m.file = hs_profile_intern_str(p, "/usr/lib/liblzma.so.5");
	lz1 = hs_profile_mapping(p, &m);
	m.start = 0x5000;
	m.build_id = hs_profile_intern_str(p, "abcdef");
	lz2 = hs_profile_mapping(p, &m); /* another segment, or process, of the same file */
	m.file = hs_profile_intern_str(p, "/usr/lib/libc.so.6");
	m.build_id = 0;
	libc = hs_profile_mapping(p, &m);
	assert_false(hs_profile_unnamed_share(p, 0, &u));
	assert_int_equal(u.user, 0);
	add_leaf(p, lz1, "[liblzma.so.5]", 30);
	add_leaf(p, libc, "[libc.so.6]", 40);
	add_leaf(p, libc, "memcpy", 100);
	/* 70 of 170 without a name: not most */
	assert_false(hs_profile_unnamed_share(p, 0, &u));
	assert_int_equal(u.user, 170);
	assert_int_equal(u.unnamed, 70);
	add_leaf(p, lz2, "[liblzma.so.5]", 20);
	add_leaf(p, lz1, "[liblzma.so.5]", 20);
	/* 110 of 210: liblzma with 70 of them, over its two mappings; libc's 40 less */
	assert_true(hs_profile_unnamed_share(p, 0, &u));
	assert_int_equal(u.user, 210);
	assert_int_equal(u.unnamed, 110);
	assert_int_equal(u.top, 70);
	assert_string_equal(hs_profile_str(p, u.file), "/usr/lib/liblzma.so.5");
	assert_string_equal(hs_profile_str(p, u.build_id), "abcdef");
	assert_true(u.distro);
	assert_string_equal(u.debug_file, "/usr/lib/debug/.build-id/ab/cdef.debug");
	/* kernel leaves, [unknown] (no mapping) and pseudo-frames are not user space */
	m.file = hs_profile_intern_str(p, "[kernel.kallsyms]");
	m.kind = HS_KIND_KERNEL;
	kern = hs_profile_mapping(p, &m);
	{
		uint32_t locs[1] = {loc(p, "[unknown]", HS_KIND_PSEUDO)};
		hs_profile_add_sample(p, hs_profile_stack(p, locs, 1), 0, 1, 1, 0, &n);
		(void)kern;
	}
	assert_true(hs_profile_unnamed_share(p, 0, &u));
	assert_int_equal(u.user, 210);
	hs_profile_free(p);
}

/* Whose file it is (the distribution's: its debug package helps; one's own: its build), and its
 * build-id path only when there is a build-id */
static void test_unnamed_origin(void **state)
{
	static const struct {
		const char *file;
		bool distro;
	} cases[] = {
		{"/usr/lib/x86_64-linux-gnu/liblzma.so.5", true},
		{"/usr/bin/python3.11", true},
		{"/lib/x86_64-linux-gnu/libc.so.6", true},
		{"/lib64/ld-linux-x86-64.so.2", true},
		{"/libx32/libc.so.6", true},
		{"/usr/local/bin/spin", false},
		{"/tmp/review/spin-stripped", false},
		{"/home/me/build/libhot.so", false},
		{"/library/x.so", false},
		{"/lib", false},
		{"/usr", false},
		{"./a.out", false},
	};
	int64_t n = 10;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hs_profile *p = hs_profile_new();
		struct hs_mapping m = {0x1000, 0x2000, 0, 0, 0, HS_KIND_USER};
		struct hs_unnamed_share u;

		hs_profile_add_type(p, "samples", "count");
		m.file = hs_profile_intern_str(p, cases[i].file);
		add_leaf(p, hs_profile_mapping(p, &m), "[x]", n);
		assert_true(hs_profile_unnamed_share(p, 0, &u));
		if (u.distro != cases[i].distro)
			fail_msg("%s: distro %d, expected %d", cases[i].file, u.distro, cases[i].distro);
		assert_string_equal(u.debug_file, ""); /* no build-id: no path, never a placeholder */
		hs_profile_free(p);
	}
}

static void test_note_lost(void **state)
{
	struct hs_profile *p = hs_profile_new();

	(void)state;
	assert_string_equal(hs_profile_str(p, hs_profile_note_lost(p, 750, 250)), "lost 250 samples (25.0%)");
	assert_int_equal(p->comments.n, 1);
	assert_string_equal(hs_profile_str(p, p->comments.v[0]), "lost 250 samples (25.0%)");
	assert_string_equal(hs_profile_str(p, hs_profile_note_lost(p, 0, 0)), "lost 0 samples (0.0%)");
	/* all lost is said in words; nearly all never rounds up to 100% */
	assert_string_equal(hs_profile_str(p, hs_profile_note_lost(p, 0, 19466)), "lost all 19466 samples (100%)");
	assert_string_equal(hs_profile_str(p, hs_profile_note_lost(p, 1, 19838)), "lost 19838 samples (over 99.9%)");
	assert_string_equal(hs_profile_str(p, hs_profile_note_lost(p, 1, 999)), "lost 999 samples (99.9%)");
	hs_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_samples_aggregate),
		cmocka_unit_test(test_value_index),
		cmocka_unit_test(test_folded_round_trip),
		cmocka_unit_test(test_folded_inline_structure),
		cmocka_unit_test(test_folded_bad_input),
		cmocka_unit_test(test_folded_roots),
		cmocka_unit_test(test_folded_count_messages),
		cmocka_unit_test(test_folded_stream),
		cmocka_unit_test(test_folded_deep_line),
		cmocka_unit_test(test_folded_long_line),
		cmocka_unit_test(test_load_gzipped_folded),
		cmocka_unit_test(test_load_refuses_early),
		cmocka_unit_test(test_input_recognised),
		cmocka_unit_test(test_default_input),
		cmocka_unit_test(test_diff_inputs),
		cmocka_unit_test(test_stack_cap),
		cmocka_unit_test(test_sums_saturate),
		cmocka_unit_test(test_frame_budget),
		cmocka_unit_test(test_sample_frame_budget),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_unnamed_share),
		cmocka_unit_test(test_unnamed_origin),
		cmocka_unit_test(test_note_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
