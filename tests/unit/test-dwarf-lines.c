/* Unit tests of the source paths of DWARF frames (src/symbolize/dwarf-lines.c): a relative name
 * joined to its unit's DW_AT_comp_dir and normalised only where the file system says it is safe;
 * and this program's own code, built by meson from build/ so that its DWARF names its files
 * relatively ("../tests/unit/..."), looked up in DWARF 4 and DWARF 5 (dwarf-lines-lib.c, built
 * once in each): the line's file and the inlined call's file are the absolute source path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dwarf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "symbolize/dwarf-lines.h"

extern uintptr_t dwarf4_pc, dwarf5_pc;
void dwarf4_outer(void);
void dwarf5_outer(void);

static void expect_path(const char *dir, const char *file, const char *want)
{
	char *got = hs_source_path(dir, file);

	if (strcmp(got, want) != 0)
		print_message("hs_source_path(%s, %s) = %s, expected %s\n", dir ? dir : "NULL", file, got, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_source_path(void **state)
{
	char tmp[PATH_MAX], real[PATH_MAX + 16], link[PATH_MAX + 16], dir[2 * PATH_MAX], want[2 * PATH_MAX];

	(void)state;
	assert_int_equal(hs_test_mkdtemp(tmp, sizeof(tmp), "hs-dwarf-lines"), 0);
	snprintf(real, sizeof(real), "%s/build", tmp);
	snprintf(link, sizeof(link), "%s/link", tmp);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(mkdir(strcat(strcpy(dir, tmp), "/elsewhere"), 0700), 0);
	strcat(dir, "/sub");
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(symlink(dir, link), 0);

	/* a real directory: "build/.." is its parent */
	snprintf(want, sizeof(want), "%s/src/x.c", tmp);
	expect_path(real, "../src/x.c", want);
	expect_path(real, ".//..//src/./x.c", want);
	snprintf(dir, sizeof(dir), "%s/", real);
	expect_path(dir, "../src/x.c", want);
	/* a link to a directory: its ".." is not the link's parent, and stays */
	snprintf(want, sizeof(want), "%s/link/../src/x.c", tmp);
	expect_path(link, "../src/x.c", want);
	/* a directory that is not there: unsure, so ".." stays, and so does what follows it */
	snprintf(dir, sizeof(dir), "%s/gone", tmp);
	snprintf(want, sizeof(want), "%s/gone/../src/x.c", tmp);
	expect_path(dir, "../src/x.c", want);
	snprintf(dir, sizeof(dir), "%s/gone/a", tmp);
	snprintf(want, sizeof(want), "%s/gone/a/../../x.c", tmp);
	expect_path(dir, "../../x.c", want);
	/* an absolute name is not joined; a relative directory (-fdebug-prefix-map=DIR=.) is
	 * joined without looking at the file system */
	expect_path(real, "/usr/include//stdio.h", "/usr/include/stdio.h");
	expect_path("./csu", "../sysdeps/x.h", "csu/../sysdeps/x.h");
	expect_path(".", "x.c", "x.c");
	expect_path(NULL, "../x.c", "../x.c");
	expect_path("/", "../../x.c", "/x.c");
	expect_path("/..", "x.c", "/x.c");
	expect_path(".", ".", ".");

	assert_int_equal(hs_test_rmtree(tmp), 0);
}

static int phdr_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr; /* the first is the program itself */
	return 1;
}

/* The frames of pc (a return address in this program) from its own DWARF: a file of the
 * expected version, whose names are all the absolute path of SRCDIR/tests/unit/source. */
static void check_frames(uintptr_t pc, int version, const char *source, const char *inner, const char *outer)
{
	struct hs_src_frame out[8];
	struct hs_dwarf_file f;
	uintptr_t bias = 0;
	char want[PATH_MAX], path[PATH_MAX + 64];
	Dwarf_Die cu;
	Dwarf_Half v = 0;
	Dwarf *dw;
	int fd, n;

	snprintf(path, sizeof(path), "%s/tests/unit/%s", SRCDIR, source);
	assert_non_null(realpath(path, want));
	dl_iterate_phdr(phdr_bias, &bias);
	assert_true(pc != 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);

	/* the return address minus one is in the call, in the inlined function's code */
	assert_non_null(dwarf_addrdie(dw, pc - 1 - bias, &cu));
	assert_int_equal(dwarf_cu_info(cu.cu, &v, NULL, NULL, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(v, version);
	hs_dwarf_file_init(&f, dw);
	n = hs_dwarf_frames(&f, pc - 1 - bias, out, 8);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].name, inner);
	assert_string_equal(out[1].name, outer);
	for (int i = 0; i < n; i++) {
		print_message("DWARF %d: %s at %s:%lld\n", version, out[i].name, out[i].file, (long long)out[i].line);
		assert_non_null(out[i].file);
		assert_true(out[i].line > 0);
		/* absolute, with no ".." left (build/ is a real directory), the source file */
		assert_true(out[i].file[0] == '/');
		assert_null(strstr(out[i].file, "/../"));
		assert_non_null(realpath(out[i].file, path));
		assert_string_equal(path, want);
	}
	/* the same strings again: kept for the Dwarf's life, not made anew */
	{
		const char *first = out[0].file;
		assert_int_equal(hs_dwarf_frames(&f, pc - 1 - bias, out, 8), 2);
		assert_ptr_equal(out[0].file, first);
	}
	hs_dwarf_file_release(&f);
	dwarf_end(dw);
	close(fd);
}

static void test_own_dwarf4(void **state)
{
	(void)state;
	dwarf4_outer();
	check_frames(dwarf4_pc, 4, "dwarf-lines-lib.c", "dwarf4_inner", "dwarf4_outer");
}

static void test_own_dwarf5(void **state)
{
	(void)state;
	dwarf5_outer();
	check_frames(dwarf5_pc, 5, "dwarf-lines-lib.c", "dwarf5_inner", "dwarf5_outer");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_path),
		cmocka_unit_test(test_own_dwarf4),
		cmocka_unit_test(test_own_dwarf5),
	};

	if (hs_test_select(argc, argv, tests, sizeof(tests) / sizeof(tests[0])))
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
