/* Opening the ELF image a dso was mapped from, the one way every stage that reads code does it:
 * the descriptor captured while the file was mapped; else the file at the path, only if it is
 * the same file (build-id, or device and inode), else a copy of that build-id in perf's
 * build-id cache; for the vdso, the bytes in the process's memory (or in ours). */
#ifndef HS_DSO_FILE_H
#define HS_DSO_FILE_H

#include <libelf.h>
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
};

/* Returns 0; -ENOENT/-EACCES/... when nothing could be opened, -ESTALE when the file at the
 * path is not the one that was mapped, -EBADMSG when it is not ELF. *ret needs
 * hs_dso_elf_close() after 0 only. Anonymous memory gives -ENOENT. */
int hs_dso_elf_open(const struct hs_dso *d, struct hs_dso_elf *ret);
void hs_dso_elf_close(struct hs_dso_elf *e);
/* The separate debug file of an opened ELF, found as gdb finds it: by build-id under
 * /usr/lib/debug/.build-id/xx/yyyy.debug, else by .gnu_debuglink (its CRC checked) beside the
 * file, in its .debug/ directory, and under /usr/lib/debug. path is where the file was mapped
 * from. Returns 0 or -ENOENT. */
int hs_dso_debug_open(const struct hs_dso_elf *main, const char *path, struct hs_dso_elf *ret);

/* The directory perf's build-id cache keeps a file of this build-id in ($PERF_BUILDID_DIR or
 * ~/.debug, then .build-id/xx/yyyy); returns its length, 0 when there is no home. */
size_t hs_buildid_cache_path(const uint8_t *id, size_t n, char *buf, size_t cap);

/* A cache key for what was opened: its build-id, else its device and inode (never ~0). */
uint64_t hs_dso_elf_key(const struct hs_dso_elf *e);

#endif
