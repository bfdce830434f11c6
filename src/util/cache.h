/* The user's cache directory: what hotstack can derive again at any time, kept so that the next
 * run need not (the kernel's symbols parsed, debug files with their sections decompressed). It
 * is $HOTSTACK_CACHE_DIR, else $XDG_CACHE_HOME/hotstack, else $HOME/.cache/hotstack;
 * HOTSTACK_CACHE_DIR set empty turns it off. It is used only where it and its parent are owned
 * by the effective user and writable by nobody else (root run with another user's HOME leaves
 * that user's directory alone); entries are created 0600, renamed into place whole, and read
 * only when they are regular files owned by the effective user, so nobody else can plant one.
 * Every entry carries its own key: a stale or damaged one is never believed, only replaced. */
#ifndef HS_CACHE_H
#define HS_CACHE_H

#include "outfile.h"

/* The directory, created if need be, or NULL where there is none to use (turned off, no home,
 * not ours). Looked up once. */
const char *hs_cache_dir(void);
/* Opens entry name (a file name, or a path under the directory) for reading: a descriptor, or
 * a negative errno (-ENOENT when absent or when there is no cache, -EPERM when not ours). */
int hs_cache_open(const char *name);
/* Starts writing entry name (its subdirectories created 0700): as hs_outfile_open(), mode 0600.
 * Returns 0 or a negative errno; commit with hs_outfile_commit(). */
int hs_cache_create(struct hs_outfile *o, const char *name);

/* The running kernel's boot id (36 characters and a NUL), the key of what holds only until the
 * next boot. Returns 0 or a negative errno. */
int hs_boot_id(char out[37]);
/* Reads entry name whole when it is at most max bytes: a buffer (NUL-terminated after its n
 * bytes) to free, or NULL. */
char *hs_cache_read(const char *name, size_t max, size_t *n);
/* Writes entry name whole (n bytes). Returns 0 or a negative errno. */
int hs_cache_write(const char *name, const void *data, size_t n);

/* The name of the entry under dir of a file: DIR/BUILD-ID.EXT (the build-id in hex), or, for a
 * file without one, DIR/i-HASH.EXT of its device and inode (rebuilt, it replaces the entry). */
void hs_cache_entry_name(char *buf, size_t size, const char *dir, const uint8_t *build_id, size_t build_id_size,
			 uint64_t dev, uint64_t ino, const char *ext);

/* Removes the entries of subdir, least recently used first (an entry's mtime: when it was
 * written or, as its user says, last used), until it holds at most max bytes; a temporary file
 * a writer left more than ten minutes ago goes first. Returns how many were removed. */
int hs_cache_trim(const char *subdir, uint64_t max);

#endif
