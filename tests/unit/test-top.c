/* Unit tests of what hotstack top counts (src/top/top-data.c): self and total per function,
 * kernel frames left out (their self value going to the user frame below them), the filter,
 * the sorts, rows per process and thread name and their filters, callers and callees, and the
 * share of stacks the unwinder could not finish. Profiles are read from folded text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

#include "profile/folded-read.h"
#include "top/top-data.h"
#include "util/error.h"

/* 105 samples: recursion in run, kernel frames above compute, a kernel-only sample, a stack
 * cut short by the unwinder. */
static const char folded[] = "app;main;run;compute 60\n"
			     "app;main;run;compute;sys_write_[k];copy_user_[k] 20\n"
			     "app;main;parse 10\n"
			     "app;main;run;run;compute 5\n"
			     "app;do_idle_[k] 5\n"
			     "app;[truncated: stack copy];leaf 5\n";

static struct hs_profile *load(void)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};

	assert_int_equal(hs_folded_read(folded, strlen(folded), &p, &err), 0);
	return p;
}

static const struct hs_top_fn *find(const struct hs_top_fns *fns, const char *name)
{
	for (size_t i = 0; i < fns->n; i++)
		if (!strcmp(fns->v[i].name, name))
			return &fns->v[i];
	return NULL;
}

static void test_self_total(void **state)
{
	struct hs_profile *p = load();
	struct hs_top_opts o = {.vi = hs_top_value_index(p)};
	struct hs_top_table t;
	const struct hs_top_fn *f;

	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.sum, 105);
	assert_non_null(f = find(&t.fns, "compute"));
	assert_int_equal(f->self, 65);
	assert_int_equal(f->total, 85);
	assert_int_equal(f->kind, HS_KIND_USER);
	/* recursion counts once a sample */
	assert_non_null(f = find(&t.fns, "run"));
	assert_int_equal(f->self, 0);
	assert_int_equal(f->total, 85);
	assert_non_null(f = find(&t.fns, "copy_user"));
	assert_int_equal(f->self, 20);
	assert_int_equal(f->kind, HS_KIND_KERNEL);
	assert_string_equal(hs_top_kind_mark(f->kind), "[k]");
	assert_non_null(f = find(&t.fns, "do_idle"));
	assert_int_equal(f->self, 5);
	/* by self: compute first, then copy_user */
	assert_string_equal(t.fns.v[0].name, "compute");
	assert_string_equal(t.fns.v[1].name, "copy_user");
	/* the stack cut short, and why */
	assert_int_equal(t.cut, 5);
	assert_non_null(t.cut_reason);
	assert_string_equal(t.cut_reason, "stack copy");
	hs_top_table_release(&t);
	hs_profile_free(p);
}

static void test_hide_kernel(void **state)
{
	struct hs_profile *p = load();
	struct hs_top_opts o = {.vi = hs_top_value_index(p), .hide_kernel = true};
	struct hs_top_table t;
	const struct hs_top_fn *f;

	hs_top_table_build(p, &o, &t);
	/* the kernel-only sample has nothing left to show */
	assert_int_equal(t.sum, 100);
	assert_null(find(&t.fns, "copy_user"));
	assert_null(find(&t.fns, "sys_write"));
	assert_null(find(&t.fns, "do_idle"));
	/* the time in the kernel is the caller's own now */
	assert_non_null(f = find(&t.fns, "compute"));
	assert_int_equal(f->self, 85);
	assert_int_equal(f->total, 85);
	for (size_t i = 0; i < t.fns.n; i++)
		assert_int_not_equal(t.fns.v[i].kind, HS_KIND_KERNEL);
	hs_top_table_release(&t);
	hs_profile_free(p);
}

static void test_filter_sort(void **state)
{
	struct hs_profile *p = load();
	struct hs_top_opts o = {.vi = hs_top_value_index(p), .filter = "COMP"};
	struct hs_top_table t;

	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.fns.n, 1);
	assert_string_equal(t.fns.v[0].name, "compute");
	assert_int_equal(t.sum, 105); /* percentages stay of everything */
	hs_top_table_release(&t);

	o.filter = "nothing-like-it";
	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.fns.n, 0);
	hs_top_table_release(&t);

	o.filter = "";
	o.sort = HS_TOP_SORT_TOTAL;
	hs_top_table_build(p, &o, &t);
	assert_string_equal(t.fns.v[0].name, "main"); /* in 95 samples */
	for (size_t i = 1; i < t.fns.n; i++)
		assert_true(t.fns.v[i - 1].total >= t.fns.v[i].total);
	hs_top_table_release(&t);
	o.sort = HS_TOP_SORT_SELF;
	hs_top_table_build(p, &o, &t);
	for (size_t i = 1; i < t.fns.n; i++)
		assert_true(t.fns.v[i - 1].self >= t.fns.v[i].self);
	hs_top_table_release(&t);
	hs_profile_free(p);
}

static void test_related(void **state)
{
	struct hs_profile *p = load();
	struct hs_top_opts o = {.vi = hs_top_value_index(p)};
	struct hs_top_related r;
	const struct hs_top_fn *f;

	hs_top_related_build(p, &o, &(const struct hs_top_fn){"compute", "", "app", -1, 0, 0, 0, 0}, &r);
	assert_int_equal(r.total, 85);
	assert_int_equal(r.callers.n, 1);
	assert_string_equal(r.callers.v[0].name, "run");
	assert_int_equal(r.callers.v[0].total, 85);
	assert_int_equal(r.callees.n, 1);
	assert_string_equal(r.callees.v[0].name, "sys_write");
	assert_int_equal(r.callees.v[0].total, 20);
	hs_top_related_release(&r);

	/* recursion: run calls itself, and each sample counts once for each */
	hs_top_related_build(p, &o, &(const struct hs_top_fn){"run", "", "app", -1, 0, 0, 0, 0}, &r);
	assert_non_null(f = find(&r.callers, "main"));
	assert_int_equal(f->total, 85);
	assert_non_null(f = find(&r.callers, "run"));
	assert_int_equal(f->total, 5);
	assert_string_equal(r.callees.v[0].name, "compute"); /* largest first */
	assert_int_equal(r.callees.v[0].total, 85);
	hs_top_related_release(&r);

	/* without kernel frames compute calls nothing */
	o.hide_kernel = true;
	hs_top_related_build(p, &o, &(const struct hs_top_fn){"compute", "", "app", -1, 0, 0, 0, 0}, &r);
	assert_int_equal(r.callees.n, 0);
	assert_int_equal(r.callers.n, 1);
	hs_top_related_release(&r);

	/* a function the profile does not have */
	hs_top_related_build(p, &o, &(const struct hs_top_fn){"absent", "", "app", -1, 0, 0, 0, 0}, &r);
	assert_int_equal(r.total, 0);
	assert_int_equal(r.callers.n + r.callees.n, 0);
	hs_top_related_release(&r);
	hs_profile_free(p);
}

/* Two processes: "db" (pid 7: threads "db" and "flush"), and "web" (pid 3) */
static const char procs[] = "db;main;query 40\n"
			    "flush;main;write_[k] 10\n"
			    "web;main;query 30\n"
			    "web;main;render 20\n";

static struct hs_profile *load_procs(void)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};

	assert_int_equal(hs_folded_read(procs, strlen(procs), &p, &err), 0);
	for (size_t i = 0; i < p->samples.n; i++)
		p->samples.v[i].pid = strcmp(hs_profile_str(p, p->samples.v[i].comm), "web") ? 7 : 3;
	return p;
}

static const struct hs_top_fn *find_row(const struct hs_top_fns *fns, const char *name, const char *comm, int32_t pid)
{
	for (size_t i = 0; i < fns->n; i++)
		if (!strcmp(fns->v[i].name, name) && !strcmp(fns->v[i].comm, comm) && fns->v[i].pid == pid)
			return &fns->v[i];
	return NULL;
}

/* A function is a row in each process and thread name it runs in, as perf top --sort
 * comm,pid,sym; the sort columns; the filters by thread name and process. */
static void test_processes(void **state)
{
	struct hs_profile *p = load_procs();
	struct hs_top_opts o = {.vi = hs_top_value_index(p)};
	struct hs_top_table t;
	const struct hs_top_fn *f;
	enum hs_top_sort sort;
	char buf[64];

	hs_top_table_build(p, &o, &t);
	assert_non_null(f = find_row(&t.fns, "query", "db", 7));
	assert_int_equal(f->self, 40);
	assert_string_equal(hs_top_owner(f, buf, sizeof(buf)), "7:db");
	assert_non_null(f = find_row(&t.fns, "query", "web", 3));
	assert_int_equal(f->self, 30);
	assert_non_null(f = find_row(&t.fns, "main", "flush", 7));
	assert_int_equal(f->total, 10);
	assert_int_equal(t.fns.n, 7); /* main thrice, query twice, write, render */
	hs_top_table_release(&t);

	o.sort = HS_TOP_SORT_PID;
	hs_top_table_build(p, &o, &t);
	for (size_t i = 1; i < t.fns.n; i++)
		assert_true(t.fns.v[i - 1].pid <= t.fns.v[i].pid);
	assert_int_equal(t.fns.v[0].pid, 3);
	hs_top_table_release(&t);
	o.sort = HS_TOP_SORT_COMM;
	hs_top_table_build(p, &o, &t);
	for (size_t i = 1; i < t.fns.n; i++)
		assert_true(strcmp(t.fns.v[i - 1].comm, t.fns.v[i].comm) <= 0);
	/* ties by self: db's query before db's main */
	assert_string_equal(t.fns.v[0].name, "query");
	hs_top_table_release(&t);
	o.sort = HS_TOP_SORT_SYM;
	hs_top_table_build(p, &o, &t);
	for (size_t i = 1; i < t.fns.n; i++)
		assert_true(strcmp(t.fns.v[i - 1].name, t.fns.v[i].name) <= 0);
	hs_top_table_release(&t);
	o.sort = HS_TOP_SORT_DSO;
	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.fns.n, 7);
	hs_top_table_release(&t);

	o.sort = HS_TOP_SORT_SELF;
	o.comm = "flush,web";
	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.sum, 100); /* shares stay of every sample */
	for (size_t i = 0; i < t.fns.n; i++)
		assert_true(!strcmp(t.fns.v[i].comm, "flush") || !strcmp(t.fns.v[i].comm, "web"));
	assert_non_null(find_row(&t.fns, "write", "flush", 7));
	hs_top_table_release(&t);
	o.comm = NULL;
	o.by_pid = true;
	o.pid = 7;
	hs_top_table_build(p, &o, &t);
	assert_int_equal(t.fns.n, 4); /* main twice, query, write */
	for (size_t i = 0; i < t.fns.n; i++)
		assert_int_equal(t.fns.v[i].pid, 7);
	hs_top_table_release(&t);

	/* callers and callees are of the row's process and thread name */
	{
		struct hs_top_related r;
		struct hs_top_fn main_web = {.name = "main", .module = "", .comm = "web", .pid = 3};

		hs_top_related_build(p, &o, &main_web, &r);
		assert_int_equal(r.total, 50);
		assert_int_equal(r.callees.n, 2);
		assert_null(find(&r.callees, "write"));
		hs_top_related_release(&r);
	}

	assert_int_equal(hs_top_sort_parse("overhead", &sort), 0);
	assert_int_equal(sort, HS_TOP_SORT_SELF);
	assert_int_equal(hs_top_sort_parse("children", &sort), 0);
	assert_int_equal(sort, HS_TOP_SORT_TOTAL);
	assert_int_equal(hs_top_sort_parse("symbol", &sort), 0);
	assert_int_equal(sort, HS_TOP_SORT_SYM);
	assert_int_equal(hs_top_sort_parse("module", &sort), 0);
	assert_int_equal(sort, HS_TOP_SORT_DSO);
	assert_string_equal(hs_top_sort_name(sort), "dso");
	assert_int_equal(hs_top_sort_parse("bogus", &sort), -EINVAL);
	assert_true(hs_top_comm_in(NULL, "x"));
	assert_true(hs_top_comm_in("a,bc", "bc"));
	assert_false(hs_top_comm_in("a,bc", "b"));
	assert_false(hs_top_comm_in("abc", "ab"));
	hs_top_header(HS_TOP_SORT_PID, 12, 10, buf, sizeof(buf));
	assert_non_null(strstr(buf, "PID:comm"));
	hs_profile_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_total),
		cmocka_unit_test(test_hide_kernel),
		cmocka_unit_test(test_filter_sort),
		cmocka_unit_test(test_related),
		cmocka_unit_test(test_processes),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)))
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
