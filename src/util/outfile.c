/* Atomic, checked output files. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

#define OUT_BUFSZ (256 * 1024)

/* Whether path is a device or a pipe to write to in place (see outfile.h): 1 yes, 2 yes
 * through a link, 0 no (a regular file, a link to one, or nothing: the temporary file and
 * rename then), or a negative errno for what must not be written at all. */
static int write_in_place(const char *path)
{
	struct stat st, t;
	bool trusted, link;

	if (lstat(path, &st) < 0)
		return 0;
	trusted = st.st_uid == 0 || st.st_uid == geteuid();
	link = S_ISLNK(st.st_mode);
	if (link) {
		if (!trusted || stat(path, &t) < 0)
			return 0; /* replaced by the rename */
		st = t;
		trusted = st.st_uid == 0 || st.st_uid == geteuid();
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return trusted ? 1 + link : -EPERM;
	if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
		return -EPERM;
	return 0;
}

/* The descriptor a path names: "-" and /dev/stdout standard output, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N; -1 for other paths. */
static int named_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long v;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || *n < '0' || *n > '9')
		return -1;
	v = strtol(n, &end, 10);
	return *end || v > INT_MAX ? -1 : (int)v;
}

int hs_outfile_open(struct hs_outfile *ret, const char *path)
{
	struct hs_strbuf sb = {0};
	const char *slash;
	unsigned int attempt;
	int rc;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	ret->path = hs_xstrdup(path);
	ret->cap = OUT_BUFSZ;
	ret->buf = hs_xmalloc(ret->cap);
	if ((ret->fd = named_fd(path)) >= 0) {
		/* standard output by any name: written as it is, whatever it is (a file, a pipe) */
		return 0;
	}
	rc = hs_outfile_is_dir(path) ? -EISDIR : write_in_place(path);
	if (rc) {
		struct stat st;
		if (rc > 0) {
			/* not blocking on a FIFO nobody reads: ENXIO instead */
			ret->fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | (rc == 1 ? O_NOFOLLOW : 0));
			rc = ret->fd < 0 ? -errno : 0;
		}
		if (!rc && (fstat(ret->fd, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) ||
			    fcntl(ret->fd, F_SETFL, 0) < 0))
			rc = -EPERM; /* replaced meanwhile */
		if (rc) {
			if (ret->fd >= 0)
				close(ret->fd);
			ret->fd = -1;
			ret->err = -rc;
			return rc;
		}
		ret->direct = true;
		return 0;
	}
	slash = strrchr(path, '/');
	for (attempt = 0; attempt < 100; attempt++) {
		hs_strbuf_reset(&sb);
		if (slash)
			hs_strbuf_add(&sb, path, (size_t)(slash - path + 1));
		hs_strbuf_addf(&sb, ".%s.tmp%d.%u", slash ? slash + 1 : path, (int)getpid(), attempt);
		ret->fd = open(hs_strbuf_str(&sb), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (ret->fd >= 0 || errno != EEXIST)
			break;
	}
	if (ret->fd < 0) {
		int e = errno;
		hs_strbuf_release(&sb);
		ret->err = e;
		return -e;
	}
	ret->tmp = hs_strbuf_detach(&sb);
	return 0;
}

bool hs_outfile_is_dir(const char *path)
{
	struct stat st;

	return named_fd(path) < 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int hs_outfile_keep_old(const char *path)
{
	struct hs_strbuf old = {0};
	struct stat st;
	int rc = 0;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	hs_strbuf_addf(&old, "%s.old", path);
	/* a second name, not a move: the file stays where it was until the new one replaces it */
	if ((unlink(hs_strbuf_str(&old)) < 0 && errno != ENOENT) || link(path, hs_strbuf_str(&old)) < 0)
		rc = rename(path, hs_strbuf_str(&old)) < 0 ? -errno : 0;
	hs_strbuf_release(&old);
	return rc;
}

static void outfile_release(struct hs_outfile *o);

void hs_outfile_open_mem(struct hs_outfile *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	ret->mem = true;
	ret->cap = OUT_BUFSZ;
	ret->buf = hs_xmalloc(ret->cap);
}

uint8_t *hs_outfile_take_mem(struct hs_outfile *o, size_t *len)
{
	uint8_t *b = (uint8_t *)o->buf;

	*len = o->len;
	o->buf = NULL;
	outfile_release(o);
	return b;
}

static void outfile_flush(struct hs_outfile *o)
{
	if (o->mem) { /* in memory: room for more */
		o->cap *= 2;
		o->buf = hs_xrealloc(o->buf, o->cap);
		return;
	}
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
		} else if (n == 0) {
			o->err = ENOSPC;
		} else {
			off += (size_t)n;
		}
	}
	o->len = 0;
}

void hs_outfile_write(struct hs_outfile *o, const void *p, size_t n)
{
	const char *s = p;

	if (o->err || (o->fd < 0 && !o->mem))
		return;
	while (n) {
		size_t k;
		if (o->len == o->cap)
			outfile_flush(o);
		if (o->err)
			return;
		k = HS_MIN(n, o->cap - o->len);
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

void hs_outfile_puts(struct hs_outfile *o, const char *s)
{
	hs_outfile_write(o, s, strlen(s));
}

void hs_outfile_printf(struct hs_outfile *o, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		hs_outfile_write(o, small, (size_t)n);
	} else {
		char *big = hs_xmalloc((size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		hs_outfile_write(o, big, (size_t)n);
		free(big);
	}
}

static void outfile_release(struct hs_outfile *o)
{
	free(o->path);
	free(o->tmp);
	free(o->buf);
	o->path = o->tmp = o->buf = NULL;
	o->fd = -1;
}

int hs_outfile_commit(struct hs_outfile *o)
{
	int err;

	if (o->fd >= 0 && !o->err)
		outfile_flush(o);
	if (o->direct && close(o->fd) < 0 && !o->err)
		o->err = errno;
	if (o->tmp) {
		if (!o->err && fsync(o->fd) < 0 && errno != EINVAL)
			o->err = errno;
		if (close(o->fd) < 0 && !o->err)
			o->err = errno;
		o->fd = -1;
		if (!o->err && rename(o->tmp, o->path) < 0)
			o->err = errno;
		if (o->err)
			unlink(o->tmp);
	}
	err = o->err;
	outfile_release(o);
	return err ? -err : 0;
}

void hs_outfile_abort(struct hs_outfile *o)
{
	if (o->direct && o->fd >= 0)
		close(o->fd);
	if (o->tmp) {
		if (o->fd >= 0)
			close(o->fd);
		unlink(o->tmp);
	}
	outfile_release(o);
}
