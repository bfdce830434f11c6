/* Unit tests of the source paths of DWARF frames (src/symbolize/dwarf-lines.c): a relative name
 * joined to its unit's DW_AT_comp_dir and normalised only where the file system says it is safe;
 * and this program's own code, built by meson from build/ so that its DWARF names its files
 * relatively ("../tests/unit/..."), looked up in DWARF 4 and DWARF 5 (dwarf-lines-lib.c, built
 * once in each): the line's file and the inlined call's file are the absolute source path. And
 * the line tables read from .debug_line (src/symbolize/line-table.c) against libdw's, unit by
 * unit, in this program and in the debug files of libc (where libc6-dbg is installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "format/elf.h"
#include "symbolize/dwarf-lines.h"
#include "symbolize/line-table.h"

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

/* Every range of probe's .debug_aranges (as libdw reads them), its ends and the addresses just
 * outside it: d names the unit libdw names from ref (dwarf_addrdie), or none where it does.
 * *asked counts the addresses; returns how many d's own index answered. */
static uint64_t compare_units(Dwarf *probe, Dwarf *d, Dwarf *ref, uint64_t *asked)
{
	struct hs_dwarf_file f;
	Dwarf_Aranges *ar;
	uint64_t own;
	size_t n;

	assert_int_equal(dwarf_getaranges(probe, &ar, &n), 0);
	assert_true(n > 0);
	hs_dwarf_file_init(&f, d);
	*asked = 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr a;
		Dwarf_Word len;
		Dwarf_Off off;

		assert_int_equal(dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &len, &off), 0);
		uint64_t at[] = {a - 1, a, a + len / 2, a + len - 1, a + len};
		for (size_t j = 0; j < HS_ARRAY_SIZE(at); j++) {
			Dwarf_Die x, y;
			bool ours = hs_dwarf_unit(&f, at[j], &x), theirs = dwarf_addrdie(ref, at[j], &y) != NULL;

			if (ours != theirs || (ours && dwarf_dieoffset(&x) != dwarf_dieoffset(&y)))
				fail_msg("%#" PRIx64 ": unit %#" PRIx64 ", libdw's %#" PRIx64, at[j],
					 ours ? (uint64_t)dwarf_dieoffset(&x) : 0, theirs ? (uint64_t)dwarf_dieoffset(&y) : 0);
			(*asked)++;
		}
	}
	own = *asked - f.libdw_units;
	hs_dwarf_file_release(&f);
	return own;
}

/* A file's units looked up through our index of its .debug_aranges, against libdw's. */
static void check_units(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw, *ref;
	uint64_t asked, own;

	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	ref = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	assert_non_null(ref);
	own = compare_units(ref, dw, ref, &asked);
	print_message("%s: %" PRIu64 " addresses, the same unit as libdw's; %" PRIu64 " from our index\n", path,
		      asked, own);
	/* only where ranges overlap, or where none holds an address and some unit has no set,
	 * is libdw asked */
	assert_true(own > asked / 2);
	dwarf_end(dw);
	dwarf_end(ref);
	close(fd);
}

static void test_units_self(void **state)
{
	(void)state;
	check_units("/proc/self/exe");
}

struct find_lib {
	const char *name;
	char path[PATH_MAX];
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_lib *l = data;

	(void)size;
	if (!strstr(info->dlpi_name, l->name))
		return 0;
	snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
	return 1;
}

/* The debug file of a library this program has loaded (name: a part of its path), by its
 * build-id, into ret; false where there is none. */
static bool debug_file(const char *name, char *ret, size_t cap)
{
	struct find_lib l = {name, ""};
	uint8_t id[64];
	size_t n = 0;
	int fd, k;
	Elf *elf;

	dl_iterate_phdr(find_lib, &l);
	assert_true(l.path[0]);
	elf_version(EV_CURRENT);
	fd = open(l.path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		n = hs_elf_build_id(elf, id, sizeof(id));
	elf_end(elf);
	close(fd);
	if (n < 2)
		return false;
	k = snprintf(ret, cap, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < n; i++)
		k += snprintf(ret + k, cap - (size_t)k, "%02x", id[i]);
	snprintf(ret + k, cap - (size_t)k, ".debug");
	return access(ret, R_OK) == 0;
}

/* The debug files of libc, libm and ld.so (libc6-dbg): thousands of units, compressed sections
 * that libdw inflates. */
static void test_units_libc(void **state)
{
	static const char *const libs[] = {"/libc.so", "/libm.so", "/ld-linux"};
	char path[PATH_MAX + 64];

	(void)state;
	if (!debug_file(libs[0], path, sizeof(path)))
		hs_test_skip("no debug file for libc (libc6-dbg)");
	for (size_t i = 0; i < HS_ARRAY_SIZE(libs); i++)
		if (debug_file(libs[i], path, sizeof(path)))
			check_units(path);
}

/* The bytes of a section, as libdw left them (inflated), or NULL with *size 0. */
static const unsigned char *section(Elf *elf, const char *name, uint64_t *size)
{
	Elf_Scn *scn = hs_elf_section(elf, name);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	*size = d ? d->d_size : 0;
	return d ? d->d_buf : NULL;
}

static bool same_file(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Every unit of the file at path: the line of every row's address, of the byte before and the
 * byte after it, and every file of the unit's table, as libdw says; the rows kept (fewer than
 * libdw's) counted into *kept, libdw's into *all. Returns the units compared. */
static size_t compare_lines(const char *path, size_t *kept, size_t *all)
{
	struct hs_line_sections s = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf_Off off = 0, next;
	size_t hsize, units = 0;
	Dwarf *dw;
	Elf *elf;

	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	elf = dwarf_getelf(dw);
	s.line = section(elf, ".debug_line", &s.line_size);
	s.line_str = section(elf, ".debug_line_str", &s.line_str_size);
	s.str = section(elf, ".debug_str", &s.str_size);
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		struct hs_line_table *t;
		Dwarf_Attribute a;
		Dwarf_Word stmt;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t n, nfiles;
		Dwarf_Die cu;
		int rc;

		assert_non_null(dwarf_offdie(dw, off + hsize, &cu));
		off = next;
		if (!dwarf_attr(&cu, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &stmt) ||
		    dwarf_getsrclines(&cu, &lines, &n))
			continue;
		rc = hs_line_table_read(&s, stmt, dwarf_attr(&cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL, &t);
		if (rc)
			fail_msg("%s: unit at %#llx: line table at %#llx not read: %d", path,
				 (unsigned long long)dwarf_dieoffset(&cu), (unsigned long long)stmt, rc);
		units++;
		*kept += t->n;
		*all += n;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr at;
			assert_int_equal(dwarf_lineaddr(dwarf_onesrcline(lines, i), &at), 0);
			for (int d = -1; d <= 1; d++) {
				Dwarf_Line *ln = dwarf_getsrc_die(&cu, at + (uint64_t)d);
				const char *f = NULL, *lf = NULL;
				int64_t l = 0;
				int ll = 0;
				bool ours = hs_line_table_find(t, at + (uint64_t)d, &f, &l);

				if (ln) {
					lf = dwarf_linesrc(ln, NULL, NULL);
					dwarf_lineno(ln, &ll);
				}
				if (ours != (ln != NULL) || (ln && (!same_file(f, lf) || l != ll)))
					fail_msg("%s: %#llx: %s:%lld, libdw's %s:%d", path, (unsigned long long)(at + (uint64_t)d),
						 ours ? f : "(none)", (long long)l, ln ? lf : "(none)", ll);
			}
		}
		assert_int_equal(dwarf_getsrcfiles(&cu, &files, &nfiles), 0);
		assert_int_equal(t->nfiles, nfiles);
		for (size_t i = 0; i < nfiles; i++)
			if (!same_file(hs_line_table_file(t, i), dwarf_filesrc(files, i, NULL, NULL)))
				fail_msg("%s: file %zu: %s, libdw's %s", path, i, hs_line_table_file(t, i),
					 dwarf_filesrc(files, i, NULL, NULL));
		hs_line_table_free(t);
	}
	dwarf_end(dw);
	close(fd);
	print_message("%s: %zu units, %zu rows kept of libdw's %zu, the same line at each address\n", path, units,
		      *kept, *all);
	return units;
}

/* This program: DWARF 5 from meson's build, and DWARF 4 (dwarf-lines-lib.c) */
static void test_lines_self(void **state)
{
	size_t kept = 0, all = 0;

	(void)state;
	assert_true(compare_lines("/proc/self/exe", &kept, &all) > 10);
	assert_true(kept > 0 && kept < all);
}

/* The debug files of libc, libm and ld.so (libc6-dbg): thousands of units, compressed sections
 * that libdw inflates, hand-written assembly */
static void test_lines_libc(void **state)
{
	static const char *const libs[] = {"/libc.so", "/libm.so", "/ld-linux"};
	char path[PATH_MAX + 64];
	size_t kept = 0, all = 0;

	(void)state;
	if (!debug_file(libs[0], path, sizeof(path)))
		hs_test_skip("no debug file for libc (libc6-dbg)");
	for (size_t i = 0; i < HS_ARRAY_SIZE(libs); i++)
		if (debug_file(libs[i], path, sizeof(path)))
			assert_true(compare_lines(path, &kept, &all) > 0);
}

/* Without .debug_aranges (renamed), or with one we cannot read (a set of another version),
 * units are libdw's to find, whatever it finds; with a unit that has no set (the second set
 * naming the first unit), an address in no range is libdw's to place. */
static void test_units_unread(void **state)
{
	size_t len, name_at = 0, data_at = 0;
	uint32_t len1, cu1;
	char *orig = hs_test_read_file("/proc/self/exe", &len);
	Elf *elf;
	Elf_Scn *scn;
	GElf_Shdr sh, strsh;
	size_t shstrndx;

	(void)state;
	elf_version(EV_CURRENT);
	elf = elf_memory(orig, len);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	scn = hs_elf_section(elf, ".debug_aranges");
	assert_non_null(scn);
	assert_non_null(gelf_getshdr(scn, &sh));
	assert_non_null(gelf_getshdr(elf_getscn(elf, shstrndx), &strsh));
	assert_int_equal(sh.sh_flags & SHF_COMPRESSED, 0);
	name_at = strsh.sh_offset + sh.sh_name + strlen(".debug_arange");
	data_at = sh.sh_offset;
	memcpy(&len1, orig + data_at, 4);
	memcpy(&cu1, orig + data_at + 6, 4);
	assert_true(len1 < 0xfffffff0 && 4 + len1 + 10 < sh.sh_size);
	elf_end(elf);

	for (int damage = 0; damage < 3; damage++) {
		char *copy = hs_xmalloc(len);
		Dwarf *probe, *dw, *ref;
		Elf *e1, *e2, *e3;
		uint64_t asked, own;

		memcpy(copy, orig, len);
		if (damage == 0) {
			assert_int_equal(copy[name_at], 's');
			copy[name_at] = 'z';
		} else if (damage == 1) {
			copy[data_at + 4] = 3; /* the first set's version */
		} else {
			memcpy(copy + data_at + 4 + len1 + 6, &cu1, 4);
		}
		e1 = elf_memory(orig, len);
		e2 = elf_memory(copy, len);
		e3 = elf_memory(copy, len);
		probe = dwarf_begin_elf(e1, DWARF_C_READ, NULL);
		dw = dwarf_begin_elf(e2, DWARF_C_READ, NULL);
		ref = dwarf_begin_elf(e3, DWARF_C_READ, NULL);
		assert_non_null(probe);
		assert_non_null(dw);
		assert_non_null(ref);
		own = compare_units(probe, dw, ref, &asked);
		assert_true(asked > 0);
		if (damage < 2)
			assert_int_equal(own, 0);
		else
			assert_true(own > 0 && own < asked);
		dwarf_end(probe);
		dwarf_end(dw);
		dwarf_end(ref);
		elf_end(e1);
		elf_end(e2);
		elf_end(e3);
		free(copy);
	}
	free(orig);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_path),
		cmocka_unit_test(test_own_dwarf4),
		cmocka_unit_test(test_own_dwarf5),
		cmocka_unit_test(test_units_self),
		cmocka_unit_test(test_units_libc),
		cmocka_unit_test(test_units_unread),
		cmocka_unit_test(test_lines_self),
		cmocka_unit_test(test_lines_libc),
	};

	if (hs_test_select(argc, argv, tests, sizeof(tests) / sizeof(tests[0])))
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
