/* Finding a process's V8: the binary of its maps that carries V8's metadata (node, or a
 * libnode.so), opened through /proc/PID/root so that a container's is found, its layout, and
 * where the process runs the embedded builtins from (the binary's text, and the copy V8 maps
 * next to its compiled code so that calls to them are short). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/v8/v8.h"

bool hs_v8_maybe_runtime(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	if (!path)
		return false;
	b = b ? b + 1 : path;
	return !strcmp(b, "node") || !strcmp(b, "nodejs") || !strncmp(b, "libnode.so", 10);
}

struct scan {
	struct hs_rt_mapping first; /* the binary's first mapping */
	uint64_t blob_off;          /* the builtins' file offset; 0 before it is known */
	uint64_t blob_at, copy;     /* where the binary maps them, and the other mapping of them */
	uint64_t run_lo, run_hi;    /* adjacent anonymous mappings (and the copy) so far */
	bool found, run_has_copy;
};

static int first_binary(void *arg, const struct hs_rt_mapping *m)
{
	struct scan *s = arg;

	if (!hs_v8_maybe_runtime(m->path))
		return 0;
	s->first = *m;
	s->found = true;
	return 1;
}

/* The mapping of the binary's file at the builtins' file offset that is not where the binary's
 * own segment puts them, and the run of adjacent anonymous mappings it ends: V8's code range,
 * which it compiles into (the copy is made at its end). */
static int code_range(void *arg, const struct hs_rt_mapping *m)
{
	struct scan *s = arg;
	bool copy = m->ino == s->first.ino && !strcmp(m->path, s->first.path) && m->off == s->blob_off &&
		    m->start != s->blob_at;

	if (!copy && m->path[0]) {
		if (s->run_has_copy)
			return 1;
		s->run_lo = s->run_hi = 0;
		return 0;
	}
	if (m->start != s->run_hi) {
		if (s->run_has_copy)
			return 1;
		s->run_lo = m->start;
	}
	s->run_hi = m->end;
	if (copy) {
		s->copy = m->start;
		s->run_has_copy = true;
	}
	return 0;
}

/* The file offset of address addr of elf: 0 and *off, or -ENOENT. */
static int file_offset(Elf *elf, uint64_t addr, uint64_t *off)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOENT;
	for (size_t i = 0; i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Reads the binary of s->first into v: HS_V8_ABSENT when it has no v8dbg_* symbol. */
static enum hs_v8_found read_binary(int32_t pid, struct scan *s, struct hs_v8 *v, char *why, size_t whylen)
{
	struct hs_v8_syms syms = {0};
	enum hs_v8_found found = HS_V8_UNSUPPORTED;
	GElf_Ehdr eh;
	Elf *elf;
	int fd, rc;

	if ((fd = hs_rt_open_mapped(pid, &s->first)) < 0) {
		snprintf(why, whylen, "v8: cannot open '%.200s'", s->first.path);
		return HS_V8_UNSUPPORTED;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		snprintf(why, whylen, "v8: '%.200s' is not an x86_64 ELF file", s->first.path);
		goto out;
	}
	if ((rc = hs_v8_syms_read(elf, &syms)) == -ENOENT) {
		found = HS_V8_ABSENT;
		goto out;
	}
	if (rc) {
		snprintf(why, whylen, "v8: '%.200s': its v8dbg_ symbols cannot be read", s->first.path);
		goto out;
	}
	if (hs_v8_layout_read(&syms, &v->lay, why, whylen))
		goto out;
	if (hs_rt_load_bias(elf, &s->first, &v->bias)) {
		snprintf(why, whylen, "v8: '%.200s' is mapped where none of its segments is", s->first.path);
		goto out;
	}
	if (!syms.blob || file_offset(elf, syms.blob, &s->blob_off)) {
		snprintf(why, whylen, "v8: '%.200s' has no embedded builtins that can be found", s->first.path);
		goto out;
	}
	v->blob = v->bias + syms.blob;
	v->blob_size = syms.blob_size;
	if (syms.trampoline >= syms.blob && syms.trampoline + syms.trampoline_size <= syms.blob + syms.blob_size) {
		v->trampoline = v->bias + syms.trampoline;
		v->trampoline_size = syms.trampoline_size;
	}
	snprintf(v->path, sizeof(v->path), "%s", s->first.path);
	found = HS_V8_SUPPORTED;
out:
	hs_v8_syms_release(&syms);
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

enum hs_v8_found hs_v8_find(int32_t pid, struct hs_v8 *ret, char *why, size_t whylen)
{
	struct scan s = {0};
	struct hs_v8 v = {0};
	char buf[256] = "";
	enum hs_v8_found found;

	if (hs_rt_maps_each(pid, first_binary, &s) != 1 || !s.found)
		return HS_V8_ABSENT;
	found = read_binary(pid, &s, &v, buf, sizeof(buf));
	if (found == HS_V8_UNSUPPORTED && why && whylen)
		snprintf(why, whylen, "%s", buf);
	if (found != HS_V8_SUPPORTED)
		return found;
	/* the copy is made when the first isolate starts: it may not be there yet */
	s.blob_at = v.blob;
	if (hs_rt_maps_all(pid, code_range, &s) >= 0 && s.run_has_copy) {
		v.blob_copy = s.copy;
		v.jit_lo = s.run_lo;
		v.jit_hi = s.run_hi;
	}
	*ret = v;
	return HS_V8_SUPPORTED;
}
