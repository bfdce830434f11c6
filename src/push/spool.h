/* The push spool (record --push-spool DIR): profiles waiting on disk for the store, each in a
 * file of its own written whole (temporary file, fsync, rename) before it is sent and removed
 * once the store took it, so that a kill loses none. The directory is trusted only when
 * hotstack's user owns it and no one else can write it, and is never reached through a link;
 * a file hotstack did not write there is never read as a profile nor removed. */
#ifndef HS_PUSH_SPOOL_H
#define HS_PUSH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_error;

/* The largest profile file: a bigger one is not spooled (it waits in memory), and a file
 * this large in the spool is not one hotstack wrote. */
#define HS_SPOOL_FILE_MAX ((uint64_t)64 << 20)
/* Profiles in the spool: the oldest are dropped past it, as past the spool's bytes. */
#define HS_SPOOL_MAX_FILES 65536
/* The longest series name a spool file holds */
#define HS_SPOOL_NAME_MAX 4096

/* What a spooled profile's body is, as the protocol that sends it needs it: a recording pushing
 * with one protocol leaves the others' profiles alone (kept for a recording that pushes with
 * theirs). Earlier versions' files are HS_SPOOL_INGEST. */
enum hs_spool_kind {
	HS_SPOOL_INGEST = 0, /* gzipped pprof, for Pyroscope's /ingest */
	HS_SPOOL_OTLP,       /* a gzipped OTLP ExportProfilesServiceRequest */
	HS_SPOOL_PUSH,       /* a Pyroscope push.v1 PushRequest */
	HS_SPOOL_KINDS
};

/* One profile in the spool: its file is FROM-SEQ.push, FROM its period's start (ns since the
 * epoch) and SEQ a count that orders the profiles of one period. Oldest first is (from, seq). */
struct hs_spool_entry {
	int64_t from;
	uint64_t seq;
	uint64_t size; /* the file's bytes */
};

struct hs_spool {
	int dirfd;                /* the directory, opened without following a link */
	char *path;               /* as given, for messages */
	uint64_t max_bytes;       /* the profiles' files together */
	struct hs_spool_entry *v; /* the profiles, oldest first: v[head] to v[n - 1] */
	size_t head, n, cap;
	uint64_t bytes;    /* their files' bytes */
	uint64_t next_seq; /* taken with an atomic add: hs_spool_write() runs unlocked */
	/* found by hs_spool_open(): files named as profiles that hotstack did not write (left
	 * alone; the first one's name kept), and temporary files a kill left (removed) */
	size_t foreign;
	char *foreign_name;
	size_t stale;
	/* the profiles of other kinds than the recording's: left alone, the first one's name kept */
	enum hs_spool_kind kind;
	size_t other_kind;
	char *other_kind_name;
};

/* What a spooled profile's file says of it; series points into the reader. */
struct hs_spool_reader {
	int fd;
	char series[HS_SPOOL_NAME_MAX + 1];
	int64_t from, until;
	uint64_t body_off, body_len; /* the body, as its kind has it */
	enum hs_spool_kind kind;
};

/* Opens the spool dir for a recording that pushes profiles of kind: made (0700) where missing;
 * refused where it is a link, not a directory, not owned by this process's user, writable by
 * group or others, or used by another recording (a lock held while it is open). Indexes the
 * profiles of that kind earlier recordings left, removes the temporary files a kill left, and
 * counts the files it leaves alone (others', and profiles of other kinds). Returns 0, or a
 * negative errno with err said. */
int hs_spool_open(struct hs_spool **ret, const char *dir, uint64_t max_bytes, enum hs_spool_kind kind,
		  struct hs_error *err);
/* Closes the spool (the lock released) and frees it; NULL is fine. */
void hs_spool_close(struct hs_spool *sp);
/* Writes the profile body[len] of series over [from, until), of the spool's kind, to a new file, complete and
 * synced before it gets its name; its entry in *ret (not yet in the index: hs_spool_add()).
 * The directory itself is synced by hs_spool_sync(). May run beside the index's users.
 * Returns 0, -EOVERFLOW for a profile over HS_SPOOL_FILE_MAX, or a negative errno. */
int hs_spool_write(struct hs_spool *sp, const char *series, int64_t from, int64_t until, const void *body, size_t len,
		   struct hs_spool_entry *ret);
/* Syncs the directory: the names written and removed so far survive a crash. */
int hs_spool_sync(struct hs_spool *sp);
/* Adds e to the index, in its place by (from, seq). */
void hs_spool_add(struct hs_spool *sp, const struct hs_spool_entry *e);
/* The oldest profile, or NULL. The pointer lives until the index changes. */
const struct hs_spool_entry *hs_spool_oldest(const struct hs_spool *sp);
static inline size_t hs_spool_count(const struct hs_spool *sp)
{
	return sp->n - sp->head;
}
/* Where e is in the index (0: the oldest), or -1. */
long hs_spool_find(const struct hs_spool *sp, const struct hs_spool_entry *e);
/* Removes the i-th oldest profile's entry, and with unlink_it its file (not for a file that
 * turned out not to be hotstack's). Returns 0 or a negative errno (the entry is gone from the
 * index either way). */
int hs_spool_remove(struct hs_spool *sp, size_t i, bool unlink_it);
/* Drops the oldest profiles, but the first skip of them (one being sent), until size more
 * bytes and one more file fit; returns how many were dropped. */
size_t hs_spool_make_room(struct hs_spool *sp, uint64_t size, size_t skip);
/* Opens e's file and reads its header: 0, or -EBADMSG for a file that is not one hotstack
 * spooled (or no longer: then it is left alone), or a negative errno. r->fd is the caller's
 * to close. */
int hs_spool_read_open(struct hs_spool *sp, const struct hs_spool_entry *e, struct hs_spool_reader *r);
/* The file name of e (FROM-SEQ.push) in buf. */
void hs_spool_name(const struct hs_spool_entry *e, char *buf, size_t cap);
/* Parses a spool file's name: true for FROM-SEQ.push, or with tmp, FROM-SEQ.push.tmp. */
bool hs_spool_parse_name(const char *name, int64_t *from, uint64_t *seq, bool *tmp);

#endif
