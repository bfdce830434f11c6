/* Functions of a stripped file named from their FDEs (src/symbolize/fde-names.c, over
 * hs_cfi_functions() of src/unwind/cfi.c), on the small library test-symbolize uses: its
 * symbol table taken away in memory, as strip takes it away on disk. */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "format/elf.h"
#include "symbolize/demangle.h"
#include "symbolize/fde-names.h"
#include "symtest-lib.h"
#include "unwind/cfi.h"

struct lib {
	int fd;
	Elf *elf;
	uint64_t alpha, beta; /* the functions' ELF virtual addresses */
	char path[4096];
};

static void lib_open(struct lib *l)
{
	Dl_info info;

	elf_version(EV_CURRENT);
	assert_true(dladdr((void *)symtest_alpha, &info));
	snprintf(l->path, sizeof(l->path), "%s", info.dli_fname);
	l->alpha = (uint64_t)((uintptr_t)symtest_alpha - (uintptr_t)info.dli_fbase);
	l->beta = (uint64_t)((uintptr_t)symtest_beta - (uintptr_t)info.dli_fbase);
	l->fd = open(l->path, O_RDONLY | O_CLOEXEC);
	assert_true(l->fd >= 0);
	l->elf = elf_begin(l->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(l->elf);
}

static void lib_close(struct lib *l)
{
	elf_end(l->elf);
	close(l->fd);
}

/* The FDEs' functions: sorted, one per start, symtest_alpha's and symtest_beta's among them with
 * the sizes .symtab gives them. */
static void test_functions(void **state)
{
	struct hs_cfi_function *fns = NULL;
	struct hs_elf_symtab *st = NULL;
	const struct hs_elf_sym *a, *b;
	struct lib l;
	size_t n = 0;
	bool found_a = false, found_b = false;

	(void)state;
	lib_open(&l);
	assert_int_equal(hs_cfi_functions(l.elf, &fns, &n), 0);
	assert_true(n >= 4);
	assert_int_equal(hs_elf_symtab_load(l.elf, &st), 0);
	a = hs_elf_symtab_lookup(st, l.alpha);
	b = hs_elf_symtab_lookup(st, l.beta);
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(fns[i - 1].start < fns[i].start);
		assert_true(fns[i].size > 0);
		if (fns[i].start == l.alpha) {
			found_a = true;
			assert_int_equal(fns[i].size, a->size);
		}
		if (fns[i].start == l.beta) {
			found_b = true;
			assert_int_equal(fns[i].size, b->size);
		}
	}
	assert_true(found_a && found_b);
	free(fns);
	hs_elf_symtab_free(st);
	lib_close(&l);
}

/* A file with no .eh_frame at all (an ELF header and nothing else): no functions, and nothing
 * sorted or read on the way. */
static void test_no_fdes(void **state)
{
	struct hs_cfi_function *fns = (struct hs_cfi_function *)&fns;
	Elf64_Ehdr eh = {0};
	size_t n = 1;
	Elf *elf;

	(void)state;
	elf_version(EV_CURRENT);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	elf = elf_memory((char *)&eh, sizeof(eh));
	assert_non_null(elf);
	assert_int_equal(hs_cfi_functions(elf, &fns, &n), 0);
	assert_int_equal(n, 0);
	assert_null(fns);
	elf_end(elf);
}

/* The first .rela.plt entry of a file: its PLT entry's address (.plt after its 16-byte PLT0)
 * and its symbol's name; false when it has none. */
static bool first_plt(Elf *elf, uint64_t *addr, char *name, size_t size)
{
	Elf_Scn *scn = NULL, *rela = NULL, *plt = NULL;
	GElf_Shdr sh, dsh;
	size_t shstrndx;
	GElf_Rela r;
	GElf_Sym sym;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *nm;
		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name))) {
			rela = !strcmp(nm, ".rela.plt") ? scn : rela;
			plt = !strcmp(nm, ".plt") ? scn : plt;
		}
	}
	if (!rela || !plt || !gelf_getshdr(rela, &sh) || !gelf_getrela(elf_getdata(rela, NULL), 0, &r) ||
	    !gelf_getshdr(elf_getscn(elf, sh.sh_link), &dsh) ||
	    !gelf_getsym(elf_getdata(elf_getscn(elf, sh.sh_link), NULL), (int)GELF_R_SYM(r.r_info), &sym))
		return false;
	snprintf(name, size, "%s@plt", elf_strptr(elf, dsh.sh_link, sym.st_name));
	gelf_getshdr(plt, &sh);
	*addr = sh.sh_addr + 16;
	return true;
}

/* A stripped file's names from its debug file (the dynamic loader's, from Debian's libc6-dbg:
 * dl_main and its PLT entries): the debug file's .plt and .rela.plt hold no bytes, so the PLT
 * entries are named from the file itself, as perf names them. */
static void test_debug_file_plt(void **state)
{
	struct hs_elf_symtab *st = NULL;
	const struct hs_elf_sym *s;
	char path[4096], debug[4096], want[256];
	uint8_t id[64];
	int fd, dfd;
	size_t n, idn;
	uint64_t plt = 0;
	Elf *elf, *dbg;

	(void)state;
	elf_version(EV_CURRENT);
	assert_non_null(realpath("/lib64/ld-linux-x86-64.so.2", path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	idn = hs_elf_build_id(elf, id, sizeof(id));
	assert_true(idn > 1);
	n = (size_t)snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < idn; i++)
		n += (size_t)snprintf(debug + n, sizeof(debug) - n, "%02x", id[i]);
	snprintf(debug + n, sizeof(debug) - n, ".debug");
	if ((dfd = open(debug, O_RDONLY | O_CLOEXEC)) < 0)
		hs_test_skip("no debug file for %s at %s (Debian's libc6-dbg)", path, debug);
	if (!first_plt(elf, &plt, want, sizeof(want)))
		hs_test_skip("%s has no .plt entry", path);
	dbg = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
	assert_non_null(dbg);
	assert_int_equal(hs_elf_symtab_load_extra(elf, dbg, &st), 0);
	assert_true(st->from_symtab);
	s = hs_elf_symtab_lookup(st, plt + 4);
	assert_non_null(s);
	assert_string_equal(hs_elf_sym_name(st, s), want);
	hs_elf_symtab_free(st);
	elf_end(dbg);
	elf_end(elf);
	close(dfd);
	close(fd);
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* With no symbols at all each function is FILE+0xADDR; with symtest_alpha's symbol kept, it
 * keeps its name and its neighbour gets an address name. */
static void test_names(void **state)
{
	struct hs_elf_symtab *st = NULL;
	const struct hs_elf_sym *s;
	struct lib l;
	char want[4200];
	size_t kept = 0;
	int added;

	(void)state;
	lib_open(&l);
	assert_int_equal(hs_elf_symtab_load(l.elf, &st), 0);
	st->nsyms = 0;
	added = hs_elf_symtab_add_fde_functions(st, l.elf, l.path);
	assert_true(added >= 4);
	assert_int_equal((size_t)added, st->nsyms);
	s = hs_elf_symtab_lookup(st, l.alpha + 1);
	assert_non_null(s);
	assert_int_equal(s->addr, l.alpha);
	snprintf(want, sizeof(want), "%s+0x%" PRIx64, base(l.path), l.alpha);
	assert_string_equal(hs_elf_sym_name(st, s), want);
	hs_elf_symtab_free(st);

	st = NULL;
	assert_int_equal(hs_elf_symtab_load(l.elf, &st), 0);
	for (size_t i = 0; i < st->nsyms; i++)
		if (st->syms[i].addr == l.alpha)
			st->syms[kept++] = st->syms[i];
	assert_int_equal(kept, 1);
	st->nsyms = kept;
	assert_true(hs_elf_symtab_add_fde_functions(st, l.elf, l.path) >= 3);
	s = hs_elf_symtab_lookup(st, l.alpha);
	assert_non_null(s);
	assert_string_equal(hs_elf_sym_name(st, s), "symtest_alpha");
	s = hs_elf_symtab_lookup(st, l.beta + 2);
	assert_non_null(s);
	snprintf(want, sizeof(want), "%s+0x%" PRIx64, base(l.path), l.beta);
	assert_string_equal(hs_elf_sym_name(st, s), want);
	/* sorted, and none overlaps the next */
	for (size_t i = 1; i < st->nsyms; i++)
		assert_true(st->syms[i - 1].addr + st->syms[i - 1].size <= st->syms[i].addr);
	hs_elf_symtab_free(st);
	lib_close(&l);
}

/* What a stripped file's .dynsym and PLT name reads as C++: a PLT stub's name demangled with
 * its "@plt" kept (a sample in steady_clock::now's stub was left mangled). */
static void test_demangled_plt(void **state)
{
	char *d;

	(void)state;
	d = hs_demangle("_ZNSt6chrono3_V212steady_clock3nowEv@plt");
	assert_non_null(d);
	assert_string_equal(d, "std::chrono::_V2::steady_clock::now()@plt");
	free(d);
	d = hs_demangle("_ZNSt6chrono3_V212steady_clock3nowEv");
	assert_non_null(d);
	assert_string_equal(d, "std::chrono::_V2::steady_clock::now()");
	free(d);
	assert_null(hs_demangle("memcpy@plt"));
	assert_null(hs_demangle("_Znot_mangled@plt"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_no_fdes),
		cmocka_unit_test(test_debug_file_plt),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_demangled_plt),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)))
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
