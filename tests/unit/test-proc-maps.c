/* Unit tests for the /proc/PID/maps parser: kernel lines of every kind, lines it must refuse,
 * and the model it feeds (executable mappings only, names as the dso identity). */
#include <errno.h>
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
#include "model/proc-maps.h"

static bool parse(const char *line, struct hs_proc_map *ret)
{
	return hs_proc_maps_parse_line(line, strlen(line), ret);
}

static void assert_name(const struct hs_proc_map *m, const char *want)
{
	assert_int_equal(m->name_len, strlen(want));
	assert_memory_equal(m->name, want, m->name_len);
}

static void test_parse_lines(void **state)
{
	struct hs_proc_map m;

	assert_true(parse("558ea5df1000-558ea5eb2000 r-xp 0002f000 fe:00 247101                     /usr/bin/bash", &m));
	assert_int_equal(m.start, 0x558ea5df1000);
	assert_int_equal(m.end, 0x558ea5eb2000);
	assert_int_equal(m.pgoff, 0x2f000);
	assert_int_equal(m.maj, 0xfe);
	assert_int_equal(m.min, 0);
	assert_int_equal(m.ino, 247101);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_false(m.shared);
	assert_false(m.deleted);
	assert_name(&m, "/usr/bin/bash");

	/* anonymous memory: no name, and the kernel's trailing blank */
	assert_true(parse("7eff04e53000-7eff04e54000 rw-p 00000000 00:00 0 ", &m));
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE);
	assert_name(&m, "");
	assert_true(parse("7eff04e53000-7eff04e54000 rwxp 00000000 00:00 0", &m));
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE | PROT_EXEC);

	/* names with blanks and parentheses, a deleted file, a shared mapping */
	assert_true(parse("7ff93c3ba000-7ff93c3bc000 r-xs 00000000 fe:00 10985538                   "
			  "/tmp/lib with spaces (1).so (deleted)", &m));
	assert_true(m.shared);
	assert_true(m.deleted);
	assert_name(&m, "/tmp/lib with spaces (1).so");
	assert_true(parse("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]", &m));
	assert_int_equal(m.prot, PROT_EXEC);
	assert_name(&m, "[vsyscall]");
	/* 12-bit major, 20-bit minor numbers print wider than two digits */
	assert_true(parse("1000-2000 r-xp 00000000 103:fffff 12 /x", &m));
	assert_int_equal(m.maj, 0x103);
	assert_int_equal(m.min, 0xfffff);
}

static void test_parse_refused(void **state)
{
	struct hs_proc_map m = {.start = 7};
	static const char *bad[] = {
		"",
		"1000-1000 r-xp 00000000 00:00 0 /empty",       /* end == start */
		"2000-1000 r-xp 00000000 00:00 0 /reversed",    /* end < start */
		"10000000000000000-20000000000000000 r-xp 0 00:00 0", /* over 64 bits */
		"1000-2000 r-xp 00000000 00:00",                /* no inode */
		"1000-2000 r-xp 00000000 00:00 99999999999999999999 /x", /* inode over 64 bits */
		"1000-2000 r-xp 00000000 0000 0 /x",            /* no ':' */
		"1000-2000 r-x",                                /* perms cut */
		"1000 2000 r-xp 00000000 00:00 0 /x",           /* no '-' */
		"x1000-2000 r-xp 00000000 00:00 0 /x",
		"1000-2000 r-xp 00000000 100000000:00 0 /x",    /* major over 32 bits */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_false(parse(bad[i], &m));
		assert_int_equal(m.start, 7); /* untouched */
	}
}

static void test_parse_long_name(void **state)
{
	size_t n = HS_PROC_MAPS_MAX_PATH + 64;
	char *line = malloc(n + 64);
	struct hs_proc_map m;
	int k = snprintf(line, 64, "1000-2000 r-xp 00000000 00:00 1 /");

	memset(line + k, 'a', HS_PROC_MAPS_MAX_PATH - 1);
	assert_true(hs_proc_maps_parse_line(line, (size_t)k + HS_PROC_MAPS_MAX_PATH - 1, &m));
	assert_int_equal(m.name_len, HS_PROC_MAPS_MAX_PATH);
	memset(line + k, 'a', n);
	assert_false(hs_proc_maps_parse_line(line, (size_t)k + n, &m));
	free(line);
}

static void count_capture(void *ctx, int32_t pid, struct hs_map *map)
{
	(*(int *)ctx)++;
	assert_int_equal(pid, 7);
	assert_int_not_equal(map->dso->kind, HS_DSO_ANON);
}

static void test_add_to_model(void **state)
{
	static const char text[] =
		"00400000-00401000 r--p 00000000 fe:00 11 /bin/prog\n"
		"00401000-00402000 r-xp 00001000 fe:00 11 /bin/prog\n"
		"00500000-00501000 rwxp 00000000 00:00 0 \n"
		"not a mapping\n"
		"7f0000000000-7f0000001000 r-xp 00002000 fe:00 12 /lib/libx.so (deleted)\n"
		"7f0000100000-7f0000102000 r-xp 00000000 00:00 0                  [vdso]"; /* no final '\n' */
	struct hs_model m;
	struct hs_map *mp;
	int captured = 0;

	hs_model_init(&m);
	assert_int_equal(hs_model_add_proc_maps(&m, 7, text, sizeof(text) - 1, count_capture, &captured), 4);
	assert_int_equal(captured, 3); /* /bin/prog, libx.so, [vdso]; not the anonymous one */
	assert_null(hs_model_find_map(&m, 7, 0x400000));
	mp = hs_model_find_map(&m, 7, 0x401800);
	assert_non_null(mp);
	assert_int_equal(mp->pgoff, 0x1000);
	assert_string_equal(mp->dso->path, "/bin/prog");
	assert_int_equal(mp->dso->ino, 11);
	mp = hs_model_find_map(&m, 7, 0x500000);
	assert_string_equal(mp->dso->path, "//anon");
	assert_int_equal(mp->dso->kind, HS_DSO_ANON);
	assert_int_equal(mp->prot, PROT_READ | PROT_WRITE | PROT_EXEC);
	assert_string_equal(hs_model_find_map(&m, 7, 0x7f0000000fff)->dso->path, "/lib/libx.so");
	assert_int_equal(hs_model_find_map(&m, 7, 0x7f0000100000)->dso->kind, HS_DSO_VDSO);
	hs_model_release(&m);
}

/* The live path: this very function is in an executable mapping of this process. */
static void test_from_proc_self(void **state)
{
	struct hs_model m;
	char *text;
	size_t len;
	struct hs_map *mp;

	assert_int_equal(hs_proc_maps_read(getpid(), &text, &len), 0);
	assert_true(len > 0);
	assert_int_equal(strlen(text), len);
	free(text);
	assert_int_equal(hs_proc_maps_read(-1, &text, &len), -ESRCH);

	hs_model_init(&m);
	assert_int_equal(hs_model_from_proc(&m, getpid(), NULL, NULL), 0);
	mp = hs_model_find_map(&m, getpid(), (uint64_t)(uintptr_t)test_from_proc_self);
	assert_non_null(mp);
	assert_true(mp->prot & PROT_EXEC);
	assert_int_equal(mp->dso->kind, HS_DSO_FILE);
	hs_model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),     cmocka_unit_test(test_parse_refused),
		cmocka_unit_test(test_parse_long_name), cmocka_unit_test(test_add_to_model),
		cmocka_unit_test(test_from_proc_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
