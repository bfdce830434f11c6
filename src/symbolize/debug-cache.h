/* Files whose DWARF is compressed (SHF_COMPRESSED .debug_* sections, as Debian ships its debug
 * files), kept with those sections decompressed in the user's cache directory (util/cache.h):
 * inflating libc's costs tens of milliseconds, every run that reads it, and a cache entry costs
 * that once. An entry is the same ELF file, followed by a trailer naming the file it was made
 * of (build-id, size, mtime, device and inode): a stale entry is never taken for the file. */
#ifndef HS_DEBUG_CACHE_H
#define HS_DEBUG_CACHE_H

#include <stdint.h>

#include "model/dso-file.h"

/* Below this many compressed bytes in its .debug_* sections a file gets no entry. */
#define HS_DEBUG_CACHE_MIN ((uint64_t)256 << 10)
/* Past this many bytes in the cache's debug/ directory, the least recently used entries go. */
#define HS_DEBUG_CACHE_MAX ((uint64_t)1 << 30)

/* The file an entry is made of, and the entry's name under the cache directory. */
struct hs_debug_cache_key {
	uint64_t size, mtime_ns, dev, ino;
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint64_t compressed; /* bytes of its compressed .debug_* sections */
	char name[64];       /* debug/BUILD-ID.debug, or debug/i-HASH.debug without a build-id */
};

/* The key of e, a file (not an image in memory) opened with hs_dso_elf_open() or
 * hs_dso_debug_open(). Returns 0, or -ENOENT when there is no cache directory or e is not worth
 * an entry (too little compressed DWARF, or .zdebug sections, whose names say "compressed"). */
int hs_debug_cache_key(const struct hs_dso_elf *e, struct hs_debug_cache_key *ret);

/* Opens key's entry, to be read in place of e. Returns 0 (*ret the entry: e's build-id, symfs
 * and root_pid; to be closed with hs_dso_elf_close()), -ENOENT (none, or not ours: see
 * hs_cache_open()), -ESTALE (made of another file, or of another version of e's), -EBADMSG
 * (damaged: truncated, not ELF, not e's sections). On the last two a new entry is written. */
int hs_debug_cache_open(const struct hs_debug_cache_key *key, const struct hs_dso_elf *e, struct hs_dso_elf *ret);

/* Writes key's entry from e's ELF as it is: the sections libdw decompressed when it opened it
 * (dwarf_begin_elf) as they are now, any other compressed .debug_* section decompressed here;
 * then trims the directory to HS_DEBUG_CACHE_MAX. Only by the thread using e. Returns 0 or a
 * negative errno (-EBADMSG: a section does not decompress). */
int hs_debug_cache_write(const struct hs_debug_cache_key *key, struct hs_dso_elf *e);

/* Removes entries, least recently used first (an entry's mtime: when it was written or, to
 * the hour, last used), until debug/ holds at most max bytes. Returns how many were removed. */
int hs_debug_cache_trim(uint64_t max);

#endif
