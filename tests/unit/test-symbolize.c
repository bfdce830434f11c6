/* Unit tests for symbolization: this very executable (PIE), a shared library of known symbols
 * (libsymtest, built beside this test), the vdso, PLT stubs, the choice among aliases,
 * kallsyms fixtures, hostile ELF input, and a mapped file replaced or deleted on disk. Every
 * expected address comes from somewhere other than the code under test: the compiler, the
 * dynamic loader (dlsym, dladdr1), /proc/self/maps, or the call instructions themselves. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "model/dso-file.h"
#include "model/model.h"
#include "profile/builder.h"
#include "symbolize/elf-symtab.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolizer.h"
#include "symtest-lib.h"

#define KALLSYMS_DIR SRCDIR "/tests/fixtures/kallsyms"

/* ---- helpers ---- */

/* The line of /proc/self/maps that holds addr, parsed here rather than by the model. */
struct self_map {
	uint64_t start, end, pgoff;
	char path[512];
};

static bool self_map_find(const void *addr, struct self_map *ret)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[1024];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff;
		int name = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end, &pgoff, &name) < 3)
			continue;
		if ((uint64_t)(uintptr_t)addr < start || (uint64_t)(uintptr_t)addr >= end)
			continue;
		ret->start = start;
		ret->end = end;
		ret->pgoff = pgoff;
		snprintf(ret->path, sizeof(ret->path), "%s", name ? line + name : "");
		ret->path[strcspn(ret->path, "\n")] = '\0';
		found = true;
	}
	fclose(f);
	return found;
}

/* A model of this process read from /proc, and a symbolizer over it. */
struct env {
	struct hs_model m;
	struct hs_symbolizer s;
};

static void env_init(struct env *e, void (*capture)(void *ctx, int32_t pid, struct hs_map *map))
{
	hs_model_init(&e->m);
	hs_symbolizer_init(&e->s, NULL);
	assert_int_equal(hs_model_from_proc(&e->m, getpid(), capture, NULL), 0);
}

static void env_release(struct env *e)
{
	hs_symbolizer_release(&e->s, &e->m);
	hs_model_release(&e->m);
}

/* addr through the whole user path: model mapping, file offset, symbolizer. */
static bool env_resolve(struct env *e, const void *addr, struct hs_sym *ret, struct hs_dso **dso)
{
	struct hs_map *map = hs_model_find_map(&e->m, getpid(), (uint64_t)(uintptr_t)addr);

	assert_non_null(map);
	if (dso)
		*dso = map->dso;
	return hs_symbolize_user(&e->s, map->dso, (uint64_t)(uintptr_t)addr - map->start + map->pgoff, ret);
}

static void assert_resolves_to(struct env *e, const void *addr, const char *name, uint64_t offset)
{
	struct hs_sym sym = {0};

	if (!env_resolve(e, addr, &sym, NULL))
		fail_msg("%p: no symbol, expected %s+%#" PRIx64, addr, name, offset);
	assert_non_null(sym.name);
	assert_string_equal(sym.name, name);
	assert_int_equal(sym.offset, offset);
	assert_null(sym.module);
}

/* The target of the direct call (e8 rel32) that ends just before ret, or NULL when the call
 * was made some other way (e.g. `call *GOT(%rip)` under -fno-plt). */
static const void *call_target(const void *ret)
{
	const unsigned char *p = ret;
	int32_t rel;

	if (p[-5] != 0xe8)
		return NULL;
	memcpy(&rel, p - 4, sizeof(rel));
	return p + rel;
}

/* symtest_alpha's address from the loader. This file never takes the address of symtest_alpha
 * itself: its calls to it then go through the ordinary .plt (see test_plt_got for the other
 * kind of stub). */
static const void *lib_alpha(void)
{
	const void *a = dlsym(RTLD_DEFAULT, "symtest_alpha");

	assert_non_null(a);
	return a;
}

/* Symbol size per the dynamic loader's view of the symbol table. */
static uint64_t dl_symbol_size(const void *addr)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	assert_true(dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) != 0);
	assert_non_null(sym);
	assert_ptr_equal(info.dli_saddr, addr);
	return sym->st_size;
}

/* ---- this executable ---- */

/* Stores the caller's return address: a point inside the caller, past its call. */
__attribute__((noinline)) static void note_return(void **ret)
{
	*ret = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

int symtest_pie_target(int x, void **mid);
__attribute__((noinline)) int symtest_pie_target(int x, void **mid)
{
	note_return(mid);
	__asm__ volatile("" ::: "memory");
	return x * 11 + 5;
}

/* Called through a volatile pointer so that the compiler neither clones nor inlines it. */
static int (*volatile pie_target_ptr)(int, void **) = symtest_pie_target;

static void test_pie_self(void **state)
{
	const void *fn = (const void *)symtest_pie_target;
	void *mid = NULL;
	struct self_map sm;
	struct hs_elf_symtab *st = NULL;
	const struct hs_elf_sym *sym;
	uint64_t vaddr, vmid;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	(void)state;
	assert_int_equal(pie_target_ptr(1, &mid), 16);
	assert_true((const char *)mid > (const char *)fn);
	assert_true(self_map_find(fn, &sm));
	assert_true(self_map_find(mid, &sm));

	elf_version(EV_CURRENT);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &eh));
	if (eh.e_type != ET_DYN)
		print_message("note: this test executable is not PIE (e_type %d)\n", (int)eh.e_type);
	assert_int_equal(hs_elf_symtab_load(elf, &st), 0);
	elf_end(elf);
	close(fd);
	assert_true(st->from_symtab);

	assert_true(hs_elf_symtab_offset_to_vaddr(st, (uintptr_t)fn - sm.start + sm.pgoff, &vaddr));
	sym = hs_elf_symtab_lookup(st, vaddr);
	assert_non_null(sym);
	assert_string_equal(hs_elf_sym_name(st, sym), "symtest_pie_target");
	assert_int_equal(sym->addr, vaddr);

	assert_true(hs_elf_symtab_offset_to_vaddr(st, (uintptr_t)mid - sm.start + sm.pgoff, &vmid));
	assert_int_equal(vmid - vaddr, (uintptr_t)mid - (uintptr_t)fn);
	sym = hs_elf_symtab_lookup(st, vmid);
	assert_non_null(sym);
	assert_string_equal(hs_elf_sym_name(st, sym), "symtest_pie_target");
	assert_int_equal(vmid - sym->addr, (uintptr_t)mid - (uintptr_t)fn);
	/* an offset past every segment has no address */
	assert_false(hs_elf_symtab_offset_to_vaddr(st, UINT64_MAX / 2, &vaddr));
	hs_elf_symtab_free(st);
}

static void test_pie_via_model(void **state)
{
	void *mid = NULL;
	struct hs_sym sym;
	struct hs_dso *dso = NULL;
	struct env e;

	(void)state;
	assert_int_equal(pie_target_ptr(2, &mid), 27);
	env_init(&e, NULL);
	assert_resolves_to(&e, (const void *)symtest_pie_target, "symtest_pie_target", 0);
	assert_resolves_to(&e, mid, "symtest_pie_target", (uintptr_t)mid - (uintptr_t)symtest_pie_target);
	assert_true(env_resolve(&e, (const void *)test_pie_via_model, &sym, &dso));
	assert_string_equal(sym.name, "test_pie_via_model");
	assert_int_equal(dso->kind, HS_DSO_FILE);
	env_release(&e);
}

/* ---- a shared library ---- */

static void test_shared_library(void **state)
{
	int (*alpha)(struct symtest_probe *) = (int (*)(struct symtest_probe *))dlsym(RTLD_DEFAULT, "symtest_alpha");
	int (*beta)(struct symtest_probe *) = (int (*)(struct symtest_probe *))dlsym(RTLD_DEFAULT, "symtest_beta");
	struct symtest_probe p = {.n = 4};
	struct self_map sm;
	struct env e;

	(void)state;
	assert_non_null(alpha);
	assert_non_null(beta);
	assert_int_equal(beta(&p), 6);
	assert_true(self_map_find((const void *)alpha, &sm));
	assert_non_null(strstr(sm.path, "libsymtest.so"));
	/* the mid-function addresses lie inside their functions, per the loader's symbol sizes */
	assert_in_range((uintptr_t)p.alpha_mid, (uintptr_t)alpha + 1, (uintptr_t)alpha + dl_symbol_size((const void *)alpha) - 1);
	assert_in_range((uintptr_t)p.beta_mid, (uintptr_t)beta + 1, (uintptr_t)beta + dl_symbol_size((const void *)beta) - 1);

	env_init(&e, NULL);
	assert_resolves_to(&e, (const void *)alpha, "symtest_alpha", 0);
	assert_resolves_to(&e, (const void *)beta, "symtest_beta", 0);
	assert_resolves_to(&e, p.alpha_mid, "symtest_alpha", (uintptr_t)p.alpha_mid - (uintptr_t)alpha);
	assert_resolves_to(&e, p.beta_mid, "symtest_beta", (uintptr_t)p.beta_mid - (uintptr_t)beta);
	/* alpha was called from beta: its return address is in beta */
	assert_resolves_to(&e, p.alpha_caller, "symtest_beta", (uintptr_t)p.alpha_caller - (uintptr_t)beta);
	assert_int_equal(e.s.stats.files_mismatched, 0);
	env_release(&e);
}

/* ---- the vdso ---- */

static void test_vdso(void **state)
{
	static const char *const names[] = {"__vdso_clock_gettime", "__vdso_gettimeofday"};
	void *h = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
	const void *addr = NULL;
	const char *want = NULL;
	struct hs_sym sym = {0};
	struct hs_dso *dso = NULL;
	struct self_map sm;
	struct env e;

	(void)state;
	if (!h) {
		print_message("no vdso known to the dynamic loader: %s\n", dlerror());
		skip();
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !addr; i++)
		if ((addr = dlsym(h, names[i])))
			want = names[i];
	dlclose(h);
	if (!addr) {
		print_message("the vdso exports neither __vdso_clock_gettime nor __vdso_gettimeofday\n");
		skip();
	}
	assert_true(self_map_find(addr, &sm));
	assert_string_equal(sm.path, "[vdso]");

	env_init(&e, NULL);
	assert_true(env_resolve(&e, addr, &sym, &dso));
	assert_int_equal(dso->kind, HS_DSO_VDSO);
	/* the same function under another name (clock_gettime is a weak alias) would do */
	assert_int_equal(sym.offset, 0);
	if (strcmp(sym.name, want)) {
		h = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
		assert_non_null(h);
		if (dlsym(h, sym.name) != addr)
			fail_msg("vdso %p: got %s, expected %s or an alias", addr, sym.name, want);
		dlclose(h);
	}
	/* past the start of the function, still the function */
	assert_true(env_resolve(&e, (const char *)addr + 1, &sym, NULL));
	assert_int_equal(sym.offset, 1);
	env_release(&e);
}

/* ---- PLT stubs ---- */

static void test_plt_executable(void **state)
{
	struct symtest_probe p = {.n = 1};
	const void *stub;
	struct env e;

	(void)state;
	/* a call from this executable to the library goes through our PLT */
	assert_int_equal(symtest_alpha(&p), 2);
	__asm__ volatile("" ::: "memory");
	stub = call_target(p.alpha_caller);
	if (!stub) {
		print_message("the call to symtest_alpha is not a direct call (built with -fno-plt?)\n");
		skip();
	}
	assert_ptr_not_equal(stub, dlsym(RTLD_DEFAULT, "symtest_alpha"));
	env_init(&e, NULL);
	assert_resolves_to(&e, p.alpha_caller, "test_plt_executable",
			   (uintptr_t)p.alpha_caller - (uintptr_t)test_plt_executable);
	assert_resolves_to(&e, stub, "symtest_alpha@plt", 0);
	env_release(&e);
}

static void test_plt_library(void **state)
{
	struct symtest_probe p = {.n = 1};
	const void *stub;
	struct self_map sm;
	struct env e;

	(void)state;
	/* symtest_beta calls symtest_alpha through the library's own PLT */
	assert_int_equal(symtest_beta(&p), 3);
	stub = call_target(p.alpha_caller);
	if (!stub) {
		print_message("the call to symtest_alpha in libsymtest is not a direct call\n");
		skip();
	}
	assert_true(self_map_find(stub, &sm));
	assert_non_null(strstr(sm.path, "libsymtest.so"));
	env_init(&e, NULL);
	assert_resolves_to(&e, stub, "symtest_alpha@plt", 0);
	env_release(&e);
}

/* A function whose address the executable takes and that it also calls gets its stub in
 * .plt.got (8 bytes: jmp *GOT(%rip)), with the GOT slot's relocation in .rela.dyn rather than
 * .rela.plt. perf and objdump name it NAME@plt too. */
static const void *volatile beta_addr;

static void test_plt_got(void **state)
{
	struct symtest_probe p = {.n = 1};
	const void *stub;
	struct hs_sym sym = {0};
	struct env e;

	(void)state;
	/* taken in code, through the GOT (a static initializer would be a plain data relocation) */
	beta_addr = (const void *)symtest_beta;
	assert_ptr_equal(beta_addr, dlsym(RTLD_DEFAULT, "symtest_beta"));
	assert_int_equal(symtest_beta(&p), 3);
	__asm__ volatile("" ::: "memory");
	stub = call_target(p.beta_caller);
	if (!stub) {
		print_message("the call to symtest_beta is not a direct call (built with -fno-plt?)\n");
		skip();
	}
	assert_ptr_not_equal(stub, beta_addr);
	env_init(&e, NULL);
	/* a stub in .plt.got, named from the GOT slot its jump goes through */
	assert_true(env_resolve(&e, stub, &sym, NULL));
	assert_non_null(sym.name);
	assert_string_equal(sym.name, "symtest_beta@plt");
	assert_int_equal(sym.offset, 0);
	env_release(&e);
}

/* ---- aliases ---- */

/* The symbol found at the address of the exported name `at` is `best`. */
static void expect_alias_at(struct env *e, const struct hs_elf_symtab *st, const char *at, const char *best,
			    const char *other)
{
	const void *addr = dlsym(RTLD_DEFAULT, at);
	const struct hs_elf_sym *sym;
	struct self_map sm;
	uint64_t vaddr;

	assert_non_null(addr);
	if (other)
		assert_ptr_equal(dlsym(RTLD_DEFAULT, other), addr);
	assert_resolves_to(e, addr, best, 0);
	/* the same through the table, loaded straight from the file */
	assert_true(self_map_find(addr, &sm));
	assert_true(hs_elf_symtab_offset_to_vaddr(st, (uintptr_t)addr - sm.start + sm.pgoff, &vaddr));
	sym = hs_elf_symtab_lookup(st, vaddr);
	assert_non_null(sym);
	assert_string_equal(hs_elf_sym_name(st, sym), best);
}

static void expect_alias(struct env *e, const struct hs_elf_symtab *st, const char *best, const char *other)
{
	expect_alias_at(e, st, best, best, other);
}

static void test_aliases(void **state)
{
	Dl_info info;
	struct hs_elf_symtab *st = NULL;
	struct env e;
	Elf *elf;
	int fd;

	(void)state;
	assert_true(dladdr(lib_alpha(), &info) != 0);
	elf_version(EV_CURRENT);
	fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	assert_int_equal(hs_elf_symtab_load(elf, &st), 0);
	elf_end(elf);
	close(fd);
	/* the local names are candidates only when .symtab is read */
	assert_true(st->from_symtab);

	env_init(&e, NULL);
	/* a global over a weak and a local, despite its leading underscores */
	expect_alias(&e, st, "__symtest_global_alias", "symtest_weak_alias");
	/* a local over a weak (as perf chooses: a weak symbol is the last resort) */
	expect_alias_at(&e, st, "__symtest_wl_weak", "symtest_wl_local", NULL);
	/* between globals, fewer leading underscores */
	expect_alias(&e, st, "symtest_under_none", "__symtest_under_two");
	/* an ifunc's resolver: the global ifunc over the local resolver's name, as perf shows it
	 * (ld.so's startup samples in __strncasecmp_l, not __strncasecmp_l_ifunc) */
	{
		struct self_map sm;
		uint64_t vaddr;
		const struct hs_elf_sym *sym;
		uintptr_t at = (uintptr_t)symtest_ifunc_resolver_addr();
		assert_true(self_map_find((const void *)at, &sm));
		assert_true(hs_elf_symtab_offset_to_vaddr(st, at - sm.start + sm.pgoff, &vaddr));
		sym = hs_elf_symtab_lookup(st, vaddr);
		assert_non_null(sym);
		assert_string_equal(hs_elf_sym_name(st, sym), "symtest_ifunc");
		assert_int_equal(symtest_ifunc(1), 15);
	}
	env_release(&e);
	hs_elf_symtab_free(st);
}

/* ---- kallsyms ---- */

static void expect_ksym(const struct hs_kallsyms *k, uint64_t addr, const char *name, uint64_t off, const char *mod)
{
	const struct hs_ksym *s = hs_kallsyms_lookup(k, addr);

	if (!s)
		fail_msg("%#" PRIx64 ": no symbol, expected %s", addr, name);
	assert_string_equal(k->names + s->name, name);
	assert_int_equal(addr - s->addr, off);
	if (mod) {
		assert_true(s->module != 0);
		assert_string_equal(k->names + s->module, mod);
	} else {
		assert_int_equal(s->module, 0);
	}
}

static void test_kallsyms(void **state)
{
	struct hs_kallsyms *k = NULL;

	(void)state;
	assert_int_equal(hs_kallsyms_load(KALLSYMS_DIR "/basic", &k), 0);
	expect_ksym(k, 0xffffffff81000070, "secondary_startup_64", 0, NULL);
	expect_ksym(k, 0xffffffff81000100, "verify_cpu", 0x20, NULL);
	/* data symbols are not candidates: initcall_debug (D) and a __ksymtab entry (r) sit
	 * between text symbols */
	expect_ksym(k, 0xffffffff81001200, "do_one_initcall", 0x200, NULL);
	expect_ksym(k, 0xffffffff81001210, "do_one_initcall", 0x210, NULL);
	expect_ksym(k, 0xffffffff81001800, "x86_64_start_kernel", 0x400, NULL);
	expect_ksym(k, 0xffffffff81002004, "arch_cpu_idle", 4, NULL); /* W: a weak text symbol */
	/* modules */
	expect_ksym(k, 0xffffffffc0400000, "nft_hook_slow", 0, "nf_tables");
	expect_ksym(k, 0xffffffffc0400090, "nft_do_chain", 0x10, "nf_tables");
	expect_ksym(k, 0xffffffffc0400100, "nft_do_chain", 0x80, "nf_tables"); /* d: data */
	/* before the first symbol, and far past the last */
	assert_null(hs_kallsyms_lookup(k, 0));
	assert_null(hs_kallsyms_lookup(k, 0xffffffff80ffffff));
	assert_null(hs_kallsyms_lookup(k, 0xffffffffc0401000 + 0x100000));
	assert_null(hs_kallsyms_lookup(k, UINT64_MAX));
	hs_kallsyms_free(k);

	assert_int_equal(hs_kallsyms_load(KALLSYMS_DIR "/restricted", &k), -ENODATA);
	assert_int_equal(hs_kallsyms_load(KALLSYMS_DIR "/no-such-file", &k), -ENOENT);
}

/* Names at one address: the choice does not depend on the order of the lines, and it is one
 * of the names at that address. */
static void test_kallsyms_aliases(void **state)
{
	static const char *const first[] = {"_text", "startup_64", "_stext"};
	static const char *const ext4[] = {"ext4_fill_super", "ext4_fill_super_alias"};
	char dir[256], path[300], line[256];
	char *lines[64];
	size_t n = 0;
	struct hs_kallsyms *a = NULL, *b = NULL;
	const struct hs_ksym *sa, *sb;
	FILE *in, *out;
	bool ok = false;

	(void)state;
	in = fopen(KALLSYMS_DIR "/basic", "re");
	assert_non_null(in);
	while (n < 64 && fgets(line, sizeof(line), in))
		lines[n++] = strdup(line);
	fclose(in);
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "test-symbolize"), 0);
	snprintf(path, sizeof(path), "%s/reversed", dir);
	out = fopen(path, "we");
	assert_non_null(out);
	for (size_t i = n; i-- > 0;) {
		fputs(lines[i], out);
		free(lines[i]);
	}
	assert_int_equal(fclose(out), 0);

	assert_int_equal(hs_kallsyms_load(KALLSYMS_DIR "/basic", &a), 0);
	assert_int_equal(hs_kallsyms_load(path, &b), 0);
	unlink(path);
	rmdir(dir);

	sa = hs_kallsyms_lookup(a, 0xffffffff81000010);
	sb = hs_kallsyms_lookup(b, 0xffffffff81000010);
	assert_non_null(sa);
	assert_non_null(sb);
	for (size_t i = 0; i < 3; i++)
		ok |= !strcmp(a->names + sa->name, first[i]);
	assert_true(ok);
	assert_string_equal(a->names + sa->name, b->names + sb->name);

	sa = hs_kallsyms_lookup(a, 0xffffffffc0401008);
	sb = hs_kallsyms_lookup(b, 0xffffffffc0401008);
	assert_non_null(sa);
	assert_non_null(sb);
	assert_true(!strcmp(a->names + sa->name, ext4[0]) || !strcmp(a->names + sa->name, ext4[1]));
	assert_string_equal(a->names + sa->name, b->names + sb->name);
	assert_string_equal(a->names + sa->module, "ext4");
	hs_kallsyms_free(a);
	hs_kallsyms_free(b);
}

/* ---- hostile ELF ---- */

/* Loads whatever len bytes of buf make: an error or a table, never a crash. Counts what
 * happened in *seen: [0] libelf refused, [1] our error, [2] a table. */
static void load_hostile(char *buf, size_t len, unsigned seen[3])
{
	struct hs_elf_symtab *st = (struct hs_elf_symtab *)(uintptr_t)1;
	Elf *elf = elf_memory(buf, len);
	int rc;

	if (!elf) {
		seen[0]++;
		return;
	}
	rc = hs_elf_symtab_load(elf, &st);
	seen[rc == 0 ? 2 : 1]++;
	if (rc == 0) {
		uint64_t v;
		assert_non_null(st);
		for (size_t i = 0; i < st->nsyms; i++)
			assert_true(st->syms[i].name < st->names_len || (!st->names_len && !st->syms[i].name));
		(void)hs_elf_symtab_lookup(st, 0x1000);
		(void)hs_elf_symtab_lookup(st, UINT64_MAX);
		(void)hs_elf_symtab_offset_to_vaddr(st, 0x1000, &v);
		hs_elf_symtab_free(st);
	} else {
		assert_true(rc < 0);
		/* untouched on failure */
		assert_ptr_equal(st, (struct hs_elf_symtab *)(uintptr_t)1);
	}
	elf_end(elf);
}

/* A .gnu_debugdata section of a few KiB of xz that expands to 128 MiB (a local user's ELF, mapped
 * by a process that root records): refused past the ratio to the section's size, in a child
 * whose peak memory grows far less than the expansion asks for. */
static void test_minidebug_bomb(void **state)
{
	char dir[] = "/tmp/hs-minidebug-XXXXXX", cmd[1024], elf[64];
	struct rusage ru;
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(elf, sizeof(elf), "%s/bomb.elf", dir);
	snprintf(cmd, sizeof(cmd),
		 "head -c 128M /dev/zero | xz -0 >'%s/bomb.xz' && cp /bin/true '%s' && "
		 "objcopy --add-section .gnu_debugdata='%s/bomb.xz' '%s'",
		 dir, elf, dir, elf);
	if (system(cmd) != 0) {
		assert_int_equal(hs_test_rmtree(dir), 0);
		hs_test_skip("no xz or objcopy");
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* what the child adds to its peak (it starts with its parent's pages) */
		struct hs_dso_elf m = {0}, dbg;
		struct rusage before, after;
		int rc;

		getrusage(RUSAGE_SELF, &before);
		elf_version(EV_CURRENT);
		m.fd = open(elf, O_RDONLY | O_CLOEXEC);
		m.elf = m.fd >= 0 ? elf_begin(m.fd, ELF_C_READ_MMAP, NULL) : NULL;
		rc = hs_dso_minidebug_open(&m, &dbg);
		getrusage(RUSAGE_SELF, &after);
		print_message("minidebug bomb: %s, peak RSS grew by %ld MiB\n", rc == -EOVERFLOW ? "refused" : "not refused",
			      (after.ru_maxrss - before.ru_maxrss) / 1024);
		/* the section is about 20 KiB: 1 MiB + 64 times that, where 128 MiB were asked for */
		_exit(rc != -EOVERFLOW ? 1 : after.ru_maxrss - before.ru_maxrss >= 32 * 1024 ? 2 : 0);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(hs_test_rmtree(dir), 0);
}

static void test_hostile_elf(void **state)
{
	size_t len, cuts[] = {0, 1, 4, 16, 52, 63, 64, 65, 200, 1000, 4096};
	char *img, *copy;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned seen[3] = {0};

	(void)state;
	elf_version(EV_CURRENT);
	img = hs_test_read_file("/proc/self/exe", &len);
	assert_true(len > 4096);
	copy = malloc(len);
	assert_non_null(copy);

	/* truncated copies: fixed cuts, then cuts all through the file */
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		memcpy(copy, img, cuts[i]);
		load_hostile(copy, cuts[i], seen);
	}
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		memcpy(copy, img, cut);
		load_hostile(copy, cut, seen);
	}
	memcpy(copy, img, len - 1);
	load_hostile(copy, len - 1, seen);

	/* random bytes, and random bytes behind a valid ELF identification */
	for (int round = 0; round < 64; round++) {
		size_t n = 64 + (size_t)(round * 997) % 8192;
		for (size_t i = 0; i < n; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			copy[i] = (char)seed;
		}
		load_hostile(copy, n, seen);
		memcpy(copy, img, EI_NIDENT);
		load_hostile(copy, n, seen);
	}

	/* a real file with a few bytes of its headers and tables overwritten */
	for (int round = 0; round < 300; round++) {
		memcpy(copy, img, len);
		for (int k = 0; k < 8; k++) {
			size_t at;
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			/* half of the hits in the ELF and program headers, the rest anywhere */
			at = (k & 1) ? (size_t)(seed >> 16) % 512 : (size_t)(seed >> 16) % len;
			copy[at] = (char)(seed >> 8);
		}
		load_hostile(copy, len, seen);
	}
	print_message("hostile ELF: %u refused by libelf, %u rejected, %u loaded\n", seen[0], seen[1], seen[2]);
	/* the corrupted copies must have reached our code, not only libelf's checks */
	assert_true(seen[1] + seen[2] > 100);
	free(copy);
	free(img);
}

/* ---- a mapped file replaced or deleted ---- */

static void capture_map_file(void *ctx, int32_t pid, struct hs_map *map)
{
	char path[96];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, map->start, map->end);
	if (map->dso->fd < 0)
		map->dso->fd = open(path, O_RDONLY | O_CLOEXEC);
}

/* Maps a private copy of libsymtest, then replaces (or deletes) the file on disk: names must
 * come from the mapped file when it was captured, and otherwise not at all. */
static void replaced_case(bool delete)
{
	char dir[256], lib[300], other[300];
	size_t len;
	char *img;
	Dl_info info;
	void *h;
	const void *alpha;
	struct hs_sym sym;
	struct env plain, held;
	struct hs_map *map;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "test-symbolize"), 0);
	snprintf(lib, sizeof(lib), "%s/libsymcopy.so", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	assert_true(dladdr(lib_alpha(), &info) != 0);
	img = hs_test_read_file(info.dli_fname, &len);
	hs_test_write_file(lib, img, len);
	free(img);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	alpha = dlsym(h, "symtest_alpha");
	assert_non_null(alpha);
	assert_ptr_not_equal(alpha, lib_alpha());

	env_init(&plain, NULL);
	env_init(&held, capture_map_file);
	map = hs_model_find_map(&held.m, getpid(), (uintptr_t)alpha);
	assert_non_null(map);
	/* a different ELF where the library was: this test executable */
	if (delete) {
		assert_int_equal(unlink(lib), 0);
	} else {
		img = hs_test_read_file("/proc/self/exe", &len);
		hs_test_write_file(other, img, len);
		free(img);
		assert_int_equal(rename(other, lib), 0);
	}

	if (map->dso->fd >= 0) {
		assert_resolves_to(&held, alpha, "symtest_alpha", 0);
	} else {
		print_message("could not capture %s through /proc/self/map_files: %s\n", lib, strerror(errno));
		assert_false(env_resolve(&held, alpha, &sym, NULL));
	}
	assert_false(env_resolve(&plain, alpha, &sym, NULL));
	if (delete)
		assert_int_equal(plain.s.stats.files_unreadable, 1);
	else
		assert_int_equal(plain.s.stats.files_mismatched, 1);
	/* the rest of the process still resolves */
	assert_resolves_to(&plain, lib_alpha(), "symtest_alpha", 0);
	env_release(&plain);
	env_release(&held);
	dlclose(h);
	unlink(lib);
	rmdir(dir);
}

static void test_replaced_file(void **state)
{
	(void)state;
	replaced_case(false);
}

static void test_deleted_file(void **state)
{
	(void)state;
	replaced_case(true);
}

/* ---- files no process maps any more ---- */

/* A copy of libsymtest at path with one byte of its build-id changed: another file, whose
 * tables nothing shares with the original's. */
static void write_other_build(const char *path)
{
	static const char note[] = {4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};
	Dl_info info;
	size_t len;
	char *img, *at;

	assert_true(dladdr(lib_alpha(), &info) != 0);
	img = hs_test_read_file(info.dli_fname, &len);
	at = memmem(img, len, note, sizeof(note));
	assert_non_null(at);
	at[sizeof(note)] ^= 0x5a;
	hs_test_write_file(path, img, len);
	free(img);
}

static void event_mmap(struct hs_builder *b, int32_t pid, const struct self_map *sm)
{
	struct hs_perf_event ev;
	struct stat st;

	assert_int_equal(stat(sm->path, &st), 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP2;
	ev.mmap.pid = ev.mmap.tid = (uint32_t)pid;
	ev.mmap.start = sm->start;
	ev.mmap.len = sm->end - sm->start;
	ev.mmap.pgoff = sm->pgoff;
	ev.mmap.maj = major(st.st_dev);
	ev.mmap.min = minor(st.st_dev);
	ev.mmap.ino = st.st_ino;
	ev.mmap.prot = PROT_READ | PROT_EXEC;
	ev.mmap.filename = sm->path;
	ev.mmap.is_mmap2 = true;
	hs_builder_event(b, &ev);
}

static void event_exit(struct hs_builder *b, int32_t pid)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_EXIT;
	ev.task.pid = ev.task.ppid = ev.task.tid = ev.task.ptid = (uint32_t)pid;
	hs_builder_event(b, &ev);
}

/* A sample of pid whose user chain is the one address ip. */
static void event_sample(struct hs_builder *b, int32_t pid, uint64_t ip)
{
	struct hs_perf_event ev;
	uint64_t chain[2] = {PERF_CONTEXT_USER, ip};

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.sid.pid = ev.sid.tid = (uint32_t)pid;
	ev.sample.sid = ev.sid;
	ev.sample.ip = ip;
	ev.sample.period = 1;
	ev.sample.callchain = chain;
	ev.sample.nr_callchain = 2;
	hs_builder_event(b, &ev);
}

/* Loads what a sample at addr in pid needs: the symbol table, the DWARF, the unwinding table.
 * Returns the inline chain's outermost function name. */
static const char *load_at(struct hs_builder *b, int32_t pid, uint64_t addr, const char **file)
{
	struct hs_map *map = hs_model_find_map(&b->model, pid, addr);
	struct hs_sym_frame frames[8];
	uint64_t off, vaddr, sym_off;
	int n;

	assert_non_null(map);
	off = addr - map->start + map->pgoff;
	n = hs_symbolize_user_frames(&b->sym, map->dso, off, frames, 8, &sym_off);
	assert_true(n > 0);
	assert_non_null(hs_unwinder_table(&b->unwinder, map->dso, off, &vaddr));
	*file = frames[n - 1].file;
	return frames[n - 1].name;
}

static bool profile_names(const struct hs_profile *p, const char *name)
{
	for (size_t i = 1; i < p->functions.n; i++)
		if (!strcmp(hs_profile_str(p, p->functions.v[i].name), name))
			return true;
	return false;
}

/* At a period's end (hs_builder_rebase()), what belongs to the files no live process maps is
 * freed: their symbol tables, DWARF, unwinding tables and dsos; what a live process's files
 * share with them stays; a file mapped again is read afresh. */
static void test_forget_unmapped_files(void **state)
{
	const int32_t gone = 4000001, later = 4000002;
	char dir[256], lib[300];
	struct hs_builder_opts o = {0};
	struct hs_builder b;
	struct self_map own, other;
	const void *alpha;
	const char *file, *other_file;
	size_t tables, dwarfs, files, dsos;
	struct hs_profile *p;
	void *h;

	(void)state;
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "test-forget"), 0);
	setenv("HOTSTACK_CACHE_DIR", dir, 1);
	snprintf(lib, sizeof(lib), "%s/libsymother.so", dir);
	write_other_build(lib);
	/* where the loader maps it, then unmapped: only the made-up processes map it */
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	alpha = dlsym(h, "symtest_alpha");
	assert_non_null(alpha);
	assert_true(self_map_find(alpha, &other));
	dlclose(h);
	assert_false(self_map_find(alpha, &own));
	assert_true(self_map_find(lib_alpha(), &own));

	o.user = true;
	hs_builder_init(&b, &o);
	hs_builder_add_event(&b, "cpu-clock", true);
	assert_int_equal(hs_builder_add_proc(&b, getpid()), 0);
	assert_string_equal(load_at(&b, getpid(), (uintptr_t)lib_alpha(), &file), "symtest_alpha");
	tables = b.sym.tables.n;
	dwarfs = b.sym.dwarfs.n;
	files = b.unwinder.files.n;
	dsos = b.model.dsos.n;
	event_mmap(&b, gone, &other);
	assert_string_equal(load_at(&b, gone, (uintptr_t)alpha, &other_file), "symtest_alpha");
	assert_int_equal(b.sym.tables.n, tables + 1);
	assert_int_equal(b.sym.dwarfs.n, dwarfs + (other_file != NULL));
	assert_int_equal(b.unwinder.files.n, files + 1);
	assert_int_equal(b.model.dsos.n, dsos + 1);
	event_sample(&b, gone, (uintptr_t)alpha);

	event_exit(&b, gone);
	/* it had a frame in the period: kept for the next (short-lived processes that map a file
	 * again and again do not make it read again each period) */
	assert_true(hs_builder_rebase(&b));
	assert_int_equal(b.sym.tables.n, tables + 1);
	assert_int_equal(b.model.dsos.n, dsos + 1);
	assert_true(hs_builder_rebase(&b));
	assert_int_equal(b.sym.tables.n, tables);
	assert_int_equal(b.sym.dwarfs.n, dwarfs);
	assert_int_equal(b.unwinder.files.n, files);
	assert_int_equal(b.model.dsos.n, dsos);
	for (size_t i = 0; i < b.model.dsos.n; i++)
		assert_int_equal(b.model.dsos.v[i]->id, i);
	/* this process's files are as they were */
	{
		const char *again;
		assert_string_equal(load_at(&b, getpid(), (uintptr_t)lib_alpha(), &again), "symtest_alpha");
		assert_true(!file == !again);
		assert_int_equal(b.sym.tables.n, tables);
		assert_int_equal(b.unwinder.files.n, files);
	}
	/* the file mapped again is found again, and a sample in it named */
	event_mmap(&b, later, &other);
	event_sample(&b, later, (uintptr_t)alpha);
	assert_int_equal(b.model.dsos.n, dsos + 1);
	assert_int_equal(b.sym.tables.n, tables + 1);
	p = hs_builder_take(&b);
	assert_non_null(p);
	assert_true(profile_names(p, "symtest_alpha"));
	hs_profile_free(p);
	hs_builder_release(&b);
	unsetenv("HOTSTACK_CACHE_DIR");
	unlink(lib);
	assert_int_equal(hs_test_rmtree(dir), 0);
}

/* Resident kB of this process's mapping of path that is read-only, private, from offset 0 and
 * size bytes long (libelf's of the whole file); -1 when there is none. */
static long whole_file_rss(const char *path, uint64_t size)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[1024], name[512];
	unsigned long long start, end, off;
	char perms[5];
	bool in = false;
	long rss = -1, kb;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int got = sscanf(line, "%llx-%llx %4s %llx %*s %*s %511s", &start, &end, perms, &off, name);
		if (got >= 4) { /* a mapping's first line; anonymous ones have no name */
			in = got == 5 && !strcmp(name, path) && !strcmp(perms, "r--p") && !off && end - start >= size &&
			     end - start < size + 4096;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			rss = kb;
	}
	fclose(f);
	return rss;
}

/* The pages of the DWARF files it maps are given back (they stay in the page cache), and read
 * again as lookups need them; the loader's own mappings of the same file are left alone. */
static void test_drop_pages(void **state)
{
	struct env e;
	struct hs_map *map;
	struct hs_sym_frame frames[8];
	struct self_map sm;
	struct stat st;
	uint64_t sym_off;
	const void *alpha = lib_alpha();
	struct symtest_probe p = {.n = 4};
	int (*beta)(struct symtest_probe *) = (int (*)(struct symtest_probe *))dlsym(RTLD_DEFAULT, "symtest_beta");
	int n;

	(void)state;
	assert_true(self_map_find(alpha, &sm));
	assert_int_equal(stat(sm.path, &st), 0);
	env_init(&e, NULL);
	map = hs_model_find_map(&e.m, getpid(), (uintptr_t)alpha);
	assert_non_null(map);
	n = hs_symbolize_user_frames(&e.s, map->dso, (uintptr_t)alpha - map->start + map->pgoff, frames, 8, &sym_off);
	assert_true(n > 0);
	assert_string_equal(frames[n - 1].name, "symtest_alpha");
	if (!frames[n - 1].file)
		hs_test_skip("libsymtest has no DWARF (built without -g)");
	assert_true(whole_file_rss(sm.path, (uint64_t)st.st_size) > 0);
	hs_symbolizer_drop_pages(&e.s);
	assert_int_equal(whole_file_rss(sm.path, (uint64_t)st.st_size), 0);
	/* the loader's mappings work as before, and the names are read again */
	assert_non_null(beta);
	assert_int_equal(beta(&p), 6);
	n = hs_symbolize_user_frames(&e.s, map->dso, (uintptr_t)p.alpha_mid - map->start + map->pgoff, frames, 8, &sym_off);
	assert_true(n > 0);
	assert_string_equal(frames[n - 1].name, "symtest_alpha");
	assert_non_null(frames[n - 1].file);
	env_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_self),
		cmocka_unit_test(test_pie_via_model),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_plt_executable),
		cmocka_unit_test(test_plt_library),
		cmocka_unit_test(test_plt_got),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_aliases),
		cmocka_unit_test(test_hostile_elf),
		cmocka_unit_test(test_minidebug_bomb),
		cmocka_unit_test(test_replaced_file),
		cmocka_unit_test(test_deleted_file),
		cmocka_unit_test(test_forget_unmapped_files),
		cmocka_unit_test(test_drop_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
