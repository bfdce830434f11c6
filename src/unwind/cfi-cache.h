/* Compiled CFI tables in the user's cache directory (util/cache.h): compiling libc's takes
 * milliseconds, every run that unwinds through it; an entry makes that once per file. An entry
 * is one table as it is in memory, after a header naming the file it was compiled from
 * (build-id, size, mtime, device and inode; and those of the debug file whose .debug_frame it
 * has, if any) and a hash of the table: a stale or damaged entry is
 * never taken for the file's table, and is replaced. The cache is this machine's only: entries
 * are in its byte order. */
#ifndef HS_CFI_CACHE_H
#define HS_CFI_CACHE_H

#include <stdint.h>

#include "model/dso-file.h"
#include "unwind/cfi.h"

/* Past this many bytes in the cache's cfi/ directory, the least recently used entries go. */
#define HS_CFI_CACHE_MAX ((uint64_t)128 << 20)

/* The file an entry is made of, and the entry's name under the cache directory. */
struct hs_cfi_cache_key {
	uint64_t size, mtime_ns, dev, ino;
	uint8_t build_id[20];
	uint8_t build_id_size;
	/* the separate debug file whose .debug_frame the table has too: size, mtime, device and
	 * inode, all 0 for none */
	uint64_t debug_size, debug_mtime_ns, debug_dev, debug_ino;
	char name[64]; /* cfi/BUILD-ID.cfi, or cfi/i-HASH.cfi without a build-id */
};

/* The key of the table of e, a file (not an image in memory) opened with hs_dso_elf_open(),
 * with the CFI of debug (its separate debug file, opened with hs_dso_debug_open()) when not
 * NULL. Returns 0, or -ENOENT when there is no cache directory or either is not a regular
 * file. */
int hs_cfi_cache_key(const struct hs_dso_elf *e, const struct hs_dso_elf *debug, struct hs_cfi_cache_key *ret);
/* The table of key's entry. Returns 0 (*ret to free with hs_cfi_table_free()), -ENOENT (none,
 * or not ours), -ESTALE (of another file, or another version of it), -EBADMSG (damaged). */
int hs_cfi_cache_load(const struct hs_cfi_cache_key *key, struct hs_cfi_table **ret);
/* Writes key's entry of t, then trims the directory to HS_CFI_CACHE_MAX. Returns 0 or a
 * negative errno. */
int hs_cfi_cache_store(const struct hs_cfi_cache_key *key, const struct hs_cfi_table *t);

#endif
