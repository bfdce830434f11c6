/* Unit tests for what record --push decides on its own (src/push/): which labels a store takes,
 * what service a process belongs to, and the grouping of a profile's processes by service
 * (one series each, with -a). The sending itself is tested end to end against a receiver
 * (tests/e2e/record-push.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "push/push.h"
#include "push/service.h"

static void test_labels(void **state)
{
	static const char *const good[] = {"env=prod", "_x=1", "a.b_c=d-e/f:g", "region=us-west-1"};
	static const char *const bad[] = {"", "=x", "env=", "env", "1env=x", "e nv=x", "env=a,b", "env=a}",
					  "env={", "env=a=b", "env=\"x\"", "env=a b", "env=a\tb"};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(good); i++)
		assert_true(hs_push_label_ok(good[i]));
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++)
		assert_false(hs_push_label_ok(bad[i]));
}

/* This process's service: what its cgroup or its name says, never empty, and fit for a series
 * name; a process that does not exist: the name given, made fit. */
static void test_service_of(void **state)
{
	char buf[128], comm[64] = {0};
	FILE *f = fopen("/proc/self/comm", "r");
	(void)state;

	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	hs_service_of(getpid(), "ignored", buf, sizeof(buf));
	assert_true(buf[0]);
	assert_int_equal(strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"), strlen(buf));
	hs_service_of(-1, "my app{1}", buf, sizeof(buf));
	assert_string_equal(buf, "my_app_1_");
	hs_service_of(-1, "", buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
}

static void test_service_of_cgroup(void **state)
{
	static const struct {
		const char *path, *want; /* NULL: none */
	} cases[] = {
		{"/system.slice/nginx.service", "nginx"},
		{"/system.slice/getty@tty1.service", "getty"},
		{"/system.slice/docker-0123456789abcdef0123.scope", "docker-0123456789ab"},
		{"/kubepods.slice/kubepods-pod1.slice/cri-containerd-fedcba9876543210ff.scope", "cri-containerd-fedcba987654"},
		{"/machine.slice/libpod-aabbccddeeff00112233.scope", "libpod-aabbccddeeff"},
		{"/docker/0123456789abcdef0123", "docker-0123456789ab"},
		{"/user.slice/user-0.slice/session-3.scope", NULL},
		{"/", NULL},
		{"/system.slice/docker-short.scope", NULL},
	};
	char buf[128];
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		bool found = hs_service_of_cgroup(cases[i].path, buf, sizeof(buf));
		assert_true(found == (cases[i].want != NULL));
		if (found)
			assert_string_equal(buf, cases[i].want);
	}
}

static void test_group(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_service_cache c = {0};
	struct hs_service_groups g;
	int64_t one = 1;
	uint32_t fn, loc, st;
	(void)state;

	hs_profile_add_type(p, "samples", "count");
	fn = hs_profile_function(p, hs_profile_intern_str(p, "f"), 0, 0, 0);
	loc = hs_profile_location(p, 0, 0x10, HS_KIND_USER, &(struct hs_line){fn, 0}, 1);
	st = hs_profile_stack(p, &loc, 1);
	/* processes that do not exist, grouped by the names their samples carry: two under one */
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "alpha"), 999999999, 1, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "alpha"), 999999998, 2, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "beta"), 999999997, 3, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "beta"), 999999997, 4, 0, &one);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, 2);
	for (size_t i = 0; i < g.n; i++) {
		if (!strcmp(g.v[i].name, "alpha"))
			assert_int_equal(g.v[i].npids, 2);
		else {
			assert_string_equal(g.v[i].name, "beta");
			assert_int_equal(g.v[i].npids, 1);
		}
	}
	assert_int_equal(c.n, 3); /* the processes of this profile, kept for the next */
	hs_service_groups_release(&g);
	/* the next profile has one of them: the cache keeps just it */
	hs_profile_free(p);
	p = hs_profile_new();
	hs_profile_add_type(p, "samples", "count");
	fn = hs_profile_function(p, hs_profile_intern_str(p, "f"), 0, 0, 0);
	loc = hs_profile_location(p, 0, 0x10, HS_KIND_USER, &(struct hs_line){fn, 0}, 1);
	st = hs_profile_stack(p, &loc, 1);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "renamed"), 999999997, 3, 0, &one);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.v[0].name, "beta"); /* read once, kept */
	assert_int_equal(c.n, 1);
	hs_service_groups_release(&g);
	hs_service_cache_release(&c);
	hs_profile_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_service_of),
		cmocka_unit_test(test_service_of_cgroup),
		cmocka_unit_test(test_group),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
