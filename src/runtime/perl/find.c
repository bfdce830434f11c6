/* Finding a process's perl: the mapped ELF that exports the interpreter (perl, or libperl.so
 * for an embedder), its version and the size of its interpreter struct (both published in
 * .dynsym), where a thread's interpreter is (the executable's thread-local PL_current_context,
 * or the C library's thread-specific data), and the interpreter's state in the process checked
 * against the layout before it is trusted. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/perl/perl.h"
#include "runtime/runtime.h"
#include "util/util.h"

#define MAX_CANDIDATES 16

/* The layout of perl 5.36 built with ithreads and multiplicity for x86_64 (Debian 12's perl
 * 5.36.0-7+deb12u2): offsetof() over the installed CORE headers, checked on live processes.
 * PL_interp_size and PL_interp_size_5_18_0 say the interpreter struct is that build's. */
#define INTERP_SIZE 3768
#define INTERP_SIZE_5_18_0 2880
static const struct hs_pl_offsets layout_5_36 = {
	.interp_curcop = 0xd0,
	.interp_curstackinfo = 0xe0,
	.si_cxstack = 0x08,
	.si_prev = 0x10,
	.si_cxix = 0x20,
	.si_type = 0x2c,
	.si_read = 0x30,
	.cx_size = 0x68,
	.cx_oldcop = 0x10,
	.cx_retop = 0x30,
	.cx_sub_cv = 0x48,
	.cx_eval_cv = 0x58,
	.cx_read = 0x60,
	.cop_line = 0x24,
	.cop_file = 0x30,
	.sv_flags = 0x0c,
	.sv_u = 0x10,
	.cv_stash = 0x20,
	.cv_gv = 0x38,
	.cv_file = 0x40,
	.cv_flags = 0x5c,
	.cv_read = 0x60,
	.gv_name = 0x20,
	.gv_stash = 0x28,
	.gp_egv = 0x38,
	.hek_len = 4,
	.hek_key = 8,
	.hv_aux = 0x20,
	.aux_name = 0,
	.aux_name_count = 0x1c,
};
#define INTERP_DEFSTASH 0xc0
#define INTERP_RUNOPS 0x8f0

/* "perl", "perl5.36.0", "perl5.36-x86_64-linux-gnu", "libperl.so", "libperl.so.5.36". */
bool hs_pl_maybe_runtime(const char *path)
{
	const char *b;

	if (!path)
		return false;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "libperl.so", 10))
		return !b[10] || b[10] == '.';
	return !strcmp(b, "perl") || !strncmp(b, "perl5.", 6);
}

enum {
	S_REVISION,
	S_VERSION,
	S_SUBVERSION,
	S_INTERP_SIZE,
	S_INTERP_SIZE_5_18_0,
	S_THR_KEY,
	S_CURINTERP,
	S_CURRENT_CONTEXT,
	S_RUNOPS_STD,
	S_RUNOPS_STANDARD,
	S_N
};
static const char *const sym_names[S_N] = {
	"PL_revision", "PL_version",   "PL_subversion",      "PL_interp_size", "PL_interp_size_5_18_0",
	"PL_thr_key",  "PL_curinterp", "PL_current_context", "PL_runops_std",  "Perl_runops_standard",
};

struct file_syms {
	uint64_t val[S_N];
	bool has[S_N];
	uint64_t bias;
	/* its thread-local segment: PL_current_context is at the thread pointer - tls_off +
	 * its value (x86_64's TLS variant II, the executable's block ending at the pointer) */
	uint64_t tls_memsz, tls_align, tls_vaddr;
	bool has_tls;
};

/* The symbols of .dynsym named in names (any type, a thread-local one's value 0 too). */
static void dynsyms(Elf *elf, const char *const *names, size_t nnames, uint64_t *val, bool *has)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)(1u << 22));
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			if (!(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || (name[0] != 'P' && name[0] != 'p'))
				continue;
			for (size_t w = 0; w < nnames; w++)
				if (!has[w] && !strcmp(name, names[w])) {
					has[w] = true;
					val[w] = sym.st_value;
				}
		}
	}
}

/* Reads a mapped file's symbols, load bias and thread-local segment: 0, -EAGAIN while the
 * dynamic loader is still mapping it, or -1 when it cannot be read or is no perl (exports
 * neither PL_curinterp nor Perl_runops_standard). */
static int read_file(int32_t pid, const struct hs_rt_mapping *m, struct file_syms *s)
{
	Elf *elf;
	GElf_Ehdr eh;
	size_t phnum;
	int fd, rc = -1;

	memset(s, 0, sizeof(*s));
	if ((fd = hs_rt_open_mapped(pid, m)) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	dynsyms(elf, sym_names, S_N, s->val, s->has);
	if (!s->has[S_CURINTERP] || !s->has[S_RUNOPS_STANDARD] || hs_rt_load_bias(elf, m, &s->bias))
		goto out;
	if (eh.e_type == ET_EXEC && s->bias)
		goto out; /* a fixed-address executable mapped elsewhere is not what it says */
	if (hs_rt_segments_mapped(pid, elf, m, s->bias)) {
		rc = -EAGAIN;
		goto out;
	}
	for (size_t i = 0; !elf_getphdrnum(elf, &phnum) && i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS) {
			s->has_tls = true;
			s->tls_memsz = ph.p_memsz;
			s->tls_align = ph.p_align ? ph.p_align : 1;
			s->tls_vaddr = ph.p_vaddr;
		}
	}
	rc = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

struct candidates {
	struct hs_rt_mapping *out;
	size_t n, max;
	struct hs_rt_mapping libc;
	char exe[256];
};

static bool is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5);
}

static int candidate(void *arg, const struct hs_rt_mapping *m)
{
	struct candidates *c = arg;

	if (strstr(m->path, " (deleted)"))
		return 0; /* a deleted file's symbols cannot be read back */
	if (is_libc(m->path) && !c->libc.path[0])
		c->libc = *m;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->out[i].path, m->path))
			return 0;
	if ((hs_pl_maybe_runtime(m->path) || !strcmp(m->path, c->exe)) && c->n < c->max)
		c->out[c->n++] = *m;
	return 0;
}

/* The offset from a thread's fs base of its value for thread-specific key: glibc's
 * pthread_getspecific for a key below 32 reads the second word of entry key of an array in
 * the thread descriptor, and says where (x86_64 glibc 2.26 and later):
 *	cmp $0x1f,%edi; ja ...; mov %edi,%eax; add $N,%rax; shl $4,%rax; add %fs:0x10,%rax;
 *	mov 0x8(%rax),%rdx
 * 0, or -1 when the C library's code is not that. */
static int tsd_offset(int32_t pid, const struct hs_rt_mapping *libc, uint32_t key, uint64_t *ret)
{
	static const char *const names[] = {"pthread_getspecific", "__pthread_getspecific"};
	static const uint8_t head[] = {0x83, 0xff, 0x1f, 0x77};
	static const uint8_t mid[] = {0x89, 0xf8, 0x48, 0x83, 0xc0};
	static const uint8_t tail[] = {0x48, 0xc1, 0xe0, 0x04, 0x64, 0x48, 0x03, 0x04, 0x25,
				       0x10, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x50, 0x08};
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	uint64_t vals[2] = {0}, bias;
	uint8_t code[32];
	Elf *elf;
	int fd, rc = -1;

	if (key >= 32 || !libc->path[0] || (fd = hs_rt_open_mapped(pid, libc)) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !hs_rt_load_bias(elf, libc, &bias)) {
		hs_rt_elf_symbols(elf, SHT_DYNSYM, false, names, 2, vals);
		if (!vals[0])
			vals[0] = vals[1];
		/* mov 0x8(%rax) is at byte 24 once the jump's byte and the add's are counted */
		if (vals[0] && !mem.read(mem.ctx, vals[0] + bias, code, 28) && !memcmp(code, head, 4) &&
		    !memcmp(code + 5, mid, 5) && !memcmp(code + 11, tail, sizeof(tail)) && code[10] < 0x80) {
			*ret = (uint64_t)code[10] * 16 + 16ULL * key + 8;
			rc = 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

static int read_u64(const struct hs_rt_mem *mem, uint64_t addr, uint64_t *v)
{
	return mem->read(mem->ctx, addr, v, sizeof(*v));
}

/* The interpreter's state in the process against the layout: HS_RT_SUPPORTED, or why not. */
static int check_state(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, const char *ver, char *why,
		       size_t whylen, uint64_t runops_standard)
{
	uint64_t my_perl = 0, runops = 0, defstash = 0, si = 0, prev;
	char name[64];
	int32_t type = 0;

	if (read_u64(mem, in->curinterp, &my_perl) || !my_perl || read_u64(mem, my_perl + in->interp_runops, &runops) ||
	    !runops || read_u64(mem, my_perl + in->interp_defstash, &defstash) || !defstash ||
	    read_u64(mem, my_perl + in->info.off.interp_curstackinfo, &si) || !si) {
		hs_rt_why(why, whylen, "perl %s: cannot read its interpreter yet", ver);
		return HS_RT_UNSUPPORTED;
	}
	if (runops != runops_standard) {
		hs_rt_why(why, whylen, "perl %s runs its own loop of ops (a profiler's or debugger's)", ver);
		return HS_RT_UNSUPPORTED;
	}
	/* "cannot read" (looked at again for a while): perl_construct() names the main package
	 * after making it, and makes the first stack of stacks after that */
	if (hs_pl_stash_name(in, mem, defstash, name, sizeof(name)) || strcmp(name, "main")) {
		hs_rt_why(why, whylen, "perl %s: cannot read its main package as perl 5.36's", ver);
		return HS_RT_UNSUPPORTED;
	}
	/* the outermost stackinfo is the thread's first (PERLSI_MAIN) */
	for (int i = 0; i < 1000; i++) {
		if (read_u64(mem, si + in->info.off.si_prev, &prev))
			break;
		if (!prev) {
			if (mem->read(mem->ctx, si + in->info.off.si_type, &type, sizeof(type)))
				type = 0;
			break;
		}
		si = prev;
	}
	if (type != HS_PL_SI_MAIN) {
		hs_rt_why(why, whylen, "perl %s: cannot read its stack of stacks as perl 5.36's", ver);
		return HS_RT_UNSUPPORTED;
	}
	return HS_RT_SUPPORTED;
}

/* One candidate file, a perl: HS_RT_SUPPORTED with *ret, else HS_RT_UNSUPPORTED and why. */
static int check_file(int32_t pid, const struct hs_rt_mapping *m, const struct file_syms *s, const struct candidates *c,
		      struct hs_pl_interp *ret, char *why, size_t whylen)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	uint8_t rvs[3] = {0};
	uint16_t size = 0, size_5_18 = 0;
	uint64_t std = 0, runops_standard = s->val[S_RUNOPS_STANDARD] + s->bias;
	uint32_t key = 0;
	char ver[32];
	struct hs_pl_interp in;

	if (!s->has[S_REVISION] || !s->has[S_VERSION] || !s->has[S_SUBVERSION] ||
	    mem.read(mem.ctx, s->val[S_REVISION] + s->bias, &rvs[0], 1) ||
	    mem.read(mem.ctx, s->val[S_VERSION] + s->bias, &rvs[1], 1) ||
	    mem.read(mem.ctx, s->val[S_SUBVERSION] + s->bias, &rvs[2], 1)) {
		hs_rt_why(why, whylen, "perl of unknown version in %s", m->path);
		return HS_RT_UNSUPPORTED;
	}
	snprintf(ver, sizeof(ver), "%u.%u.%u", rvs[0], rvs[1], rvs[2]);
	if (rvs[0] != 5 || rvs[1] != 36) {
		hs_rt_why(why, whylen, "perl %s is not supported", ver);
		return HS_RT_UNSUPPORTED;
	}
	if (!s->has[S_INTERP_SIZE] || !s->has[S_INTERP_SIZE_5_18_0] ||
	    mem.read(mem.ctx, s->val[S_INTERP_SIZE] + s->bias, &size, 2) ||
	    mem.read(mem.ctx, s->val[S_INTERP_SIZE_5_18_0] + s->bias, &size_5_18, 2) || size != INTERP_SIZE ||
	    size_5_18 != INTERP_SIZE_5_18_0) {
		hs_rt_why(why, whylen, "perl %s: its interpreter is of %u bytes, not %u: a build of other options", ver,
			  size, INTERP_SIZE);
		return HS_RT_UNSUPPORTED;
	}
	if (!s->has[S_THR_KEY] || !s->has[S_CURRENT_CONTEXT]) {
		hs_rt_why(why, whylen, "perl %s built without ithreads is not supported", ver);
		return HS_RT_UNSUPPORTED;
	}
	/* until the dynamic loader has relocated its file, PL_runops_std holds 0 (libperl.so's
	 * symbol relocation) or Perl_runops_standard's link-time address (a position-independent
	 * perl's relative one): on a busy machine, long after the file is mapped ("cannot read":
	 * looked at again) */
	if (!s->has[S_RUNOPS_STD] || read_u64(&mem, s->val[S_RUNOPS_STD] + s->bias, &std) || !std ||
	    (s->bias && std == s->val[S_RUNOPS_STANDARD])) {
		hs_rt_why(why, whylen, "perl %s: cannot read PL_runops_std (not relocated yet)", ver);
		return HS_RT_UNSUPPORTED;
	}
	if (std != runops_standard) {
		hs_rt_why(why, whylen, "perl %s: PL_runops_std is not Perl_runops_standard", ver);
		return HS_RT_UNSUPPORTED;
	}
	memset(&in, 0, sizeof(in));
	in.version = HS_PL_VERSION(rvs[0], rvs[1], rvs[2]);
	snprintf(in.path, sizeof(in.path), "%s", m->path);
	in.curinterp = s->val[S_CURINTERP] + s->bias;
	in.info.off = layout_5_36;
	in.interp_defstash = INTERP_DEFSTASH;
	in.interp_runops = INTERP_RUNOPS;
	/* the executable's own thread-local block ends at the thread pointer (its TLS module is
	 * the first); a library's lies where the dynamic loader put it: its thread-specific value
	 * instead */
	/* (the interpreter first: made, it has made its thread-specific key) */
	if (check_state(&in, &mem, ver, why, whylen, runops_standard) != HS_RT_SUPPORTED)
		return HS_RT_UNSUPPORTED;
	if (!strcmp(m->path, c->exe) && s->has_tls && s->tls_align <= 4096 && !(s->tls_align & (s->tls_align - 1)) &&
	    !(s->tls_vaddr & (s->tls_align - 1)) && s->val[S_CURRENT_CONTEXT] + 8 <= s->tls_memsz) {
		uint64_t block = (s->tls_memsz + s->tls_align - 1) & ~(s->tls_align - 1);
		in.info.ctx_off = s->val[S_CURRENT_CONTEXT] - block;
	} else if (!c->libc.path[0]) {
		/* the dynamic loader maps libperl.so before the C library: looked at again */
		hs_rt_why(why, whylen, "perl %s in %s: cannot read its C library yet", ver, m->path);
		return HS_RT_UNSUPPORTED;
	} else if (mem.read(mem.ctx, s->val[S_THR_KEY] + s->bias, &key, sizeof(key)) ||
		   tsd_offset(pid, &c->libc, key, &in.info.ctx_off)) {
		hs_rt_why(why, whylen, "perl %s in %s: its threads' interpreters cannot be found (C library not known)",
			  ver, m->path);
		return HS_RT_UNSUPPORTED;
	}
	*ret = in;
	return HS_RT_SUPPORTED;
}

int hs_pl_find(int32_t pid, struct hs_pl_interp *ret, char *why, size_t whylen)
{
	struct hs_rt_mapping *maps = hs_xcalloc(MAX_CANDIDATES, sizeof(*maps));
	struct candidates c = {maps, 0, MAX_CANDIDATES, {0}, ""};
	int found = HS_RT_ABSENT;
	char buf[64];
	ssize_t len;

	snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
	if ((len = readlink(buf, c.exe, sizeof(c.exe) - 1)) > 0)
		c.exe[len] = 0;
	if (hs_rt_maps_each(pid, candidate, &c) < 0)
		c.n = 0;
	for (size_t i = 0; i < c.n; i++) {
		struct file_syms s;
		int rc = read_file(pid, &maps[i], &s);

		if (rc == -EAGAIN) {
			hs_rt_why(why, whylen, "perl in %s: cannot read it while it is being mapped", maps[i].path);
			found = HS_RT_UNSUPPORTED;
			break;
		}
		if (rc)
			continue;
		found = check_file(pid, &maps[i], &s, &c, ret, why, whylen);
		break;
	}
	free(maps);
	return found;
}
