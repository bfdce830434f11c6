/* Finding a process's V8: the binary of its maps that carries V8's metadata (node, or a
 * libnode.so), opened through /proc/PID/root so that a container's is found, its layout, and
 * where the process runs the embedded builtins from (the binary's text, and the copy V8 maps
 * next to its compiled code so that calls to them are short). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
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

/* The last binary read: a node that is starting is looked at every few milliseconds until its
 * code range is made, and its symbols (hundreds of thousands) are read once. */
static struct {
	pthread_mutex_t lock;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd; /* -1: none */
	Elf *elf;
	enum hs_v8_found found;
	char why[256];
	struct hs_v8_syms syms;
	struct hs_v8_layout lay;
} last = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0, 0}, -1, NULL, HS_V8_ABSENT, "", {0}, {0}};

/* Reads the binary open at fd into last (its lock held): its symbols and layout, or why not. */
static void read_symbols(int fd, const struct stat *st, const char *path)
{
	GElf_Ehdr eh;
	int rc;

	if (last.fd >= 0) {
		hs_v8_syms_release(&last.syms);
		if (last.elf)
			elf_end(last.elf);
		close(last.fd);
	}
	last.fd = fd;
	last.dev = st->st_dev;
	last.ino = st->st_ino;
	last.size = st->st_size;
	last.mtime = st->st_mtim;
	last.found = HS_V8_UNSUPPORTED;
	last.why[0] = 0;
	elf_version(EV_CURRENT);
	last.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!last.elf || !gelf_getehdr(last.elf, &eh) || eh.e_machine != EM_X86_64) {
		snprintf(last.why, sizeof(last.why), "v8: '%.200s' is not an x86_64 ELF file", path);
		return;
	}
	if ((rc = hs_v8_syms_read(last.elf, &last.syms)) == -ENOENT) {
		last.found = HS_V8_ABSENT;
		return;
	}
	if (rc) {
		snprintf(last.why, sizeof(last.why), "v8: '%.200s': its v8dbg_ symbols cannot be read", path);
		return;
	}
	if (!hs_v8_layout_read(&last.syms, &last.lay, last.why, sizeof(last.why)))
		last.found = HS_V8_SUPPORTED;
}

/* Reads the binary of s->first into v: HS_V8_ABSENT when it has no v8dbg_* symbol. */
static enum hs_v8_found read_binary(int32_t pid, struct scan *s, struct hs_v8 *v, char *why, size_t whylen)
{
	const struct hs_v8_syms *syms = &last.syms;
	enum hs_v8_found found = HS_V8_UNSUPPORTED;
	struct stat st;
	int fd;

	if ((fd = hs_rt_open_mapped(pid, &s->first)) < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, whylen, "v8: cannot open '%.200s'", s->first.path);
		return HS_V8_UNSUPPORTED;
	}
	pthread_mutex_lock(&last.lock);
	if (last.fd >= 0 && last.dev == st.st_dev && last.ino == st.st_ino && last.size == st.st_size &&
	    last.mtime.tv_sec == st.st_mtim.tv_sec && last.mtime.tv_nsec == st.st_mtim.tv_nsec)
		close(fd);
	else
		read_symbols(fd, &st, s->first.path);
	if (last.found != HS_V8_SUPPORTED) {
		snprintf(why, whylen, "%s", last.why);
		found = last.found;
		goto out;
	}
	v->lay = last.lay;
	if (hs_rt_load_bias(last.elf, &s->first, &v->bias)) {
		snprintf(why, whylen, "v8: '%.200s' is mapped where none of its segments is", s->first.path);
		goto out;
	}
	if (!syms->blob || file_offset(last.elf, syms->blob, &s->blob_off)) {
		snprintf(why, whylen, "v8: '%.200s' has no embedded builtins that can be found", s->first.path);
		goto out;
	}
	v->blob = v->bias + syms->blob;
	v->blob_size = syms->blob_size;
	if (syms->trampoline >= syms->blob && syms->trampoline + syms->trampoline_size <= syms->blob + syms->blob_size) {
		v->trampoline = v->bias + syms->trampoline;
		v->trampoline_size = syms->trampoline_size;
	}
	snprintf(v->path, sizeof(v->path), "%s", s->first.path);
	found = HS_V8_SUPPORTED;
out:
	pthread_mutex_unlock(&last.lock);
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
