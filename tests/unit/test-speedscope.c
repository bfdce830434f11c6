/* The speedscope reader (profile/speedscope-read.c) and the JSON reader under it
 * (format/json.c): sampled and evented profiles, units, hotstack's own files read back, and
 * malformed, hostile and cut-short files refused with one error each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "format/json.h"
#include "output/output.h"
#include "profile/profile.h"
#include "profile/speedscope-read.h"
#include "util/strbuf.h"

static struct hs_profile *read_ok(const char *text)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	int rc = hs_speedscope_read(text, strlen(text), strlen(text), &p, &err);

	if (rc)
		fail_msg("%d: %s", rc, err.detail);
	return p;
}

static int read_err(const char *text, size_t len, struct hs_error *err)
{
	struct hs_profile *p = NULL;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = hs_speedscope_read(text, len, len, &p, err);
	assert_null(p);
	return rc;
}

static char *folded(const struct hs_profile *p, int vi)
{
	struct hs_output_opts o = {0};

	o.value_index = vi;
	return hs_test_write_format(p, "folded", &o);
}

static void test_sampled(void **state)
{
	/* frames after the profiles, keys in any order, a unit converted, names escaped */
	static const char doc[] =
		"\xef\xbb\xbf{\"profiles\":[{\"weights\":[2,1.5,0.5],\"samples\":[[0,1],[0,2],[0,1]],\"unit\":"
		"\"milliseconds\","
		"\"type\":\"sampled\",\"name\":\"app (7/8)\",\"startValue\":0,\"endValue\":4,\"extra\":{\"a\":[1,{}]}},"
		"{\"type\":\"sampled\",\"name\":\"w\\u00e9\\ud83d\\ude00\",\"unit\":\"microseconds\",\"startValue\":0,"
		"\"endValue\":1,\"samples\":[[3]],\"weights\":[1000]}],"
		"\"shared\":{\"frames\":[{\"name\":\"main\",\"file\":\"/bin/app\"},{\"name\":\"\\u0061\\\"q\\\"\"},"
		"{\"name\":\"b\",\"file\":\"b.c\",\"line\":12,\"col\":3},{\"name\":\"x\"}]},"
		"\"name\":\"python3 app.py\",\"exporter\":\"x\",\"activeProfileIndex\":null,\"ok\":[true,false]}\n";
	struct hs_profile *p = read_ok(doc);
	struct hs_strbuf sb = {0};
	char *out;

	(void)state;
	assert_int_equal(p->types.n, 2);
	assert_string_equal(hs_profile_str(p, p->types.v[1].type), "time");
	assert_string_equal(hs_profile_str(p, p->types.v[1].unit), "nanoseconds");
	out = folded(p, 1);
	assert_string_equal(out, "app;main;a\"q\" 2500000\napp;main;b 1500000\nw\xc3\xa9\xf0\x9f\x98\x80;x 1000000\n");
	free(out);
	out = folded(p, 0);
	assert_string_equal(out, "app;main;a\"q\" 2\napp;main;b 1\nw\xc3\xa9\xf0\x9f\x98\x80;x 1\n");
	/* "comm (pid/tid)" is that thread; another name a thread without ids */
	assert_int_equal(p->samples.v[0].pid, 7);
	assert_int_equal(p->samples.v[0].tid, 8);
	assert_int_equal(p->samples.v[p->samples.n - 1].tid, -1);
	free(out);
	/* times kept, in order: flame charts can be drawn */
	assert_true(hs_profile_has_time(p));
	assert_string_equal(p->comments.n ? hs_profile_str(p, p->comments.v[0]) : "", "python3 app.py");
	hs_strbuf_release(&sb);
	hs_profile_free(p);
}

static void test_evented(void **state)
{
	static const char doc[] =
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":["
		"{\"name\":\"main\"},{\"name\":\"f\"},{\"name\":\"g\"}]},\"profiles\":[{\"type\":\"evented\",\"name\":"
		"\"t\","
		"\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":100,\"events\":["
		"{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"O\",\"frame\":1,\"at\":10},{\"type\":\"C\","
		"\"frame\":1,\"at\":30},"
		"{\"type\":\"O\",\"frame\":2,\"at\":30},{\"type\":\"C\",\"frame\":2,\"at\":35},{\"at\":90,\"frame\":0,"
		"\"type\":\"C\"},"
		"{\"type\":\"O\",\"frame\":1,\"at\":95}]}]}";
	struct hs_profile *p = read_ok(doc);
	char *out = folded(p, 1);

	(void)state;
	/* main alone 10 + 55, f 20, g 5, and f open till the end: 5 */
	assert_string_equal(out, "t;f 5\nt;main 65\nt;main;f 20\nt;main;g 5\n");
	free(out);
	hs_profile_free(p);

	/* unit none: the weights are the counts */
	p = read_ok("{\"profiles\":[{\"type\":\"sampled\",\"unit\":\"none\",\"name\":\"n\",\"samples\":[[0],[0]],"
		    "\"weights\":[3,4]}],\"shared\":{\"frames\":[{\"name\":\"m\"}]}}");
	assert_int_equal(p->types.n, 1);
	out = folded(p, 0);
	assert_string_equal(out, "n;m 7\n");
	free(out);
	hs_profile_free(p);
}

static void test_hotstack_round_trip(void **state)
{
	struct hs_profile *p = hs_profile_new(), *q;
	struct hs_output_opts o = {0};
	struct hs_line ln;
	uint32_t locs[2];
	int64_t v[2] = {1, 1000};
	char *json, *a, *b;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < 2; i++) {
		ln.function = hs_profile_function(p, hs_profile_intern_str(p, i ? "leaf" : "main"), 0, 0, 0);
		ln.line = 0;
		locs[1 - i] = hs_profile_location(p, 0, 0x1000 + (uint64_t)i, HS_KIND_USER, &ln, 1);
	}
	for (int t = 0; t < 6; t++)
		hs_profile_add_sample(p, hs_profile_stack(p, locs, 1 + (uint32_t)(t % 2)),
				      hs_profile_intern_str(p, "app"), 5, 5 + t % 3, 100 + (uint64_t)t, v);
	json = hs_test_write_format(p, "speedscope", &o);
	assert_int_equal(hs_speedscope_read(json, strlen(json), strlen(json), &q, NULL), 0);
	a = folded(p, 1);
	b = folded(q, 1);
	assert_string_equal(a, b);
	free(a);
	free(b);
	a = folded(p, 0);
	b = folded(q, 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(json);
	hs_profile_free(q);
	hs_profile_free(p);
}

static void test_malformed(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *msg;
	} cases[] = {
		{"", -ENODATA, "ends early"},
		{"{", -ENODATA, "ends early"},
		{"{\"profiles\":[}", -EBADMSG, "unexpected"},
		{"{\"profiles\":[],}", -EBADMSG, "a value expected"},
		{"{\"profiles\" []}", -EBADMSG, "':' expected"},
		{"{\"name\":\"a\x01\"}", -EBADMSG, "control character"},
		{"{\"name\":\"\\x\"}", -EBADMSG, "bad escape"},
		{"{\"name\":\"\\u12g4\"}", -EBADMSG, "\\u escape"},
		{"{\"name\":\"abc", -ENODATA, "ends early"},
		{"{} {}", -EBADMSG, "after the end"},
		{"[]", -EBADMSG, "an object expected"},
		{"{\"x\":tru}", -EBADMSG, "unexpected"},
		{"{\"x\":tr", -ENODATA, "ends early"},
		{"{\"x\":nul }", -EBADMSG, "unexpected"},
		{"{\"x\":-}", -EBADMSG, "bad number"},
		{"{\"x\":1e999999999999999999999999999999999999999999999999999999999999999999}", -EOVERFLOW,
		 "more than 63"},
		{"{\"profiles\":[{\"type\":\"flat\"}]}", -EOPNOTSUPP, "profile type 'flat'"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"unit\":\"parsecs\"}]}", -EOPNOTSUPP, "unknown unit"},
		{"{\"profiles\":[{\"name\":\"x\"}]}", -EBADMSG, "without its type"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[[0]],\"weights\":[]}]}", -EBADMSG,
		 "1 samples but 0 weights"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[[0]],\"weights\":[1]}]}", -EBADMSG,
		 "frame index 0 out of range"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[[1.5]],\"weights\":[1]}]}", -EBADMSG,
		 "not an index"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[[-1]],\"weights\":[1]}]}", -EBADMSG,
		 "not an index"},
		{"{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":\"sampled\",\"samples\":[[0]],"
		 "\"weights\":[-1]}]}",
		 -EBADMSG, "weight -1 out of range"},
		{"{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":\"sampled\",\"samples\":[[0]],"
		 "\"weights\":[1e300]}]}",
		 -EOVERFLOW, "out of range"},
		{"{\"shared\":{\"frames\":[{\"file\":\"a\"}]}}", -EBADMSG, "frame 0 has no name"},
		{"{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":\"evented\",\"events\":["
		 "{\"type\":\"O\",\"frame\":0,\"at\":5},{\"type\":\"C\",\"frame\":0,\"at\":1}]}]}",
		 -EBADMSG, "comes before"},
		{"{\"shared\":{\"frames\":[{\"name\":\"a\"},{\"name\":\"b\"}]},\"profiles\":[{\"type\":\"evented\","
		 "\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"C\",\"frame\":1,\"at\":1}]}]}",
		 -EBADMSG, "not the innermost"},
		{"{\"profiles\":[{\"type\":\"evented\",\"events\":[{\"type\":\"X\",\"frame\":0,\"at\":0}]}]}", -EBADMSG,
		 "not O or C"},
		{"{\"profiles\":[{\"type\":\"evented\",\"events\":[{\"type\":\"O\",\"at\":0}]}]}", -EBADMSG,
		 "without its type"},
		{"{\"profiles\":[{\"type\":\"sampled\",\"unit\":\"bytes\"},{\"type\":\"sampled\",\"unit\":\"seconds\"}]"
		 "}",
		 -EBADMSG, "different kinds"},
	};
	struct hs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = read_err(cases[i].text, strlen(cases[i].text), &err);
		if (rc != cases[i].code || !strstr(err.detail, cases[i].msg) || strchr(err.detail, '\n'))
			fail_msg("case %zu (%s): %d '%s'", i, cases[i].text, rc, err.detail);
	}
}

/* Nesting a million deep, as skipped and as read: one error, no recursion. */
static void test_deep_and_every_cut(void **state)
{
	size_t n = 1000000;
	char *deep = hs_xmalloc(2 * n + 16);
	struct hs_error err;
	static const char doc[] = "{\"shared\":{\"frames\":[{\"name\":\"m\",\"file\":\"f.c\",\"line\":3}]},"
				  "\"profiles\":[{\"type\":\"evented\","
				  "\"name\":\"t\",\"unit\":\"seconds\",\"startValue\":0,\"endValue\":2,\"events\":[{"
				  "\"type\":\"O\",\"frame\":0,"
				  "\"at\":0},{\"type\":\"C\",\"frame\":0,\"at\":1}]}],\"x\":[[{\"y\":\"\\\"\"}]]}";

	(void)state;
	memcpy(deep, "{\"x\":", 5);
	for (size_t i = 0; i < n; i++) /* not memset: gcc 12's -Warray-bounds takes deep + 5 for 0 bytes */
		deep[5 + i] = '[';
	memcpy(deep + 5 + n, "]", 2);
	assert_int_equal(read_err(deep, strlen(deep), &err), -EOVERFLOW);
	assert_non_null(strstr(err.detail, "nested deeper than 64"));
	memset(deep, '[', n);
	deep[0] = '{';
	assert_int_equal(read_err(deep, n, &err), -EBADMSG);
	free(deep);
	/* every prefix of a good file: an error, never a crash (run under ASan) */
	for (size_t len = 0; len < sizeof(doc) - 1; len++) {
		int rc = read_err(doc, len, &err);
		assert_true(rc == -ENODATA || rc == -EBADMSG);
		assert_true(err.detail[0]);
	}
	{
		struct hs_profile *p = read_ok(doc);
		char *out = folded(p, 1);
		assert_string_equal(out, "t;m 1000000000\n");
		free(out);
		hs_profile_free(p);
	}
}

/* Every byte of a good file replaced by each of a few bytes that matter to JSON: the reader
 * returns 0 or an error, and a profile only with 0. */
static void test_mutations(void **state)
{
	static const char doc[] =
		"{\"shared\":{\"frames\":[{\"name\":\"m\"},{\"name\":\"n\",\"file\":\"x\",\"line\":2}]},\"profiles\":[{"
		"\"type\":"
		"\"sampled\",\"name\":\"a (1/2)\",\"unit\":\"none\",\"samples\":[[0,1],[1]],\"weights\":[1,2]},"
		"{\"type\":\"evented\",\"name\":\"b\",\"unit\":\"none\",\"startValue\":0,\"endValue\":9,\"events\":["
		"{\"type\":\"O\",\"frame\":1,\"at\":1}]}]}";
	static const char subs[] = "{}[]\",:\\01-e9 ";
	char buf[sizeof(doc)];

	(void)state;
	for (size_t i = 0; i < sizeof(doc) - 1; i++)
		for (size_t k = 0; k < sizeof(subs) - 1; k++) {
			struct hs_profile *p = NULL;
			struct hs_error err = {0};
			int rc;

			memcpy(buf, doc, sizeof(doc));
			buf[i] = subs[k];
			rc = hs_speedscope_read(buf, sizeof(doc) - 1, sizeof(doc) - 1, &p, &err);
			assert_true(rc == 0 ? p != NULL : p == NULL && err.detail[0]);
			hs_profile_free(p);
		}
}

/* An evented profile 3000 frames deep, each frame opened and closed a unit apart: 6000 events
 * whose intervals' stacks hold 9 M frames in all, past what the file's size lets the profile
 * hold (HS_PROFILE_FRAMES_MIN plus 2 a byte). The samples past it are counted, on the over-cap
 * stack, and said; the others keep their whole stacks. */
static void test_evented_deep(void **state)
{
	const unsigned depth = 3000;
	struct hs_strbuf doc = {0}, notes = {0};
	struct hs_profile *p;
	int64_t deepest = 0;
	uint64_t total;

	(void)state;
	hs_strbuf_addf(&doc, "{\"shared\":{\"frames\":[{\"name\":\"f\"},{\"name\":\"g\"}]},\"profiles\":[{"
			     "\"type\":\"evented\",\"name\":\"t\",\"unit\":\"none\",\"startValue\":0,\"endValue\":%u,"
			     "\"events\":[",
		       2 * depth);
	for (unsigned i = 0; i < 2 * depth; i++)
		hs_strbuf_addf(&doc, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%u}", i ? "," : "", i < depth ? 'O' : 'C',
			       (i < depth ? i : 2 * depth - 1 - i) % 2, i);
	hs_strbuf_adds(&doc, "]}]}");
	p = read_ok(hs_strbuf_str(&doc));
	total = (uint64_t)hs_profile_total(p, 0);
	/* every interval counted, one sample each */
	assert_int_equal(total, 2 * depth - 1);
	assert_true(p->samples_over_cap > 0 && p->samples_over_cap < 2 * depth - 1);
	assert_int_equal(p->stacks_over_cap, 0);
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_stack *st = &p->stacks.v[p->samples.v[i].stack];
		if (p->samples.v[i].stack != p->over_cap_stack)
			deepest = HS_MAX(deepest, (int64_t)st->nlocs);
	}
	/* the first samples, until the frames ran out, with their whole stacks */
	assert_true(deepest > 2000 && deepest <= depth);
	assert_int_equal(hs_profile_held_notes(p, &notes), 1);
	assert_non_null(strstr(hs_strbuf_str(&notes), "the samples' stacks have more than"));
	hs_profile_free(p);
	hs_strbuf_release(&notes);
	hs_strbuf_release(&doc);
}

static void test_sniff(void **state)
{
	(void)state;
	assert_true(hs_speedscope_sniff(" \n{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"", 62));
	assert_true(hs_speedscope_sniff("{\"shared\":{},\"profiles\":[]}", 27));
	assert_false(hs_speedscope_sniff("{\"traceEvents\":[]}", 18));
	assert_false(hs_speedscope_sniff("main;a 1\n", 9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_evented),
		cmocka_unit_test(test_hotstack_round_trip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_deep_and_every_cut),
		cmocka_unit_test(test_evented_deep),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
