/* Finding a process's PHP: the mapped ELF file named like PHP's that exports executor_globals,
 * its load bias, and its build checked from what it publishes before its layout is trusted:
 * the version in its X-Powered-By header, the API build id (which says non-thread-safe), the
 * sizes of its global structures as exported (they change when their layout does), the VM kind
 * zend_vm_kind() returns, and the executor globals' VM stack as the process has it. */
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/php/php.h"
#include "util/util.h"

#define MAX_CANDIDATES 8
#define MAX_SYMBOLS 4000000

/* PHP 8.2's layout (x86_64; php-src Zend/zend_compile.h, zend_types.h, zend_globals.h),
 * checked against the headers of 8.2.36 and live processes. */
static const struct hs_php_offsets php82 = {
	.ex_opline = 0,
	.ex_func = 24,
	.ex_type_info = 40,
	.ex_prev = 48,
	.ex_read = 56,
	.fn_type = 0,
	.fn_name = 8,
	.fn_scope = 16,
	.fn_read = 24,
	.op_last = 80,
	.op_opcodes = 88,
	.op_filename = 152,
	.op_line_start = 160,
	.op_read = 168,
	.op_size = 32,
	.op_lineno = 24,
};

/* 8.2's zend_executor_globals: where the frame chain starts, and the VM stack checked */
#define EG_VM_STACK_END 464
#define EG_VM_STACK 472
#define EG_VM_STACK_PAGE_SIZE 480
#define EG_CURRENT_EXECUTE_DATA 488
#define VM_STACK_PAGE_SIZE 262144

/* The build id of 8.2's engine API without thread safety (Zend/zend_build.h: ZEND_MODULE_BUILD_ID) */
#define BUILD_ID_NTS "API420220829,NTS"
#define BUILD_ID_TS "API420220829,TS"

/* The exported sizes of 8.2's global structures: a build whose layout differs shows here. */
static const struct {
	const char *name;
	uint64_t size;
} sizes[] = {
	{"executor_globals", 1800},
	{"compiler_globals", 568},
	{"core_globals", 672},
	{"sapi_module", 280},
};

/* zend_vm_kind() of the HYBRID VM: mov $4, %eax; ret (ZEND_VM_KIND_HYBRID) */
static const uint8_t vm_kind_hybrid[6] = {0xb8, 0x04, 0x00, 0x00, 0x00, 0xc3};

static void set_why(char *why, size_t whylen, const char *fmt, ...) HS_PRINTF(3, 4);
static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

bool hs_php_maybe(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	if (!path)
		return false;
	b = b ? b + 1 : path;
	if (!strncmp(b, "libphp", 6))
		return strstr(b + 6, ".so") != NULL;
	if (strncmp(b, "php", 3))
		return false;
	b += 3;
	if (!strncmp(b, "-fpm", 4) || !strncmp(b, "-cgi", 4))
		b += 4;
	/* php, php8.2, php-fpm8.2, php82 */
	while (*b && (isdigit((unsigned char)*b) || *b == '.'))
		b++;
	return !*b;
}

struct sym {
	const char *name;
	uint64_t value, size;
	bool func;
};

enum { S_EG, S_CG, S_PG, S_SAPI, S_EG_OFFSET, S_EXECUTE_EX, S_VM_KIND, S_COUNT };

/* The values and sizes of the symbols of syms in elf's .dynsym (PHP exports them all). */
static void read_symbols(Elf *elf, struct sym *syms, size_t n)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		count = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SYMBOLS);
		for (size_t i = 0; i < count; i++) {
			GElf_Sym s;
			const char *name;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			if (!(name = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (size_t w = 0; w < n; w++)
				if (!syms[w].value && !strcmp(name, syms[w].name) &&
				    (GELF_ST_TYPE(s.st_info) == STT_FUNC) == syms[w].func) {
					syms[w].value = s.st_value;
					syms[w].size = s.st_size;
				}
		}
	}
}

/* The bytes of elf's section name, or NULL. */
static const Elf_Data *section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Whether the bytes of d hold the string s (with its NUL). */
static bool holds(const Elf_Data *d, const char *s)
{
	return d && d->d_buf && memmem(d->d_buf, d->d_size, s, strlen(s) + 1);
}

/* The version in the "X-Powered-By: PHP/8.2.36" string of .rodata: true with it set. */
static bool powered_by(const Elf_Data *d, struct hs_php_proc *ret)
{
	static const char tag[] = "X-Powered-By: PHP/";
	const char *p, *end;
	unsigned v[3] = {0, 0, 0};

	if (!d || !d->d_buf || !(p = memmem(d->d_buf, d->d_size, tag, sizeof(tag) - 1)))
		return false;
	p += sizeof(tag) - 1;
	end = (const char *)d->d_buf + d->d_size;
	for (int i = 0; i < 3; i++) {
		int digits = 0;
		while (p < end && isdigit((unsigned char)*p) && digits++ < 4)
			v[i] = v[i] * 10 + (unsigned)(*p++ - '0');
		if (!digits)
			return false;
		if (i < 2 && (p >= end || *p++ != '.'))
			return false;
	}
	ret->major = v[0];
	ret->minor = v[1];
	ret->patch = v[2];
	return true;
}

enum hs_php_found hs_php_check_elf(Elf *elf, const char *path, struct hs_php_proc *ret, struct hs_php_file *file,
				   char *why, size_t whylen)
{
	struct sym s[S_COUNT] = {
		[S_EG] = {"executor_globals", 0, 0, false},
		[S_CG] = {"compiler_globals", 0, 0, false},
		[S_PG] = {"core_globals", 0, 0, false},
		[S_SAPI] = {"sapi_module", 0, 0, false},
		[S_EG_OFFSET] = {"executor_globals_offset", 0, 0, false},
		[S_EXECUTE_EX] = {"execute_ex", 0, 0, true},
		[S_VM_KIND] = {"zend_vm_kind", 0, 0, true},
	};
	const Elf_Data *rodata;
	GElf_Ehdr eh;
	struct hs_php_proc p = {0};

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return HS_PHP_ABSENT;
	read_symbols(elf, s, S_COUNT);
	if (!s[S_EG].value && !s[S_EG_OFFSET].value)
		return HS_PHP_ABSENT; /* no engine here */
	rodata = section(elf, ".rodata");
	if (!powered_by(rodata, &p)) {
		set_why(why, whylen, "php of unknown version in %s", path);
		return HS_PHP_UNSUPPORTED;
	}
	if (p.major != 8 || p.minor != 2) {
		set_why(why, whylen, "php %u.%u is not supported", p.major, p.minor);
		return HS_PHP_UNSUPPORTED;
	}
	/* a thread-safe build reaches its globals through TLS (executor_globals_offset) */
	if (s[S_EG_OFFSET].value || holds(rodata, BUILD_ID_TS)) {
		set_why(why, whylen, "php %u.%u.%u built thread-safe (ZTS) is not supported", p.major, p.minor,
			p.patch);
		return HS_PHP_UNSUPPORTED;
	}
	if (!holds(rodata, BUILD_ID_NTS)) {
		set_why(why, whylen, "php %u.%u.%u: no %s build id in %s (a build of other options)", p.major, p.minor,
			p.patch, BUILD_ID_NTS, path);
		return HS_PHP_UNSUPPORTED;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(sizes); i++)
		if (s[i].size != sizes[i].size) {
			set_why(why, whylen, "php %u.%u.%u: %s is %llu bytes, expected %llu", p.major, p.minor, p.patch,
				sizes[i].name, (unsigned long long)s[i].size, (unsigned long long)sizes[i].size);
			return HS_PHP_UNSUPPORTED;
		}
	if (!s[S_EXECUTE_EX].value || !s[S_VM_KIND].value || s[S_VM_KIND].size < sizeof(vm_kind_hybrid)) {
		set_why(why, whylen, "php %u.%u.%u: no execute_ex or zend_vm_kind in %s", p.major, p.minor, p.patch,
			path);
		return HS_PHP_UNSUPPORTED;
	}
	p.info.off = php82;
	snprintf(p.path, sizeof(p.path), "%s", path);
	*ret = p;
	*file = (struct hs_php_file){s[S_EG].value, s[S_VM_KIND].value, s[S_EXECUTE_EX].value};
	return HS_PHP_SUPPORTED;
}

/* The process's checks of the executor globals at eg: its VM stack is either not made yet or
 * made as 8.2 makes it (pages of 256 KiB, the first page's end where the globals say). */
static enum hs_php_found check_process(const struct hs_rt_mem *mem, uint64_t eg, const struct hs_php_proc *p, char *why,
				       size_t whylen)
{
	uint64_t g[4], page[2]; /* vm_stack_end, vm_stack, vm_stack_page_size, current_execute_data */

	if (mem->read(mem->ctx, eg + EG_VM_STACK_END, g, sizeof(g))) {
		set_why(why, whylen, "php %u.%u.%u: cannot read its executor_globals", p->major, p->minor, p->patch);
		return HS_PHP_UNSUPPORTED;
	}
	if (!g[1] && !g[2] && !g[3])
		return HS_PHP_SUPPORTED; /* no request started yet (an FPM master) */
	if (g[2] != VM_STACK_PAGE_SIZE || !g[1] || mem->read(mem->ctx, g[1], page, sizeof(page)) || page[1] != g[0]) {
		set_why(why, whylen, "php %u.%u.%u: its executor_globals' VM stack is not as 8.2 makes it", p->major,
			p->minor, p->patch);
		return HS_PHP_UNSUPPORTED;
	}
	return HS_PHP_SUPPORTED;
}

enum hs_php_found hs_php_find(int32_t pid, struct hs_php_proc *ret, char *why, size_t whylen)
{
	struct hs_rt_mapping maps[MAX_CANDIDATES];
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	enum hs_php_found found = HS_PHP_ABSENT;
	int n = hs_rt_candidates(pid, hs_php_maybe, maps, MAX_CANDIDATES);

	if (n < 0)
		return HS_PHP_ABSENT;
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < (size_t)n && found == HS_PHP_ABSENT; i++) {
		struct hs_php_proc p;
		struct hs_php_file file;
		uint64_t bias = 0;
		uint8_t kind[sizeof(vm_kind_hybrid)];
		Elf *elf;
		int fd;

		if ((fd = hs_rt_open_mapped(pid, &maps[i])) < 0)
			continue;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		found = elf ? hs_php_check_elf(elf, maps[i].path, &p, &file, why, whylen) : HS_PHP_ABSENT;
		if (found == HS_PHP_SUPPORTED && hs_rt_load_bias(elf, &maps[i], &bias)) {
			set_why(why, whylen, "php: cannot read where %s is loaded", maps[i].path);
			found = HS_PHP_UNSUPPORTED;
		}
		if (found == HS_PHP_SUPPORTED)
			hs_php_loop_note(fd, maps[i].path);
		if (elf)
			elf_end(elf);
		close(fd);
		if (found != HS_PHP_SUPPORTED)
			continue;
		if (mem.read(mem.ctx, file.vm_kind + bias, kind, sizeof(kind))) {
			set_why(why, whylen, "php %u.%u.%u: cannot read its zend_vm_kind", p.major, p.minor, p.patch);
			found = HS_PHP_UNSUPPORTED;
		} else if (memcmp(kind, vm_kind_hybrid, sizeof(kind))) {
			set_why(why, whylen, "php %u.%u.%u: not built with the HYBRID VM", p.major, p.minor, p.patch);
			found = HS_PHP_UNSUPPORTED;
		} else {
			found = check_process(&mem, file.eg + bias, &p, why, whylen);
		}
		if (found == HS_PHP_SUPPORTED) {
			p.info.current_ex = file.eg + bias + EG_CURRENT_EXECUTE_DATA;
			*ret = p;
		}
	}
	return found;
}
