/* The push spool's directory and files: see spool.h. */
#include "push/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/util.h"

/* A spool file: "HSPUSH2 FROM UNTIL NAMELEN BODYLEN\n", the series name, "\n", the body. The
 * lengths make the file's size exact, so a file cut short or grown is not taken for one.
 * HSPUSH1 files (earlier versions: no BODYLEN, the body the rest) are still read. The other
 * kinds' files (enum hs_spool_kind) are "HSPUSH3 FROM UNTIL NAMELEN BODYLEN KIND\n", then the
 * same; an ingest profile is still written as HSPUSH2, which earlier versions read too. */
#define MAGIC "HSPUSH2"
#define MAGIC_V1 "HSPUSH1"
#define MAGIC_V3 "HSPUSH3"
#define HEADER_MAX 128

void hs_spool_name(const struct hs_spool_entry *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%020" PRId64 "-%010" PRIu64 ".push", e->from, e->seq);
}

/* digits of at most max characters at *s: their value, *s moved past them */
static bool digits(const char **s, size_t max, uint64_t *ret)
{
	uint64_t v = 0;
	size_t k = 0;

	for (; **s >= '0' && **s <= '9'; (*s)++, k++) {
		if (k == max || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(**s - '0');
	}
	*ret = v;
	return k > 0;
}

bool hs_spool_parse_name(const char *name, int64_t *from, uint64_t *seq, bool *tmp)
{
	uint64_t f, q;

	if (!digits(&name, 20, &f) || f > INT64_MAX || *name++ != '-' || !digits(&name, 10, &q))
		return false;
	if (strcmp(name, ".push") && strcmp(name, ".push.tmp"))
		return false;
	*from = (int64_t)f;
	*seq = q;
	*tmp = name[5] != 0;
	return true;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), k = strlen(end);
	return n >= k && !strcmp(s + n - k, end);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct hs_spool_entry *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads the header of the file open at fd, of size bytes: 0, or -EBADMSG where it is not a
 * spool file (r untouched but for what it read). */
static int read_header(int fd, uint64_t size, struct hs_spool_reader *r)
{
	char buf[HEADER_MAX + HS_SPOOL_NAME_MAX + 2];
	char magic[8];
	long long from, until;
	unsigned long long namelen, bodylen = 0, kind = HS_SPOOL_INGEST;
	ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);
	char *nl;
	int fields = 0, used = 0;
	bool v1;

	if (got <= 0)
		return got < 0 ? -errno : -EBADMSG;
	buf[got] = 0;
	if (!(nl = memchr(buf, '\n', (size_t)HS_MIN(got, HEADER_MAX))))
		return -EBADMSG;
	*nl = 0;
	v1 = !strncmp(buf, MAGIC_V1 " ", 8);
	if (v1)
		fields = sscanf(buf, "%7s %lld %lld %llu%n", magic, &from, &until, &namelen, &used) + 1;
	else if (!strncmp(buf, MAGIC " ", 8))
		fields = sscanf(buf, "%7s %lld %lld %llu %llu%n", magic, &from, &until, &namelen, &bodylen, &used);
	else if (!strncmp(buf, MAGIC_V3 " ", 8))
		fields = sscanf(buf, "%7s %lld %lld %llu %llu %llu%n", magic, &from, &until, &namelen, &bodylen, &kind,
				&used) - 1;
	if (fields != 5 || buf + used != nl || from < 0 || until < from || namelen > HS_SPOOL_NAME_MAX ||
	    kind >= HS_SPOOL_KINDS)
		return -EBADMSG;
	r->body_off = (uint64_t)(nl + 1 - buf) + namelen + 1;
	if ((uint64_t)got < r->body_off || buf[r->body_off - 1] != '\n' || memchr(nl + 1, 0, namelen) ||
	    memchr(nl + 1, '\n', namelen) || size < r->body_off)
		return -EBADMSG;
	if (v1)
		bodylen = size - r->body_off;
	if (r->body_off + bodylen != size)
		return -EBADMSG;
	memcpy(r->series, nl + 1, namelen);
	r->series[namelen] = 0;
	r->from = from;
	r->until = until;
	r->body_len = bodylen;
	r->kind = (enum hs_spool_kind)kind;
	return 0;
}

/* Opens the file name in the spool for reading, if it is a regular file of this user's of at
 * most HS_SPOOL_FILE_MAX bytes: the fd, or a negative errno (-EBADMSG: not such a file). */
static int open_own(struct hs_spool *sp, const char *name, struct stat *st)
{
	int fd = openat(sp->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (uint64_t)st->st_size > HS_SPOOL_FILE_MAX) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

int hs_spool_read_open(struct hs_spool *sp, const struct hs_spool_entry *e, struct hs_spool_reader *r)
{
	char name[64];
	struct stat st;
	int fd, rc;

	hs_spool_name(e, name, sizeof(name));
	if ((fd = open_own(sp, name, &st)) < 0)
		return fd;
	if ((uint64_t)st.st_size != e->size || (rc = read_header(fd, (uint64_t)st.st_size, r)) || r->from != e->from) {
		close(fd);
		return -EBADMSG;
	}
	r->fd = fd;
	return 0;
}

/* Indexes the profiles in the spool, removes a kill's temporary files, counts the others */
static int scan(struct hs_spool *sp)
{
	int fd = openat(sp->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct hs_spool_entry e;
		struct hs_spool_reader r;
		struct stat st;
		bool tmp;
		int f;

		if (!hs_spool_parse_name(de->d_name, &e.from, &e.seq, &tmp)) {
			if (ends_with(de->d_name, ".push") || ends_with(de->d_name, ".push.tmp"))
				goto foreign;
			continue;
		}
		if (tmp) {
			/* the lock says no other recording writes here: a kill's leftover */
			if (fstatat(sp->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
			    st.st_uid == geteuid() && unlinkat(sp->dirfd, de->d_name, 0) == 0)
				sp->stale++;
			else
				goto foreign;
			continue;
		}
		if ((f = open_own(sp, de->d_name, &st)) < 0)
			goto foreign;
		if (read_header(f, (uint64_t)st.st_size, &r) || r.from != e.from) {
			close(f);
			goto foreign;
		}
		close(f);
		if (r.kind != sp->kind) {
			if (!sp->other_kind++)
				sp->other_kind_name = hs_xstrdup(de->d_name);
			continue;
		}
		e.size = (uint64_t)st.st_size;
		if (sp->n == sp->cap) {
			sp->cap = sp->cap ? sp->cap * 2 : 64;
			sp->v = hs_xrealloc(sp->v, sp->cap * sizeof(*sp->v));
		}
		sp->v[sp->n++] = e;
		sp->bytes += e.size;
		sp->next_seq = HS_MAX(sp->next_seq, e.seq + 1);
		continue;
foreign:
		if (!sp->foreign++)
			sp->foreign_name = hs_xstrdup(de->d_name);
	}
	closedir(d);
	if (sp->n > 1)
		qsort(sp->v, sp->n, sizeof(*sp->v), cmp_entry);
	return 0;
}

int hs_spool_open(struct hs_spool **ret, const char *dir, uint64_t max_bytes, enum hs_spool_kind kind,
		  struct hs_error *err)
{
	struct hs_spool *sp = hs_xcalloc(1, sizeof(*sp));
	struct stat st;
	int rc;

	sp->kind = kind;
	sp->dirfd = -1;
	sp->path = hs_xstrdup(dir);
	sp->max_bytes = max_bytes;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		rc = hs_error_set(err, -errno, "cannot make the push spool '%s': %s", dir, strerror(errno));
		goto fail;
	}
	/* held open from here on: what the path names later does not matter */
	sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sp->dirfd < 0) {
		rc = -errno;
		/* O_DIRECTORY on a link says ENOTDIR */
		if (errno == ELOOP || (errno == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)))
			hs_error_set(err, rc,
				     "the push spool '%s' is a symbolic link: refused (name the directory itself)",
				     dir);
		else if (errno == ENOTDIR)
			hs_error_set(err, rc, "the push spool '%s' is not a directory", dir);
		else
			hs_error_set(err, rc, "cannot open the push spool '%s': %s", dir, strerror(errno));
		goto fail;
	}
	if (fstat(sp->dirfd, &st) < 0) {
		rc = hs_error_set(err, -errno, "cannot open the push spool '%s': %s", dir, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		rc = hs_error_set(err, -EPERM,
				  "the push spool '%s' belongs to uid %u, not to this user (uid %u): refused", dir,
				  (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		rc = hs_error_set(err, -EPERM, "the push spool '%s' is writable by %s (mode %04o): refused", dir,
				  st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	/* a file system without locks (some NFS) is used unlocked: one recording per spool is
	 * then the operator's to keep */
	if (flock(sp->dirfd, LOCK_EX | LOCK_NB) < 0 && errno != ENOLCK && errno != EOPNOTSUPP) {
		rc = -errno;
		if (errno == EWOULDBLOCK)
			hs_error_set(err, -EBUSY, "the push spool '%s' is in use by another recording", dir);
		else
			hs_error_set(err, rc, "cannot lock the push spool '%s': %s", dir, strerror(errno));
		goto fail;
	}
	if ((rc = scan(sp))) {
		hs_error_set(err, rc, "cannot read the push spool '%s': %s", dir, strerror(-rc));
		goto fail;
	}
	*ret = sp;
	return 0;
fail:
	hs_spool_close(sp);
	return rc;
}

void hs_spool_close(struct hs_spool *sp)
{
	if (!sp)
		return;
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	free(sp->v);
	free(sp->foreign_name);
	free(sp->other_kind_name);
	free(sp->path);
	free(sp);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int hs_spool_write(struct hs_spool *sp, const char *series, int64_t from, int64_t until, const void *body, size_t len,
		   struct hs_spool_entry *ret)
{
	char head[HEADER_MAX], name[64], tmp[72];
	size_t namelen = strlen(series);
	struct hs_spool_entry e;
	int n, fd, rc;

	if (sp->kind == HS_SPOOL_INGEST)
		n = snprintf(head, sizeof(head), MAGIC " %lld %lld %zu %zu\n", (long long)from, (long long)until, namelen,
			     len);
	else
		n = snprintf(head, sizeof(head), MAGIC_V3 " %lld %lld %zu %zu %d\n", (long long)from, (long long)until,
			     namelen, len, (int)sp->kind);
	if (namelen > HS_SPOOL_NAME_MAX || from < 0 || (uint64_t)n + namelen + 1 + len > HS_SPOOL_FILE_MAX)
		return -EOVERFLOW;
	e.from = from;
	e.seq = __atomic_fetch_add(&sp->next_seq, 1, __ATOMIC_RELAXED);
	e.size = (uint64_t)n + namelen + 1 + len;
	hs_spool_name(&e, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(sp->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (!(rc = write_all(fd, head, (size_t)n)) && !(rc = write_all(fd, series, namelen)) &&
	    !(rc = write_all(fd, "\n", 1)) && !(rc = write_all(fd, body, len)) && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(sp->dirfd, tmp, sp->dirfd, name) < 0)
		rc = -errno;
	if (rc) {
		unlinkat(sp->dirfd, tmp, 0);
		return rc;
	}
	*ret = e;
	return 0;
}

int hs_spool_sync(struct hs_spool *sp)
{
	return fsync(sp->dirfd) < 0 ? -errno : 0;
}

void hs_spool_add(struct hs_spool *sp, const struct hs_spool_entry *e)
{
	size_t i = sp->n;

	if (sp->head && sp->n == sp->cap) { /* room at the front, from the profiles sent */
		memmove(sp->v, sp->v + sp->head, (sp->n - sp->head) * sizeof(*sp->v));
		sp->n -= sp->head;
		sp->head = 0;
		i = sp->n;
	}
	if (sp->n == sp->cap) {
		sp->cap = sp->cap ? sp->cap * 2 : 64;
		sp->v = hs_xrealloc(sp->v, sp->cap * sizeof(*sp->v));
	}
	/* the newest as a rule; older only after the clock was set back */
	while (i > sp->head && cmp_entry(&sp->v[i - 1], e) > 0)
		i--;
	memmove(sp->v + i + 1, sp->v + i, (sp->n - i) * sizeof(*sp->v));
	sp->v[i] = *e;
	sp->n++;
	sp->bytes += e->size;
}

const struct hs_spool_entry *hs_spool_oldest(const struct hs_spool *sp)
{
	return sp->head < sp->n ? &sp->v[sp->head] : NULL;
}

long hs_spool_find(const struct hs_spool *sp, const struct hs_spool_entry *e)
{
	for (size_t i = sp->head; i < sp->n; i++)
		if (sp->v[i].from == e->from && sp->v[i].seq == e->seq)
			return (long)(i - sp->head);
	return -1;
}

int hs_spool_remove(struct hs_spool *sp, size_t i, bool unlink_it)
{
	struct hs_spool_entry *e = &sp->v[sp->head + i];
	char name[64];
	int rc = 0;

	hs_spool_name(e, name, sizeof(name));
	if (unlink_it && unlinkat(sp->dirfd, name, 0) < 0)
		rc = -errno;
	sp->bytes -= HS_MIN(sp->bytes, e->size);
	if (!i) {
		sp->head++;
		if (sp->head == sp->n)
			sp->head = sp->n = 0;
	} else {
		memmove(e, e + 1, (sp->n - sp->head - i - 1) * sizeof(*e));
		sp->n--;
	}
	return rc;
}

size_t hs_spool_make_room(struct hs_spool *sp, uint64_t size, size_t skip)
{
	size_t dropped = 0;

	while (hs_spool_count(sp) > skip &&
	       (sp->bytes + size > sp->max_bytes || hs_spool_count(sp) + 1 > HS_SPOOL_MAX_FILES)) {
		hs_spool_remove(sp, skip, true);
		dropped++;
	}
	return dropped;
}
