/* Output files that never leave a half-written result behind: data goes to a temporary file
 * created beside the target (O_EXCL, so a planted link is never followed) and is renamed over
 * the target only when every write succeeded; a symbolic link at the target is replaced, not
 * followed. "-" (or /dev/stdout) writes to standard output instead, /dev/stderr and /dev/fd/N
 * to those descriptors. A character device or a pipe at the target
 * (not a regular file: /dev/null, a FIFO) is written to directly when it is root's or ours; so is
 * one reached through a link that is root's or ours (/dev/stdout), never through anyone else's. */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct hs_outfile {
	char *path;   /* the target, owned */
	char *tmp;    /* the temporary file, owned; NULL for stdout */
	int fd;
	bool direct;  /* fd is the target itself (a device or a pipe), closed at the end */
	bool mem;     /* no file: everything written stays in buf (hs_outfile_open_mem()) */
	int err;      /* first error (positive errno), 0 if none */
	char *buf;
	size_t len, cap;
};

/* Opens path for writing. Returns 0 or a negative errno (the target's directory is not
 * writable, ...); *ret is initialised in both cases and must be released with
 * hs_outfile_abort() or hs_outfile_commit(). */
int hs_outfile_open(struct hs_outfile *ret, const char *path);
/* Opens an output that keeps everything written in memory, for hs_outfile_take_mem(). */
void hs_outfile_open_mem(struct hs_outfile *ret);
/* The bytes written to an output of hs_outfile_open_mem() (*len of them; the caller frees
 * them); releases o. */
uint8_t *hs_outfile_take_mem(struct hs_outfile *o, size_t *len);
/* Whether path names a directory (through links too): an output cannot be written there
 * (hs_outfile_open() returns -EISDIR). */
bool hs_outfile_is_dir(const char *path);
/* Keeps a regular file at path as PATH.old (an older PATH.old replaced), as perf keeps
 * perf.data.old: a second name for it, so that it stays at path until a new file replaces it
 * there (moved where links cannot be made). Nothing for anything else or nothing at path.
 * Returns 0 or a negative errno. */
int hs_outfile_keep_old(const char *path);
void hs_outfile_write(struct hs_outfile *o, const void *p, size_t n);
void hs_outfile_puts(struct hs_outfile *o, const char *s);
void hs_outfile_printf(struct hs_outfile *o, const char *fmt, ...) HS_PRINTF(2, 3);
/* Flushes, fsyncs and renames into place. Returns 0 or the negative errno of the first failed
 * write (then the target is left untouched). Releases o in every case. */
int hs_outfile_commit(struct hs_outfile *o);
/* Discards the temporary file; the target is untouched. Accepts a never-opened object. */
void hs_outfile_abort(struct hs_outfile *o);

#endif
