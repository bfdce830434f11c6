/* Reading a runtime's process from outside (proc.h). */
#include "runtime/proc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/infile.h"
#include "util/util.h"

#define MAX_SYMBOLS 4000000 /* symbols looked at per table: a hostile count ends the search */

static int pid_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	if (!n)
		return 0;
	return process_vm_readv((pid_t)(intptr_t)ctx, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

struct hs_rt_mem hs_rt_mem_pid(int32_t pid)
{
	return (struct hs_rt_mem){pid_read, (void *)(intptr_t)pid};
}

static int pages_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct hs_rt_pages *c = ctx;
	uint8_t *out = buf;

	if (n > 2 * HS_RT_PAGE_SIZE)
		return pid_read((void *)(intptr_t)c->pid, addr, buf, n);
	while (n) {
		uint64_t page = addr & ~(uint64_t)(HS_RT_PAGE_SIZE - 1);
		size_t off = (size_t)(addr - page), k = HS_MIN(n, HS_RT_PAGE_SIZE - off);
		unsigned i = 0;

		while (i < HS_RT_PAGES && c->page[i] != page + 1)
			i++;
		if (i == HS_RT_PAGES) {
			i = c->next;
			c->next = (c->next + 1) % HS_RT_PAGES;
			c->page[i] = 0;
			if (pid_read((void *)(intptr_t)c->pid, page, c->data[i], HS_RT_PAGE_SIZE))
				return -1;
			c->page[i] = page + 1;
		}
		memcpy(out, c->data[i] + off, k);
		out += k;
		addr += k;
		n -= k;
	}
	return 0;
}

struct hs_rt_mem hs_rt_mem_pages(struct hs_rt_pages *c, int32_t pid)
{
	c->pid = pid;
	hs_rt_pages_forget(c);
	return (struct hs_rt_mem){pages_read, c};
}

void hs_rt_pages_forget(struct hs_rt_pages *c)
{
	memset(c->page, 0, sizeof(c->page));
	c->next = 0;
}

static int maps_each(int32_t pid, int (*fn)(void *arg, const struct hs_rt_mapping *m), void *arg, bool anon)
{
	char buf[600];
	int rc = 0;
	FILE *f;

	snprintf(buf, sizeof(buf), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(buf, "re")))
		return -errno;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		struct hs_rt_mapping m;
		uint64_t end;
		int pos = 0;
		size_t plen;

		if (!strchr(buf, '\n')) {
			/* a name too long for buf: skip the rest of its line, not read it as a line */
			int ch;
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %" SCNu64 " %n", &m.start, &end, m.perms,
			   &m.off, &m.ino, &pos) < 5 ||
		    !pos)
			continue;
		m.end = end;
		plen = strcspn(buf + pos, "\n");
		if (anon && !m.ino && !plen) {
			m.path[0] = 0;
			rc = fn(arg, &m);
			continue;
		}
		if (!m.ino || buf[pos] != '/' || plen >= sizeof(m.path))
			continue;
		memcpy(m.path, buf + pos, plen);
		m.path[plen] = 0;
		rc = fn(arg, &m);
	}
	fclose(f);
	return rc;
}

int hs_rt_maps_each(int32_t pid, int (*fn)(void *arg, const struct hs_rt_mapping *m), void *arg)
{
	return maps_each(pid, fn, arg, false);
}

int hs_rt_maps_all(int32_t pid, int (*fn)(void *arg, const struct hs_rt_mapping *m), void *arg)
{
	return maps_each(pid, fn, arg, true);
}

int hs_rt_open_mapped(int32_t pid, const struct hs_rt_mapping *m)
{
	char buf[512];
	const char *paths[2] = {buf, m->path};
	struct stat st;

	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, m->path);
	for (int i = 0; i < 2; i++) {
		int fd = hs_infile_open(paths[i], 0, &st);
		if (fd < 0)
			continue;
		if (st.st_ino == m->ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static void scan_table(Elf *elf, Elf_Scn *scn, bool objects, const char *const *names, size_t nnames, uint64_t *vals)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SYMBOLS);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    (objects && GELF_ST_TYPE(sym.st_info) != STT_OBJECT))
			continue;
		if (!(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
			continue;
		for (size_t w = 0; w < nnames; w++)
			if (!vals[w] && !strcmp(name, names[w]))
				vals[w] = sym.st_value;
	}
}

void hs_rt_elf_symbols(Elf *elf, unsigned sh_type, bool objects, const char *const *names, size_t n, uint64_t *vals)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type)
			scan_table(elf, scn, objects, names, n, vals);
	}
}

int hs_rt_load_bias(Elf *elf, const struct hs_rt_mapping *m, uint64_t *bias)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOENT;
	for (size_t i = 0; i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		uint64_t pgoff;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		pgoff = ph.p_offset & ~(uint64_t)4095;
		if (m->off >= pgoff && m->off < ph.p_offset + ph.p_filesz) {
			*bias = m->start - m->off - (ph.p_vaddr - ph.p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

#define MAX_SEGMENTS 16

struct segments_look {
	const struct hs_rt_mapping *file;
	size_t n;
	struct {
		uint64_t addr, off; /* its first page, and the file offset that page must hold */
		uint64_t bss;       /* its first page past the file's part (0: none) */
		bool seen, bss_file;
	} seg[MAX_SEGMENTS];
};

static int segment_seen(void *arg, const struct hs_rt_mapping *m)
{
	struct segments_look *l = arg;

	if (m->ino != l->file->ino || strcmp(m->path, l->file->path))
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		if (m->start <= l->seg[i].addr && l->seg[i].addr < m->end &&
		    m->off + (l->seg[i].addr - m->start) == l->seg[i].off)
			l->seg[i].seen = true;
		if (l->seg[i].bss && m->start <= l->seg[i].bss && l->seg[i].bss < m->end)
			l->seg[i].bss_file = true;
	}
	return 0;
}

int hs_rt_segments_mapped(int32_t pid, Elf *elf, const struct hs_rt_mapping *m, uint64_t bias)
{
	struct segments_look l = {.file = m};
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EAGAIN;
	for (size_t i = 0; i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		uint64_t file_end;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (l.n == MAX_SEGMENTS)
			return -EAGAIN; /* no loader maps so many: not a file to read */
		l.seg[l.n].addr = bias + (ph.p_vaddr & ~(uint64_t)4095);
		l.seg[l.n].off = ph.p_offset & ~(uint64_t)4095;
		/* a segment's zeroed pages (.bss) are the loader's anonymous ones: while the span
		 * from the file's start still covers them, they hold other bytes of the file */
		file_end = (ph.p_vaddr + ph.p_filesz + 4095) & ~(uint64_t)4095;
		if (file_end < ph.p_vaddr + ph.p_memsz)
			l.seg[l.n].bss = bias + file_end;
		l.n++;
	}
	if (!l.n || hs_rt_maps_each(pid, segment_seen, &l) < 0)
		return -EAGAIN;
	for (size_t i = 0; i < l.n; i++)
		if (!l.seg[i].seen || l.seg[i].bss_file)
			return -EAGAIN;
	return 0;
}

void hs_rt_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

struct candidates {
	bool (*maybe)(const char *path);
	struct hs_rt_mapping *out;
	size_t n, max;
};

static int candidate(void *arg, const struct hs_rt_mapping *m)
{
	struct candidates *c = arg;

	if (strstr(m->path, " (deleted)") || !c->maybe(m->path))
		return 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->out[i].path, m->path))
			return 0;
	if (c->n == c->max)
		return 1;
	c->out[c->n++] = *m;
	return 0;
}

int hs_rt_candidates(int32_t pid, bool (*maybe)(const char *path), struct hs_rt_mapping *out, size_t max)
{
	struct candidates c = {maybe, out, 0, max};
	int rc = hs_rt_maps_each(pid, candidate, &c);

	return rc < 0 ? rc : (int)c.n;
}
