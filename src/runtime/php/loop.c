/* Where the engine's VM loop is in a PHP binary stripped to its exported symbols: execute_ex,
 * and the part of it the compiler moved away from its hot code (execute_ex.cold), which has no
 * symbol and would be taken for the engine's plumbing. A sample in that part is a run of
 * execute_ex like any other: without it, its run's frames would be merged into the run that
 * called it, under the native frames between the two. The part is found by its call frame
 * information: GCC writes the FDE of a function's cold part right after the function's own. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/php/php.h"
#include "util/infile.h"
#include "util/util.h"

#define MAX_FILES 8

/* A binary looked at: by path, device and inode, and by build id. */
struct loop_code {
	char path[256];
	dev_t dev;
	ino_t ino;
	char build_id[129]; /* lower-case hex; "" when it has none */
	uint64_t lo, hi; /* execute_ex's cold part, in the file's addresses; lo == hi: none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct loop_code files[MAX_FILES];
static unsigned nfiles, next_slot;

struct reader {
	const uint8_t *p, *end;
	uint64_t vaddr; /* of the byte at p's section start */
	const uint8_t *start;
	bool bad;
};

static uint64_t rd(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n); /* little-endian: x86_64 only */
	r->p += n;
	return v;
}

static uint64_t uleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = (uint8_t)rd(r, 1);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80) || r->bad)
			return v;
	}
	r->bad = true;
	return 0;
}

/* A pointer of DWARF EH encoding enc (absolute or pc-relative, 4 or 8 bytes). */
static uint64_t pointer(struct reader *r, uint8_t enc)
{
	uint64_t at = r->vaddr + (uint64_t)(r->p - r->start), v;

	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		v = rd(r, 8);
		break;
	case 0x03: /* udata4 */
		v = rd(r, 4);
		break;
	case 0x0b: /* sdata4 */
		v = (uint64_t)(int64_t)(int32_t)rd(r, 4);
		break;
	default:
		r->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		return v;
	case 0x10: /* pcrel */
		return at + v;
	default:
		r->bad = true;
		return 0;
	}
}

/* The FDE pointer encoding of the CIE at cie (its length field): 0, or -1. */
static int cie_encoding(const struct reader *sec, const uint8_t *cie, uint8_t *enc)
{
	struct reader r = *sec;
	const char *aug;
	size_t auglen;
	uint32_t len;
	uint8_t version;

	r.p = cie;
	len = (uint32_t)rd(&r, 4);
	if (r.bad || len == 0xffffffff || len > (size_t)(r.end - r.p))
		return -1;
	r.end = r.p + len;
	if (rd(&r, 4) != 0) /* a CIE's id */
		return -1;
	version = (uint8_t)rd(&r, 1);
	aug = (const char *)r.p;
	auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (r.bad || auglen == (size_t)(r.end - r.p) || (version != 1 && version != 3))
		return -1;
	r.p += auglen + 1;
	*enc = 0; /* absptr without 'R' */
	if (aug[0] != 'z')
		return aug[0] ? -1 : 0;
	uleb(&r);                            /* code alignment */
	uleb(&r);                            /* data alignment (sleb: its bytes are skipped alike) */
	version == 1 ? rd(&r, 1) : uleb(&r); /* return address register */
	uleb(&r);                            /* augmentation data length */
	for (size_t i = 1; i < auglen && !r.bad; i++) {
		if (aug[i] == 'R')
			*enc = (uint8_t)rd(&r, 1);
		else if (aug[i] == 'P') {
			uint8_t penc = (uint8_t)rd(&r, 1);
			pointer(&r, penc);
		} else if (aug[i] == 'L')
			rd(&r, 1);
		else if (aug[i] != 'S' && aug[i] != 'B')
			return -1;
	}
	return r.bad ? -1 : 0;
}

/* execute_ex's cold part in elf (execute_ex at fn, size bytes): the range of the FDE after
 * execute_ex's in .eh_frame, when it lies outside execute_ex and no exported function is in it. */
static void find_cold(Elf *elf, uint64_t fn, uint64_t size, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const Elf_Data *d = NULL;
	GElf_Shdr eh = {0};
	struct reader sec;
	bool after = false;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (gelf_getshdr(scn, &eh) && (n = elf_strptr(elf, shstrndx, eh.sh_name)) && !strcmp(n, ".eh_frame")) {
			d = elf_getdata(scn, NULL);
			break;
		}
	}
	if (!d || !d->d_buf)
		return;
	sec = (struct reader){d->d_buf, (const uint8_t *)d->d_buf + d->d_size, eh.sh_addr, d->d_buf, false};
	while (sec.end - sec.p >= 8) {
		struct reader r = sec;
		uint32_t len = (uint32_t)rd(&r, 4), id;
		const uint8_t *body = r.p;
		uint64_t begin, range;
		uint8_t enc;

		if (!len || len == 0xffffffff || len > (size_t)(r.end - r.p))
			return;
		sec.p = body + len;
		id = (uint32_t)rd(&r, 4);
		if (!id)
			continue; /* a CIE */
		if (id > (size_t)(body - sec.start) || cie_encoding(&sec, body - id, &enc))
			return;
		begin = pointer(&r, enc);
		range = pointer(&r, enc & 0x0f);
		if (r.bad)
			return;
		if (after) {
			if (begin + range <= fn || begin >= fn + size) {
				*lo = begin;
				*hi = begin + range;
			}
			return;
		}
		after = begin == fn;
	}
}

/* Whether an exported function of elf lies in [lo, hi). */
static bool exported_in(Elf *elf, uint64_t lo, uint64_t hi)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && i < 4000000; i++) {
			GElf_Sym s;
			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    s.st_shndx != SHN_UNDEF && s.st_value >= lo && s.st_value < hi)
				return true;
		}
	}
	return false;
}

/* elf's GNU build id, as lower-case hex, into out ("" when it has none). */
static void build_id(Elf *elf, char *out, size_t cap)
{
	Elf_Scn *scn = NULL;

	out[0] = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name, desc;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name, "GNU", 4) && nh.n_descsz * 2 < cap) {
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(out + 2 * i, 3, "%02x", ((const uint8_t *)d->d_buf)[desc + i]);
				return;
			}
	}
}

/* Looks at the file open as fd: its build id and cold part into c. */
static void look(int fd, struct loop_code *c)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t fn = 0, size = 0;
	Elf_Scn *scn = NULL;

	c->lo = c->hi = 0;
	c->build_id[0] = 0;
	if (!elf)
		return;
	build_id(elf, c->build_id, sizeof(c->build_id));
	while ((scn = elf_nextscn(elf, scn)) && !fn) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && i < 4000000; i++) {
			GElf_Sym s;
			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_value &&
			    (n = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(n, "execute_ex")) {
				fn = s.st_value;
				size = s.st_size;
				break;
			}
		}
	}
	if (fn && size)
		find_cold(elf, fn, size, &c->lo, &c->hi);
	if (c->lo < c->hi && exported_in(elf, c->lo, c->hi))
		c->lo = c->hi = 0;
	elf_end(elf);
}

/* The entry of the file at path open as fd (st: its status), looked at now if it was not; under
 * the lock. */
static struct loop_code *entry(int fd, const char *path, const struct stat *st)
{
	struct loop_code *c;

	for (unsigned i = 0; i < nfiles; i++)
		if (files[i].dev == st->st_dev && files[i].ino == st->st_ino && !strcmp(files[i].path, path))
			return &files[i];
	c = &files[nfiles < MAX_FILES ? nfiles++ : next_slot++ % MAX_FILES];
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->dev = st->st_dev;
	c->ino = st->st_ino;
	elf_version(EV_CURRENT);
	look(fd, c);
	return c;
}

void hs_php_loop_note(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st))
		return;
	pthread_mutex_lock(&lock);
	entry(fd, path, &st);
	pthread_mutex_unlock(&lock);
}

bool hs_php_loop_part(const char *path, const char *build, uint64_t *lo, uint64_t *hi)
{
	const struct loop_code *c = NULL;
	struct stat st;
	int fd;

	pthread_mutex_lock(&lock);
	/* by build id first: the file a process maps may not be at its path here (a container's) */
	for (unsigned i = 0; i < nfiles && build && *build && !c; i++)
		if (!strcmp(files[i].build_id, build))
			c = &files[i];
	if (!c && (fd = hs_infile_open(path, 0, &st)) >= 0) {
		c = entry(fd, path, &st);
		close(fd);
		if (build && *build && strcmp(c->build_id, build))
			c = NULL; /* another file at that path */
	}
	if (c) {
		*lo = c->lo;
		*hi = c->hi;
	}
	pthread_mutex_unlock(&lock);
	return c && c->lo < c->hi;
}

enum hs_ip_native hs_php_unnamed_class(const char *path, const char *build, uint64_t vaddr)
{
	uint64_t lo, hi;

	return hs_php_loop_part(path, build, &lo, &hi) && vaddr >= lo && vaddr < hi ? HS_IP_NATIVE_LOOP
										    : HS_IP_NATIVE_PLUMBING;
}
