/* libhotstack-jit: the jitdump writer (include/hotstack/jit.h). Layouts from
 * tools/perf/Documentation/jitdump-specification.txt; the unwinding data is written .eh_frame
 * first, then .eh_frame_hdr, and a CODE_LOAD ends with the code, as perf's jitdump.c and
 * genelf.c read them. Standalone on purpose: no hotstack header, no allocation that exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "hotstack/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_VERSION 1u
#define HEADER_SIZE 40u
#define FLAG_ARCH_TIMESTAMP 1ull

enum { CODE_LOAD = 0, CODE_MOVE = 1, CODE_DEBUG_INFO = 2, CODE_CLOSE = 3, CODE_UNWINDING_INFO = 4 };

struct hsjit {
	pthread_mutex_t lock;
	int fd;
	void *marker;
	size_t marker_size;
	uint32_t pid;
	uint32_t flags;
	uint64_t next_index;
	int err; /* the first write error, negative */
};

#if defined(__x86_64__)
#define ELF_MACHINE 62
#elif defined(__aarch64__)
#define ELF_MACHINE 183
#elif defined(__i386__)
#define ELF_MACHINE 3
#elif defined(__arm__)
#define ELF_MACHINE 40
#elif defined(__riscv)
#define ELF_MACHINE 243
#elif defined(__powerpc64__)
#define ELF_MACHINE 21
#elif defined(__s390x__)
#define ELF_MACHINE 22
#else
#define ELF_MACHINE 0
#endif

static uint64_t clock_now(uint32_t flags)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (flags & HSJIT_ARCH_TIMESTAMP)
		return __rdtsc();
#else
	(void)flags;
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hsjit_timestamp(const struct hsjit *j)
{
	return clock_now(j ? j->flags : 0);
}

/* ---- bytes ---- */

struct buf {
	unsigned char *p;
	size_t n, cap;
	int err;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (n > b->cap - b->n) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *q;
		while (cap - b->n < n) {
			if (cap > SIZE_MAX / 2) {
				b->err = -ENOMEM;
				return;
			}
			cap *= 2;
		}
		q = realloc(b->p, cap);
		if (!q) {
			b->err = -ENOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

/* The record header; its size is filled in by finish_record(). */
static size_t begin_record(struct buf *b, uint32_t id, uint64_t timestamp)
{
	size_t at = b->n;
	put32(b, id);
	put32(b, 0);
	put64(b, timestamp);
	return at;
}

static void finish_record(struct buf *b, size_t at)
{
	uint32_t size;

	if (b->err)
		return;
	if (b->n - at > UINT32_MAX) {
		b->err = -E2BIG;
		return;
	}
	size = (uint32_t)(b->n - at);
	memcpy(b->p + at + 4, &size, 4);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Writes the records in b under the lock, in one write: readers see them whole and together. */
static int emit(struct hsjit *j, struct buf *b)
{
	int rc = b->err;

	if (!rc) {
		rc = write_all(j->fd, b->p, b->n);
		if (rc && !j->err)
			j->err = rc;
	}
	free(b->p);
	return rc;
}

/* ---- .eh_frame_hdr ---- */

struct reader {
	const unsigned char *p;
	size_t off, end;
	int bad;
};

static uint64_t rd(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || n > r->end - r->off) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i); /* little-endian targets only write this */
	r->off += n;
	return v;
}

static uint64_t rd_leb(struct reader *r, int sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char c;

	do {
		c = (unsigned char)rd(r, 1);
		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while ((c & 0x80) && !r->bad);
	if (sign && shift < 64 && (c & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/* A pointer in DW_EH_PE encoding enc, at address base + offset of the field; returns 0 with
 * *ok cleared for encodings this does not follow. */
static uint64_t rd_ptr(struct reader *r, unsigned enc, uint64_t base, int *ok)
{
	uint64_t field = base + r->off, v;

	switch (enc & 0x0f) {
	case 0x00: v = rd(r, 8); break;
	case 0x01: v = rd_leb(r, 0); break;
	case 0x02: v = rd(r, 2); break;
	case 0x03: v = rd(r, 4); break;
	case 0x04: v = rd(r, 8); break;
	case 0x09: v = rd_leb(r, 1); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd(r, 4); break;
	case 0x0c: v = rd(r, 8); break;
	default: *ok = 0; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field; break;
	default: *ok = 0; return 0;
	}
	return v;
}

/* The FDE pointer encoding of the CIE at off (augmentation 'R'), absptr when it has none. */
static int cie_encoding(const unsigned char *p, size_t size, size_t off, unsigned *enc)
{
	struct reader r = {p, off, size, 0};
	uint64_t len = rd(&r, 4);
	const char *aug;
	size_t aug_len;
	unsigned version;

	*enc = 0;
	if (len == 0xffffffffu || len > size - r.off || rd(&r, 4) != 0)
		return -1;
	r.end = r.off - 4 + (size_t)len;
	version = (unsigned)rd(&r, 1);
	aug = (const char *)p + r.off;
	aug_len = strnlen(aug, r.end > r.off ? r.end - r.off : 0);
	if (r.bad || r.off + aug_len >= r.end)
		return -1;
	r.off += aug_len + 1;
	if (strstr(aug, "eh"))
		r.off += 8;
	rd_leb(&r, 0);
	rd_leb(&r, 1);
	if (version == 1)
		rd(&r, 1);
	else
		rd_leb(&r, 0);
	if (aug[0] != 'z')
		return r.bad ? -1 : 0;
	rd_leb(&r, 0);
	for (const char *a = aug + 1; *a && !r.bad; a++) {
		int ok = 1;
		if (*a == 'R') {
			*enc = (unsigned)rd(&r, 1);
			return r.bad ? -1 : 0;
		} else if (*a == 'P') {
			unsigned penc = (unsigned)rd(&r, 1);
			rd_ptr(&r, penc & 0x7f, 0, &ok);
			if (!ok)
				return -1;
		} else if (*a == 'L') {
			rd(&r, 1);
		} else if (*a != 'S' && *a != 'B') {
			return -1;
		}
	}
	return r.bad ? -1 : 0;
}

struct hdr_entry {
	int64_t loc, fde;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct hdr_entry *x = a, *y = b;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

/* A .eh_frame_hdr for eh (placed at eh_addr) at hdr_addr: version 1, the .eh_frame pointer
 * pc-relative, and the sorted table of FDEs (data-relative) when every FDE could be read, else
 * none (readers then walk the .eh_frame). */
static void build_hdr(struct buf *b, const unsigned char *eh, size_t size, uint64_t eh_addr, uint64_t hdr_addr)
{
	struct hdr_entry *v = NULL;
	size_t n = 0, cap = 0, off = 0;
	int table = 1;
	unsigned char head[4] = {1, 0x1b, 0x03, 0x3b}; /* pcrel|sdata4, udata4, datarel|sdata4 */

	while (off + 4 <= size && table) {
		struct reader r = {eh, off, size, 0};
		uint64_t len = rd(&r, 4), id;
		size_t id_pos, next;
		unsigned enc;
		int ok = 1;
		uint64_t loc;

		if (len == 0)
			break;
		if (len == 0xffffffffu || len > size - r.off) {
			table = 0;
			break;
		}
		next = r.off + (size_t)len;
		id_pos = r.off;
		id = rd(&r, 4);
		if (id != 0) {
			if (id > id_pos || cie_encoding(eh, size, id_pos - (size_t)id, &enc)) {
				table = 0;
				break;
			}
			loc = rd_ptr(&r, enc, eh_addr, &ok);
			if (!ok || r.bad) {
				table = 0;
				break;
			}
			if (n == cap) {
				struct hdr_entry *q;
				cap = cap ? 2 * cap : 16;
				q = realloc(v, cap * sizeof(*v));
				if (!q) {
					table = 0;
					break;
				}
				v = q;
			}
			v[n].loc = (int64_t)(loc - hdr_addr);
			v[n].fde = (int64_t)(eh_addr + off - hdr_addr);
			if (v[n].loc != (int32_t)v[n].loc || v[n].fde != (int32_t)v[n].fde)
				table = 0;
			n++;
		}
		off = next;
	}
	if (!table || !n) {
		head[2] = 0xff; /* DW_EH_PE_omit: no table */
		head[3] = 0xff;
	}
	put(b, head, 4);
	put32(b, (uint32_t)(int32_t)(eh_addr - (hdr_addr + 4)));
	if (table && n) {
		qsort(v, n, sizeof(*v), entry_cmp);
		put32(b, (uint32_t)n);
		for (size_t i = 0; i < n; i++) {
			put32(b, (uint32_t)(int32_t)v[i].loc);
			put32(b, (uint32_t)(int32_t)v[i].fde);
		}
	}
	free(v);
}

/* ---- the API ---- */

int hsjit_open(struct hsjit **ret, const struct hsjit_options *opts)
{
	struct hsjit_options o;
	struct hsjit *j;
	struct buf b = {0};
	char path[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	int rc;

	memset(&o, 0, sizeof(o));
	if (opts) {
		if (opts->size < sizeof(size_t))
			return -EINVAL;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
#if !defined(__x86_64__) && !defined(__i386__)
	if (o.flags & HSJIT_ARCH_TIMESTAMP)
		return -EOPNOTSUPP;
#endif
	if (!o.pid)
		o.pid = (int32_t)getpid();
	if (o.path) {
		if (strlen(o.path) >= sizeof(path))
			return -ENAMETOOLONG;
		strcpy(path, o.path);
	} else {
		const char *dir = o.dir ? o.dir : getenv("JITDUMPDIR");
		int n = snprintf(path, sizeof(path), "%s/jit-%d.dump", dir && *dir ? dir : ".", (int)o.pid);
		if (n < 0 || (size_t)n >= sizeof(path))
			return -ENAMETOOLONG;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	/* not through a symbolic link: one planted in a shared directory such as /tmp would make
	 * the runtime truncate and write whatever it points to */
	j->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (j->fd < 0) {
		rc = -errno;
		free(j);
		return rc;
	}
	j->pid = (uint32_t)o.pid;
	j->flags = o.flags & HSJIT_ARCH_TIMESTAMP;
	j->next_index = 1;
	put32(&b, JITDUMP_MAGIC);
	put32(&b, JITDUMP_VERSION);
	put32(&b, HEADER_SIZE);
	put32(&b, ELF_MACHINE);
	put32(&b, 0); /* pad1 */
	put32(&b, j->pid);
	put64(&b, clock_now(j->flags));
	put64(&b, (j->flags & HSJIT_ARCH_TIMESTAMP) ? FLAG_ARCH_TIMESTAMP : 0);
	rc = b.err ? b.err : write_all(j->fd, b.p, b.n);
	free(b.p);
	if (rc) {
		close(j->fd);
		free(j);
		return rc;
	}
	/* the marker: profilers find the file among the process's executable mappings */
	j->marker_size = page > 0 ? (size_t)page : 4096;
	j->marker = mmap(NULL, j->marker_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, j->fd, 0);
	if (j->marker == MAP_FAILED) {
		rc = -errno;
		close(j->fd);
		free(j);
		return rc;
	}
	pthread_mutex_init(&j->lock, NULL);
	*ret = j;
	return 0;
}

int hsjit_code_load(struct hsjit *j, const char *name, const void *code, size_t code_size,
		    const struct hsjit_code_info *info, uint64_t *ret)
{
	struct hsjit_code_info in;
	struct buf b = {0};
	uint64_t t, index, addr = (uint64_t)(uintptr_t)code;
	size_t at;
	int rc;

	if (!j || !name || (!code && code_size))
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	if (info) {
		if (info->size < sizeof(size_t))
			return -EINVAL;
		memcpy(&in, info, info->size < sizeof(in) ? info->size : sizeof(in));
	}
	if ((in.nlines && !in.lines) || (in.eh_frame_size && !in.eh_frame) || (in.eh_frame_hdr_size && !in.eh_frame_hdr))
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	t = clock_now(j->flags);
	index = j->next_index++;
	if (in.nlines) {
		at = begin_record(&b, CODE_DEBUG_INFO, t);
		put64(&b, addr);
		put64(&b, in.nlines);
		for (size_t i = 0; i < in.nlines; i++) {
			const char *file = in.lines[i].file ? in.lines[i].file : "";
			put64(&b, in.lines[i].addr);
			put32(&b, in.lines[i].line);
			put32(&b, in.lines[i].discrim);
			put(&b, file, strlen(file) + 1);
		}
		finish_record(&b, at);
	}
	if (in.eh_frame_size) {
		/* placed as perf's genelf.c places them: .eh_frame after the code rounded up to 8,
		 * .eh_frame_hdr right after the .eh_frame */
		uint64_t eh_addr = addr + ((code_size + 7) & ~(size_t)7), hdr_addr = eh_addr + in.eh_frame_size;
		size_t size_at, hdr_start;
		uint64_t total;

		at = begin_record(&b, CODE_UNWINDING_INFO, t);
		size_at = b.n;
		put64(&b, 0); /* unwinding_size */
		put64(&b, 0); /* eh_frame_hdr_size */
		put64(&b, 0); /* mapped_size */
		put(&b, in.eh_frame, in.eh_frame_size);
		hdr_start = b.n;
		if (in.eh_frame_hdr_size)
			put(&b, in.eh_frame_hdr, in.eh_frame_hdr_size);
		else
			build_hdr(&b, in.eh_frame, in.eh_frame_size, eh_addr, hdr_addr);
		if (!b.err) {
			uint64_t hdr_size = b.n - hdr_start;
			total = in.eh_frame_size + hdr_size;
			memcpy(b.p + size_at, &total, 8);
			memcpy(b.p + size_at + 8, &hdr_size, 8);
			memcpy(b.p + size_at + 16, &total, 8); /* the runtime has it in memory */
		}
		finish_record(&b, at);
	}
	at = begin_record(&b, CODE_LOAD, t);
	put32(&b, j->pid);
	put32(&b, (uint32_t)syscall(SYS_gettid));
	put64(&b, addr); /* vma */
	put64(&b, addr); /* code_addr */
	put64(&b, code_size);
	put64(&b, index);
	put(&b, name, strlen(name) + 1);
	put(&b, code, code_size);
	finish_record(&b, at);
	rc = emit(j, &b);
	pthread_mutex_unlock(&j->lock);
	if (!rc && ret)
		*ret = index;
	return rc;
}

int hsjit_code_move(struct hsjit *j, uint64_t index, const void *old_addr, const void *new_addr, size_t code_size)
{
	struct buf b = {0};
	size_t at;
	int rc;

	if (!j)
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	at = begin_record(&b, CODE_MOVE, clock_now(j->flags));
	put32(&b, j->pid);
	put32(&b, (uint32_t)syscall(SYS_gettid));
	put64(&b, (uint64_t)(uintptr_t)new_addr); /* vma */
	put64(&b, (uint64_t)(uintptr_t)old_addr);
	put64(&b, (uint64_t)(uintptr_t)new_addr);
	put64(&b, code_size);
	put64(&b, index);
	finish_record(&b, at);
	rc = emit(j, &b);
	pthread_mutex_unlock(&j->lock);
	return rc;
}

int hsjit_close(struct hsjit *j)
{
	struct buf b = {0};
	int rc;

	if (!j)
		return 0;
	pthread_mutex_lock(&j->lock);
	finish_record(&b, begin_record(&b, CODE_CLOSE, clock_now(j->flags)));
	emit(j, &b);
	rc = j->err;
	pthread_mutex_unlock(&j->lock);
	munmap(j->marker, j->marker_size);
	if (close(j->fd) < 0 && !rc)
		rc = -errno;
	pthread_mutex_destroy(&j->lock);
	free(j);
	return rc;
}
