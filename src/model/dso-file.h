/* Opening the ELF image a dso was mapped from, the one way every stage that reads code does it:
 * the descriptor captured while the file was mapped; else the file at the path (under --symfs
 * first, then inside the process's root when it has its own, then as it is), only if it is the
 * same file (build-id, or device and inode), else a copy of that build-id in perf's build-id
 * cache; for the vdso, the bytes of our own (the same kernel's image). And its debug
 * information, found where gdb finds it. */
#ifndef HS_DSO_FILE_H
#define HS_DSO_FILE_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/model.h"

struct hs_dso_elf {
	Elf *elf;
	int fd;        /* -1 for an image in memory */
	void *image;   /* the memory image, owned */
	uint8_t build_id[20];
	uint8_t build_id_size;
	dev_t dev;     /* of the open file, 0 for memory */
	ino_t ino;
	/* where its debug files are looked for first */
	const char *symfs; /* the dso's symfs directory (borrowed), or NULL */
	int32_t root_pid;  /* > 0: the file is in process PID's own file system (/proc/PID/root) */
};

/* Returns 0; -ENOENT/-EACCES/... when nothing could be opened, -ESTALE when the file at the
 * path is not the one that was mapped, -EBADMSG when it is not ELF. *ret needs
 * hs_dso_elf_close() after 0 only. Anonymous memory gives -ENOENT.
 * A file found by path is looked for, in order, at d->symfs + path (identity: the build-id when
 * known, else none: another machine's inodes mean nothing here), at /proc/PID/root + path
 * (PID = d->pid_hint) when that process has another root or mount namespace than ours, and at
 * path; the first that exists and passes the identity checks is taken. */
int hs_dso_elf_open(const struct hs_dso *d, struct hs_dso_elf *ret);
void hs_dso_elf_close(struct hs_dso_elf *e);

/* The separate debug file of an opened ELF, found as gdb finds it, under main->symfs first, then
 * under /proc/PID/root (PID = main->root_pid), then under our root:
 *  1. by build-id, DEBUG/.build-id/xx/yyyy.debug;
 *  2. by .gnu_debuglink: beside the file, in its .debug/ directory, and under DEBUG + the file's
 *     directory; the right one has main's build-id when both have one, and the link's CRC, which
 *     is computed for files up to 1 GiB and 8 GiB in all in a process: past that, a file is
 *     taken on a matching build-id alone;
 *  3. when DEBUGINFOD_URLS is set and not empty, from debuginfod by build-id (libdebuginfod,
 *     with its cache in $XDG_CACHE_HOME/debuginfod_client); each build-id is asked once per
 *     process, through one client, and any failure is "not found".
 * DEBUG is $HOTSTACK_DEBUG_DIR when set and not empty, else /usr/lib/debug. path is where the
 * file was mapped from. Only regular files are opened, here and by hs_dso_elf_open(): anything
 * else at a path (a FIFO, a device, a link to one) counts as no file (util/infile.h). Returns 0 or
 * -ENOENT. Serialized by a lock (debuginfod's state). */
int hs_dso_debug_open(const struct hs_dso_elf *main, const char *path, struct hs_dso_elf *ret);

/* The DWARF supplementary file (dwz's, named with its build-id in .gnu_debugaltlink) of e,
 * found where libdw looks for it: DEBUG/.build-id/xx/yyyy.debug, then the name (an absolute one
 * as it is, a relative one beside e's file), under e's symfs, then its process's root, then
 * ours; only a regular file with that build-id. Returns 0 or -ENOENT. libdw's own lookup opens
 * these paths with a blocking open(): the symbolizer hands libdw this one instead. */
int hs_dso_alt_open(const struct hs_dso_elf *e, const char *name, const uint8_t *id, size_t id_size,
		    struct hs_dso_elf *ret);

/* Fedora's MiniDebugInfo: the ELF image, holding a .symtab of the functions .dynsym lacks, that
 * main carries xz-compressed in its .gnu_debugdata section. Its addresses are main's. Returns 0
 * (*ret an image in memory), -ENOENT (no such section), -EBADMSG (not xz, or not ELF inside), or
 * -EOVERFLOW (more than HS_MINIDEBUG_MAX_SIZE bytes decompressed, or more than
 * HS_MINIDEBUG_MIN_SIZE plus HS_MINIDEBUG_RATIO times the section's size). */
#define HS_MINIDEBUG_MAX_SIZE ((size_t)256 << 20)
#define HS_MINIDEBUG_MIN_SIZE ((uint64_t)1 << 20)
#define HS_MINIDEBUG_RATIO 64u
int hs_dso_minidebug_open(const struct hs_dso_elf *main, struct hs_dso_elf *ret);

/* Whether process pid sees another file system than we do: another root directory, or another
 * mount namespace. False when it cannot be told (no such process, no permission). */
bool hs_pid_has_own_root(int32_t pid);

/* The directory perf's build-id cache keeps a file of this build-id in ($PERF_BUILDID_DIR or
 * ~/.debug, then .build-id/xx/yyyy); returns its length, 0 when there is no home. */
size_t hs_buildid_cache_path(const uint8_t *id, size_t n, char *buf, size_t cap);

/* A cache key for what was opened: its build-id, else its device and inode (never ~0). */
uint64_t hs_dso_elf_key(const struct hs_dso_elf *e);

#endif
