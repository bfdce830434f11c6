/* What every runtime's finder reads of a process: its memory, its mappings, and the files they
 * map (opened through the process's root, so that a container's are found): their symbols and
 * load bias. */
#ifndef HS_RT_PROC_H
#define HS_RT_PROC_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* Reads n bytes at addr of the process into buf: 0, or -1 when any of them cannot be read. */
struct hs_rt_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
	void *ctx;
};
/* n bytes at addr through mem: 0, or -1 when any cannot be read (or addr is 0, or the range
 * wraps). */
static inline int hs_rt_read(const struct hs_rt_mem *mem, uint64_t addr, void *buf, size_t n)
{
	if (!addr || addr + n < addr)
		return -1;
	return mem->read(mem->ctx, addr, buf, n);
}

/* A field of an object read into memory at p, of any alignment. */
static inline uint64_t hs_rt_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t hs_rt_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A reader of a live process's memory (process_vm_readv); ctx is the pid (intptr_t). */
struct hs_rt_mem hs_rt_mem_pid(int32_t pid);

/* A live process's memory read a page at a time, the pages kept until forgotten: the fields of
 * an object, of its map and of its tables, read one after another while a frame is named, cost
 * a system call a page rather than one each. What is kept is what the process had when it was
 * read: forget it (hs_rt_pages_forget) before and after each such read of related objects. */
#define HS_RT_PAGES 8
#define HS_RT_PAGE_SIZE 4096
struct hs_rt_pages {
	int32_t pid;
	unsigned next;                 /* the slot to fill next */
	uint64_t page[HS_RT_PAGES];    /* the address of the page in each slot + 1; 0: empty */
	uint8_t data[HS_RT_PAGES][HS_RT_PAGE_SIZE];
};
/* A reader of pid's memory through c's pages (reads over two pages go to the process at once). */
struct hs_rt_mem hs_rt_mem_pages(struct hs_rt_pages *c, int32_t pid);
void hs_rt_pages_forget(struct hs_rt_pages *c);

/* A finder's reason, formatted into why (whylen bytes; nothing when why is NULL). */
void hs_rt_why(char *why, size_t whylen, const char *fmt, ...) HS_PRINTF(3, 4);

/* A mapping of a file, as /proc/PID/maps lists it. */
struct hs_rt_mapping {
	uint64_t start, end, off, ino;
	char perms[5]; /* "r-xp" */
	char path[256]; /* "" for an anonymous mapping (hs_rt_maps_all) */
};

/* Calls fn for each mapping of a file with an absolute path in pid's maps, in their order, until
 * fn returns nonzero, and returns that; 0 at the end, or a negative errno when the maps cannot
 * be read. A line too long is skipped whole. */
int hs_rt_maps_each(int32_t pid, int (*fn)(void *arg, const struct hs_rt_mapping *m), void *arg);

/* The same, with the anonymous mappings too (those with no name: not the heap, the stack or the
 * like). */
int hs_rt_maps_all(int32_t pid, int (*fn)(void *arg, const struct hs_rt_mapping *m), void *arg);

/* The files pid maps whose names maybe() takes (not deleted ones: their symbols cannot be read
 * back), each once, in the order of the maps, at most max into out: how many, or a negative
 * errno when the maps cannot be read. For the runtimes' finders. */
int hs_rt_candidates(int32_t pid, bool (*maybe)(const char *path), struct hs_rt_mapping *out, size_t max);

/* The file m maps, through the process's root or else directly; its inode must be m's. A
 * descriptor, or -ENOENT. */
int hs_rt_open_mapped(int32_t pid, const struct hs_rt_mapping *m);

/* The values of the symbols names[0..n) in elf's symbol tables of type sh_type (SHT_DYNSYM or
 * SHT_SYMTAB; with objects, data objects only), into vals, each left as it is when it is not
 * 0 or not found. At most 4 million symbols of a table are looked at. */
void hs_rt_elf_symbols(Elf *elf, unsigned sh_type, bool objects, const char *const *names, size_t n, uint64_t *vals);

/* The load bias of mapping m of elf (the file byte at offset m->off is at m->start; the load
 * segment holding it says which address the file meant for that byte): 0, or -ENOENT. */
int hs_rt_load_bias(Elf *elf, const struct hs_rt_mapping *m, uint64_t *bias);

/* Whether every load segment of elf (mapped as m, at bias) is mapped in pid as the dynamic
 * loader leaves it: its pages from the file at their offsets, its zeroed ones (.bss) not from
 * the file. 0, or -EAGAIN while the loader is still mapping it (it maps the whole span from the
 * file's start first, then each segment over it: a variable read before may read other bytes
 * of the file), or when the maps cannot be read. */
int hs_rt_segments_mapped(int32_t pid, Elf *elf, const struct hs_rt_mapping *m, uint64_t bias);

#endif
