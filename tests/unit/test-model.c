/* Unit tests of the process model under churn (src/model/model.c): forked children share their
 * parent's mappings until either changes them, and see them as they were at the fork; threads
 * that exit are forgotten; a stale process (records of it left out) is read again from /proc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/model.h"

static struct hs_dso *dso(struct hs_model *m, const char *path)
{
	struct hs_dso_ident id = {.path = path, .maj = 8, .min = 1, .ino = (uint64_t)strlen(path)};

	return hs_model_dso(m, &id);
}

/* a parent with n executable mappings, 64 KiB apart from 0x100000 */
static void parent_with_maps(struct hs_model *m, int32_t pid, size_t n)
{
	struct hs_dso *lib = dso(m, "/usr/lib/libbig.so");

	hs_model_comm(m, pid, pid, "server", true);
	for (size_t i = 0; i < n; i++)
		assert_non_null(hs_model_mmap(m, pid, 0x100000 + i * 0x10000, 0x1000, i * 0x1000, PROT_READ | PROT_EXEC, lib));
}

static size_t maps_held(const struct hs_model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->procs.n; i++)
		n += m->procs.v[i]->maps.cap;
	return n;
}

/* A server with 1000 mappings forks 20,000 children that exec a small program: before, each
 * fork copied the 1000 mappings (20 million held until the period's end); a child that execs
 * never needs them. */
static void test_fork_exec_copies_nothing(void **state)
{
	struct hs_model m;
	struct hs_dso *prog;

	(void)state;
	hs_model_init(&m);
	parent_with_maps(&m, 100, 1000);
	prog = dso(&m, "/usr/bin/true");
	for (int32_t c = 1000; c < 21000; c++) {
		hs_model_fork(&m, c, 100, c, 100);
		hs_model_comm(&m, c, c, "true", true);
		assert_non_null(hs_model_mmap(&m, c, 0x400000, 0x1000, 0, PROT_READ | PROT_EXEC, prog));
		hs_model_exit(&m, c, c);
	}
	print_message("mappings held for 20000 children: %zu\n", maps_held(&m) - 1000);
	assert_true(maps_held(&m) < 1024 + 20000 * 16); /* a small vector each: its own mapping */
	assert_int_equal(hs_model_forget_exited(&m, NULL), 20000);
	assert_int_equal(m.procs.n, 1);
	hs_model_release(&m);
}

/* A child that does not exec sees its parent's mappings as they were at the fork, whatever the
 * parent maps, unmaps or runs after; its own mappings are its own. */
static void test_fork_child_sees_fork_time(void **state)
{
	struct hs_model m;
	struct hs_dso *lib, *other, *prog;
	struct hs_map *map;

	(void)state;
	hs_model_init(&m);
	parent_with_maps(&m, 100, 3);
	lib = dso(&m, "/usr/lib/libbig.so");
	other = dso(&m, "/usr/lib/libother.so");
	prog = dso(&m, "/usr/bin/new");

	/* shared: the child is sampled before either changes */
	hs_model_fork(&m, 200, 100, 200, 100);
	assert_true(hs_model_process(&m, 200)->lazy);
	assert_int_equal(hs_model_process(&m, 200)->maps.n, 0);
	map = hs_model_find_map(&m, 200, 0x110000);
	assert_non_null(map);
	assert_ptr_equal(map->dso, lib);
	assert_false(hs_model_process(&m, 200)->lazy);

	/* the parent changes first: the child gets the mappings of the fork's time */
	hs_model_fork(&m, 201, 100, 201, 100);
	assert_non_null(hs_model_mmap(&m, 100, 0x110000, 0x1000, 0, PROT_READ | PROT_EXEC, other));
	map = hs_model_find_map(&m, 201, 0x110000);
	assert_non_null(map);
	assert_ptr_equal(map->dso, lib);
	assert_ptr_equal(hs_model_find_map(&m, 100, 0x110000)->dso, other);

	/* the parent runs another program: the child keeps the old one's */
	hs_model_fork(&m, 202, 100, 202, 100);
	hs_model_comm(&m, 100, 100, "new", true);
	assert_non_null(hs_model_mmap(&m, 100, 0x400000, 0x1000, 0, PROT_READ | PROT_EXEC, prog));
	assert_null(hs_model_find_map(&m, 100, 0x100000));
	assert_ptr_equal(hs_model_find_map(&m, 202, 0x100000)->dso, lib);
	assert_null(hs_model_find_map(&m, 202, 0x400000));

	/* the child maps a file of its own: on top of the parent's */
	hs_model_fork(&m, 203, 202, 203, 202);
	assert_non_null(hs_model_mmap(&m, 203, 0x500000, 0x1000, 0, PROT_READ | PROT_EXEC, other));
	assert_ptr_equal(hs_model_find_map(&m, 203, 0x500000)->dso, other);
	assert_ptr_equal(hs_model_find_map(&m, 203, 0x120000)->dso, lib);
	assert_null(hs_model_find_map(&m, 202, 0x500000));

	/* the parent exits and is forgotten: the children still sharing get their copy first */
	hs_model_fork(&m, 204, 202, 204, 202);
	hs_model_exit(&m, 202, 202);
	assert_int_equal(hs_model_forget_exited(&m, NULL), 1);
	assert_ptr_equal(hs_model_find_map(&m, 204, 0x100000)->dso, lib);

	/* a reused pid starts from nothing; its lazy children copy what it had */
	hs_model_fork(&m, 205, 204, 205, 204);
	hs_model_exit(&m, 204, 204);
	hs_model_fork(&m, 204, 1, 204, 1);
	assert_null(hs_model_find_map(&m, 204, 0x100000));
	assert_ptr_equal(hs_model_find_map(&m, 205, 0x100000)->dso, lib);
	hs_model_release(&m);
}

/* A process that starts and joins 100,000 threads keeps its live ones only, once exited ones are
 * forgotten (at a period's end); before, every thread it ever had was kept. */
static void test_exited_threads_forgotten(void **state)
{
	struct hs_model m;

	(void)state;
	hs_model_init(&m);
	hs_model_comm(&m, 100, 100, "pool", true);
	hs_model_fork(&m, 100, 100, 101, 100); /* a thread that stays */
	hs_model_comm(&m, 100, 101, "worker", false);
	for (int32_t t = 1000; t < 101000; t++) {
		hs_model_fork(&m, 100, 100, t, 100);
		hs_model_exit(&m, 100, t);
	}
	assert_int_equal(m.threads.n, 100002);
	assert_int_equal(hs_model_forget_exited(&m, NULL), 0);
	assert_int_equal(m.threads.n, 2);
	assert_string_equal(hs_model_comm_of(&m, 101), "worker");
	assert_string_equal(hs_model_comm_of(&m, 100), "pool");
	assert_null(hs_model_comm_of(&m, 5000));
	/* the idle task, which no record names, is perf's swapper */
	assert_string_equal(hs_model_comm_of(&m, 0), "swapper");
	/* a thread id used again is a new thread */
	hs_model_fork(&m, 100, 100, 5000, 100);
	hs_model_exit(&m, 100, 5000);
	hs_model_fork(&m, 100, 100, 5000, 100);
	hs_model_forget_exited(&m, NULL);
	assert_int_equal(m.threads.n, 3);
	hs_model_release(&m);
}

/* A stale process is read again from /proc at hs_model_resync(), once; after records of any
 * process were lost, so is one the model has not met. This process is the one read. */
static void test_resync(void **state)
{
	struct hs_model m;
	int32_t self = (int32_t)getpid();
	uintptr_t pc = (uintptr_t)&test_resync;

	(void)state;
	hs_model_init(&m);
	/* not stale: nothing is read */
	assert_int_equal(hs_model_resync(&m, self, self, NULL, NULL), 0);
	assert_null(hs_model_find_map(&m, self, pc));
	hs_model_stale(&m, self);
	assert_int_equal(m.nstale, 1);
	assert_int_equal(hs_model_resync(&m, self, self, NULL, NULL), 0);
	assert_int_equal(m.nstale, 0);
	assert_non_null(hs_model_find_map(&m, self, pc));
	assert_non_null(hs_model_comm_of(&m, self));
	hs_model_release(&m);

	hs_model_init(&m);
	hs_model_stale_all(&m);
	assert_int_equal(hs_model_resync(&m, self, self, NULL, NULL), 0);
	assert_non_null(hs_model_find_map(&m, self, pc));
	assert_false(hs_model_process(&m, self)->stale);
	hs_model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_exec_copies_nothing),
		cmocka_unit_test(test_fork_child_sees_fork_time),
		cmocka_unit_test(test_exited_threads_forgotten),
		cmocka_unit_test(test_resync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
