/* The viewers' timeline formats: the per-thread timeline they share (spans, thread order,
 * untimed profiles), the Firefox Profiler's processed profile and Chrome's trace events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "output/writers.h"

/* samples (count), cpu (ns), off-cpu (ns); a period of 1 ms of cpu-clock */
static struct hs_profile *new_profile(void)
{
	struct hs_profile *p = hs_profile_new();

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	hs_profile_add_type(p, "off-cpu", "nanoseconds");
	p->period_type = (struct hs_value_type){hs_profile_intern_str(p, "cpu"), hs_profile_intern_str(p, "nanoseconds")};
	p->period = 1000000;
	return p;
}

/* A sample of "outer;inner" (user code of /usr/bin/app; "name_[k]" kernel) at time t; off:
 * an off-CPU period of that many ns instead of an on-CPU sample. */
static void add(struct hs_profile *p, const char *comm, int32_t pid, int32_t tid, uint64_t t, const char *stack,
		int64_t off)
{
	struct hs_mapping m = {0x1000, 0x9000, 0, hs_profile_intern_str(p, "/usr/bin/app"), 0, HS_KIND_USER, 0};
	uint32_t map = hs_profile_mapping(p, &m), locs[16];
	char *copy = strdup(stack), *save = NULL;
	int64_t vals[3] = {off ? 0 : 1, off ? 0 : 1000000, off};
	size_t n = 0;

	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		size_t len = strlen(f);
		bool kernel = len > 4 && !strcmp(f + len - 4, "_[k]");
		struct hs_line ln = {hs_profile_function(p, hs_profile_intern(p, f, kernel ? len - 4 : len), 0,
							 hs_profile_intern_str(p, "app.c"), 10),
				     20 + (int64_t)n};
		locs[n] = hs_profile_location(p, kernel ? 0 : map, 0x1000 + n, kernel ? HS_KIND_KERNEL : HS_KIND_USER, &ln, 1);
		n++;
	}
	/* leaf first */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t x = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = x;
	}
	hs_profile_add_sample(p, hs_profile_stack(p, locs, (uint32_t)n), hs_profile_intern_str(p, comm), pid, tid, t, vals);
	free(copy);
}

static void time_is(uint64_t ns, uint64_t unit, const char *want)
{
	struct hs_strbuf sb = {0};

	hs_tl_add_time(&sb, ns, unit);
	assert_string_equal(hs_strbuf_str(&sb), want);
	hs_strbuf_release(&sb);
}

static void test_times(void **state)
{
	(void)state;
	/* the formats by extension: the longest that ends a name */
	assert_ptr_equal(hs_format_from_path("a.json.gz"), hs_format_from_name("firefox"));
	assert_ptr_equal(hs_format_from_path("a.firefox.json"), hs_format_from_name("firefox"));
	assert_ptr_equal(hs_format_from_path("a.trace.json"), hs_format_from_name("chrome"));
	assert_ptr_equal(hs_format_from_path("a.trace.json.gz"), hs_format_from_name("chrome"));
	assert_ptr_equal(hs_format_from_path("a.json"), hs_format_from_name("json"));
	/* a format asked for gzipped that it is not written as: none, not the other .gz format */
	assert_null(hs_format_from_path("a.speedscope.json.gz"));
	assert_null(hs_format_from_path("a.otlp.pb.gz"));
	assert_ptr_equal(hs_format_from_path("a.pb.gz"), hs_format_from_name("pprof"));
	assert_int_equal(hs_format_from_name("chrome")->times, HS_TIMES_ORDER);
	time_is(0, 1000000, "0");
	time_is(1500000, 1000000, "1.5");
	time_is(2000000, 1000000, "2");
	time_is(1001001, 1000000, "1.001001");
	time_is(1, 1000, "0.001");
	time_is(12345678901234ull, 1000, "12345678901.234");
}

/* Spans: an on-CPU sample lasts until the thread's next, at most an interval; off-CPU periods
 * as long as they were; the main thread first; untimed samples end to end. */
static void test_spans(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	struct hs_timeline t;

	(void)state;
	add(p, "worker", 100, 101, 5000000, "start;work", 0);
	add(p, "app", 100, 100, 1000000, "main;a", 0);
	add(p, "app", 100, 100, 1500000, "main;a", 0);
	add(p, "app", 100, 100, 2000000, "main;wait;schedule_[k]", 3000000);
	add(p, "app", 100, 100, 6000000, "main;b", 0);
	hs_timeline_build(&t, p, &o);
	assert_true(t.timed);
	assert_int_equal(t.interval, 1000000);
	assert_int_equal(t.t0, 1000000);
	assert_int_equal(t.cpu_ix, 1);
	assert_int_equal(t.off_ix, 2);
	assert_int_equal(t.threads.n, 2);
	assert_int_equal(t.threads.v[0].tid, 100);
	assert_string_equal(hs_profile_str(p, t.threads.v[1].name), "worker");
	assert_string_equal(hs_profile_str(p, t.threads.v[1].process), "app");
	assert_int_equal(t.threads.v[0].spans.n, 4);
	assert_int_equal(t.threads.v[0].spans.v[0].end, 500000);
	assert_int_equal(t.threads.v[0].spans.v[1].end, 1000000);
	assert_true(t.threads.v[0].spans.v[2].off_cpu);
	assert_int_equal(t.threads.v[0].spans.v[2].end, 4000000);
	assert_int_equal(t.threads.v[0].spans.v[3].end, 6000000);
	assert_int_equal(t.end, 6000000);
	assert_int_equal(t.threads.v[0].weight, 3);
	hs_timeline_release(&t);
	hs_profile_free(p);

	/* no times: laid end to end, each its count of intervals */
	p = new_profile();
	add(p, "app", 7, 7, 0, "main;a", 0);
	add(p, "app", 7, 7, 0, "main;a", 0);
	add(p, "app", 7, 7, 0, "main;b", 0);
	hs_timeline_build(&t, p, &o);
	assert_false(t.timed);
	assert_int_equal(t.threads.n, 1);
	assert_int_equal(t.threads.v[0].spans.n, 2);
	assert_int_equal(t.threads.v[0].spans.v[0].end, 2000000);
	assert_int_equal(t.threads.v[0].spans.v[1].start, 2000000);
	assert_int_equal(t.threads.v[0].spans.v[1].end, 3000000);
	hs_timeline_release(&t);
	hs_profile_free(p);
}

static void test_firefox(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	add(p, "app", 100, 100, 1000000, "main;a", 0);
	add(p, "app", 100, 100, 1500000, "main;a", 0);
	add(p, "app", 100, 100, 2000000, "main;wait;schedule_[k]", 3000000);
	add(p, "worker \"w\"", 100, 101, 1200000, "start;work", 0);
	out = hs_test_write_format(p, "firefox", &o);
	assert_non_null(strstr(out, "\"preprocessedProfileVersion\":70,"));
	assert_non_null(strstr(out, "\"interval\":1,"));
	assert_non_null(strstr(out, "\"threadCPUDelta\":\"ns\""));
	/* the main thread first, its samples' times in ms from the first sample, CPU deltas in ns */
	assert_non_null(strstr(out, "\"name\":\"app\",\"processName\":\"app\",\"isMainThread\":true,\"pid\":\"100\","
				    "\"tid\":100,\"showMarkersInTimeline\":true"));
	assert_non_null(strstr(out, "\"time\":[0,0.5],\"weight\":null,\"threadCPUDelta\":[1000000,1000000]"));
	assert_non_null(strstr(out, "\"name\":\"worker \\\"w\\\"\",\"processName\":\"app\",\"isMainThread\":false"));
	/* the off-CPU period: a marker from 1 to 4 ms, its cause the stack it blocked in */
	assert_non_null(strstr(out, "\"startTime\":[1],\"endTime\":[4],\"phase\":[1],\"category\":[10],"
				    "\"data\":[{\"type\":\"OffCPU\",\"blockedIn\":\"wait\",\"cause\":{\"time\":1,"));
	/* categories by kind: schedule's frame is the kernel's (2), main's native (1) */
	assert_non_null(strstr(out, "{\"name\":\"Kernel\",\"color\":\"orange\""));
	assert_non_null(strstr(out, "\"category\":[1,1,1,2,1,1]"));
	assert_non_null(strstr(out, "\"libs\":[{\"arch\":\"\",\"name\":\"app\",\"path\":\"/usr/bin/app\""));
	free(out);
	hs_profile_free(p);
}

static void test_chrome(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	add(p, "app", 100, 100, 1000000, "main;a", 0);
	add(p, "app", 100, 100, 1500000, "main;b", 0);
	add(p, "app", 100, 100, 2500000, "main;wait", 1000000);
	add(p, "app", 100, 100, 9000000, "main;b", 0);
	out = hs_test_write_format(p, "chrome", &o);
	assert_non_null(strstr(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,\"args\":{\"name\":\"app\"}}"));
	assert_non_null(strstr(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":100,"));
	/* main stays open over the samples that follow each other (each lasts until the next, at
	 * most an interval), the off-CPU period included, its callees changing under it */
	assert_non_null(strstr(out, "\"name\":\"main\",\"cat\":\"native\",\"pid\":100,\"tid\":100,\"ts\":0,\"dur\":2500,"
				    "\"args\":{\"module\":\"/usr/bin/app\",\"file\":\"app.c\"}}"));
	assert_non_null(strstr(out, "\"name\":\"a\",\"cat\":\"native\",\"pid\":100,\"tid\":100,\"ts\":0,\"dur\":500,"));
	assert_non_null(strstr(out, "\"name\":\"b\",\"cat\":\"native\",\"pid\":100,\"tid\":100,\"ts\":500,\"dur\":1000,"));
	assert_non_null(strstr(out, "\"name\":\"wait\",\"cat\":\"native\",\"pid\":100,\"tid\":100,\"ts\":1500,\"dur\":1000,"));
	assert_non_null(strstr(out, "\"name\":\"[off-CPU]\",\"cat\":\"off-cpu\",\"pid\":100,\"tid\":100,\"ts\":1500,\"dur\":1000,"));
	/* after a gap (not sampled), main anew */
	assert_non_null(strstr(out, "\"name\":\"main\",\"cat\":\"native\",\"pid\":100,\"tid\":100,\"ts\":8000,\"dur\":1000,"));
	free(out);
	hs_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_firefox),
		cmocka_unit_test(test_chrome),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
