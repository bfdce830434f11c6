/* Unit tests for what record --push decides on its own (src/push/): which labels a store takes,
 * what service a process belongs to, the grouping of a profile's processes by service (one
 * series each, with -a), the URL as messages show it, and the spool: which directories it
 * refuses, its files' names and order, what it leaves alone. The sending itself is tested end
 * to end against a receiver (tests/e2e/record-push.sh, record-push-faults.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "push/push.h"
#include "push/service.h"
#include "push/spool.h"
#include "util/error.h"

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

static void test_url_shown(void **state)
{
	static const struct {
		const char *url, *want;
	} cases[] = {
		{"http://me:s3cret@store:4040/ingest", "http://***@store:4040/ingest"},
		{"https://me@store", "https://***@store"},
		{"http://store:4040/a@b?x=@", "http://store:4040/a@b?x=@"}, /* an @ past the host is no userinfo */
		{"http://a:b@c@store/", "http://***@store/"},
		{"http://store", "http://store"},
	};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		char *s = hs_push_url_shown(cases[i].url);
		assert_string_equal(s, cases[i].want);
		free(s);
	}
}

static void test_spool_names(void **state)
{
	int64_t from;
	uint64_t seq;
	bool tmp;
	char buf[64];
	struct hs_spool_entry e = {1795893455072618310LL, 42, 0};
	(void)state;

	hs_spool_name(&e, buf, sizeof(buf));
	assert_string_equal(buf, "01795893455072618310-0000000042.push");
	assert_true(hs_spool_parse_name(buf, &from, &seq, &tmp));
	assert_true(from == e.from && seq == 42 && !tmp);
	assert_true(hs_spool_parse_name("00000000000000000001-000007.push.tmp", &from, &seq, &tmp));
	assert_true(from == 1 && seq == 7 && tmp);
	assert_false(hs_spool_parse_name("x-1.push", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("1-2.push.old", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("1-.push", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("123456789012345678901-1.push", &from, &seq, &tmp)); /* 21 digits */
	assert_false(hs_spool_parse_name("99999999999999999999-1.push", &from, &seq, &tmp));  /* past int64 */
}

static struct hs_spool *spool_open_ok(const char *dir)
{
	struct hs_spool *sp = NULL;
	struct hs_error err = {0};

	if (hs_spool_open(&sp, dir, 1 << 20, &err))
		fail_msg("cannot open the spool: %s", err.detail);
	return sp;
}

static int spool_open_err(const char *dir, const char *want)
{
	struct hs_spool *sp = NULL;
	struct hs_error err = {0};
	int rc = hs_spool_open(&sp, dir, 1 << 20, &err);

	assert_true(rc < 0);
	assert_null(sp);
	if (!strstr(err.detail, want))
		fail_msg("'%s' does not say '%s'", err.detail, want);
	return rc;
}

/* Directories the spool refuses: a link, a file, someone else's, one others can write, one
 * another recording has; one it makes is 0700 */
static void test_spool_refused(void **state)
{
	char dir[256], path[300], link[300];
	struct hs_spool *sp, *sp2;
	struct stat st;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	snprintf(path, sizeof(path), "%s/spool", dir);
	umask(0);
	sp = spool_open_ok(path);
	umask(022);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	spool_open_err(path, "in use by another recording");
	hs_spool_close(sp);
	sp2 = spool_open_ok(path);
	hs_spool_close(sp2);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	spool_open_err(link, "is a symbolic link");
	assert_int_equal(chmod(path, 0777), 0);
	spool_open_err(path, "writable by others (mode 0777)");
	assert_int_equal(chmod(path, 0770), 0);
	spool_open_err(path, "writable by its group");
	assert_int_equal(chmod(path, 0755), 0);
	hs_spool_close(spool_open_ok(path)); /* others may read, not write */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(chmod(path, 0700), 0);
		spool_open_err(path, "belongs to uid 65534, not to this user (uid 0)");
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	hs_test_write_file(path, "x", 1);
	spool_open_err(path, "not a directory");
	hs_test_rmtree(dir);
}

static void put(struct hs_spool *sp, const char *series, int64_t from, const char *body)
{
	struct hs_spool_entry e;

	assert_int_equal(hs_spool_write(sp, series, from, from + 10, body, strlen(body), &e), 0);
	hs_spool_add(sp, &e);
}

/* Profiles come back oldest first by their period, whatever order their files were written
 * in; a file hotstack did not write is never read nor removed; a kill's temporary file is */
static void test_spool_files(void **state)
{
	char dir[256], path[600], body[64];
	struct hs_spool *sp;
	struct hs_spool_reader r;
	const struct hs_spool_entry *e;
	static const int64_t froms[] = {5000, 1000, 3000, 3000, 2000};
	static const char *const foreign[] = {
		"00000000000000000001-0000000001.push", /* not our format */
		"00000000000000000002-0000000002.push", /* ours, but grown past its size */
		"00000000000000000003-0000000003.push", /* a link to one of ours */
		"notes.push",                           /* not our name */
	};
	struct stat st;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	sp = spool_open_ok(dir);
	for (size_t i = 0; i < HS_ARRAY_SIZE(froms); i++) {
		snprintf(body, sizeof(body), "body %zu", i);
		put(sp, "svc{env=x}", froms[i], body);
	}
	hs_spool_close(sp);
	/* beside them: files not to touch, and a temporary file a kill left */
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[0]);
	hs_test_write_file(path, "HSPUSH9 1 2 3\nabc\n", 18);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[1]);
	hs_test_write_file(path, "HSPUSH2 2 3 1 1\nx\nyz", 20);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[2]);
	assert_int_equal(symlink("00000000000000000005-0000000009.push", path), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[3]);
	hs_test_write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/00000000000000000004-0000000004.push.tmp", dir);
	hs_test_write_file(path, "HSPU", 4);

	sp = spool_open_ok(dir);
	assert_int_equal(sp->stale, 1);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(sp->foreign, 4);
	assert_int_equal(hs_spool_count(sp), HS_ARRAY_SIZE(froms));
	/* oldest first: by period, then by the order of writing within one */
	for (int64_t last = 0, k = 0; (e = hs_spool_oldest(sp)); k++) {
		char got[64] = {0};
		assert_true(e->from >= last);
		last = e->from;
		assert_int_equal(hs_spool_read_open(sp, e, &r), 0);
		assert_string_equal(r.series, "svc{env=x}");
		assert_true(r.from == e->from && r.until == e->from + 10);
		assert_true(r.body_len < sizeof(got));
		assert_int_equal(pread(r.fd, got, r.body_len, (off_t)r.body_off), (ssize_t)r.body_len);
		close(r.fd);
		if (e->from == 3000) /* two of one period: in the order written */
			assert_string_equal(got, k == 2 ? "body 2" : "body 3");
		assert_int_equal(hs_spool_remove(sp, 0, true), 0);
	}
	assert_true(sp->bytes == 0);
	hs_spool_close(sp);
	for (size_t i = 0; i < HS_ARRAY_SIZE(foreign); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, foreign[i]);
		assert_int_equal(lstat(path, &st), 0);
	}
	hs_test_rmtree(dir);
}

/* Full: the oldest go first, but for the one being sent */
static void test_spool_room(void **state)
{
	char dir[256];
	struct hs_spool *sp;
	struct hs_error err = {0};
	uint64_t one;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	assert_int_equal(hs_spool_open(&sp, dir, 1000, &err), 0);
	for (int i = 0; i < 4; i++)
		put(sp, "s{}", 1000 * (i + 1), "0123456789012345678901234567890123456789");
	one = hs_spool_oldest(sp)->size;
	assert_int_equal(hs_spool_make_room(sp, 1000 - 2 * one, 1), 2); /* room for two more */
	assert_int_equal(hs_spool_count(sp), 2);
	assert_true(hs_spool_oldest(sp)->from == 1000); /* the one being sent */
	assert_int_equal(hs_spool_remove(sp, 0, true), 0);
	assert_true(hs_spool_oldest(sp)->from == 4000);
	hs_spool_close(sp);
	/* only the one left is on disk */
	assert_int_equal(hs_spool_open(&sp, dir, 1000, &err), 0);
	assert_int_equal(hs_spool_count(sp), 1);
	assert_true(hs_spool_oldest(sp)->from == 4000);
	hs_spool_close(sp);
	hs_test_rmtree(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_service_of),
		cmocka_unit_test(test_service_of_cgroup),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_url_shown),
		cmocka_unit_test(test_spool_names),
		cmocka_unit_test(test_spool_refused),
		cmocka_unit_test(test_spool_files),
		cmocka_unit_test(test_spool_room),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
