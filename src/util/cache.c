/* The user's cache directory (see cache.h). */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *cache_path;

/* Whether path is a directory of ours that nobody else can write to, made (0700) if absent. */
static bool own_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return false;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

static void find_dir(void)
{
	const char *env = getenv("HOTSTACK_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct hs_strbuf parent = {0}, dir = {0};

	if (env) {
		if (*env && own_dir(env))
			cache_path = hs_xstrdup(env);
		return;
	}
	if (xdg && *xdg == '/')
		hs_strbuf_adds(&parent, xdg);
	else if (home && *home == '/')
		hs_strbuf_addf(&parent, "%s/.cache", home);
	else
		return;
	hs_strbuf_addf(&dir, "%s/hotstack", hs_strbuf_str(&parent));
	if (own_dir(hs_strbuf_str(&parent)) && own_dir(hs_strbuf_str(&dir)))
		cache_path = hs_xstrdup(hs_strbuf_str(&dir));
	hs_strbuf_release(&parent);
	hs_strbuf_release(&dir);
}

const char *hs_cache_dir(void)
{
	pthread_once(&once, find_dir);
	return cache_path;
}

int hs_cache_open(const char *name)
{
	const char *dir = hs_cache_dir();
	struct hs_strbuf sb = {0};
	struct stat st;
	int fd;

	if (!dir)
		return -ENOENT;
	hs_strbuf_addf(&sb, "%s/%s", dir, name);
	fd = open(hs_strbuf_str(&sb), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	hs_strbuf_release(&sb);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int hs_cache_create(struct hs_outfile *o, const char *name)
{
	const char *dir = hs_cache_dir();
	struct hs_strbuf sb = {0};
	int rc;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!dir)
		return -ENOENT;
	hs_strbuf_adds(&sb, dir);
	/* subdirectories, one at a time, each ours */
	for (const char *p = name, *slash; (slash = strchr(p, '/')); p = slash + 1) {
		hs_strbuf_addf(&sb, "/%.*s", (int)(slash - p), p);
		if (!own_dir(hs_strbuf_str(&sb))) {
			hs_strbuf_release(&sb);
			return -EPERM;
		}
	}
	hs_strbuf_reset(&sb);
	hs_strbuf_addf(&sb, "%s/%s", dir, name);
	rc = hs_outfile_open(o, hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
	if (!rc && o->tmp && fchmod(o->fd, 0600) < 0)
		rc = -errno;
	if (rc)
		hs_outfile_abort(o);
	return rc;
}

int hs_boot_id(char out[37])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, 36);
	close(fd);
	if (n != 36)
		return -EIO;
	out[36] = '\0';
	return 0;
}

char *hs_cache_read(const char *name, size_t max, size_t *n)
{
	int fd = hs_cache_open(name);
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	if (hs_read_fd(fd, 0, max, &buf, n))
		buf = NULL;
	close(fd);
	return buf;
}

int hs_cache_write(const char *name, const void *data, size_t n)
{
	struct hs_outfile o;
	int rc = hs_cache_create(&o, name);

	if (rc)
		return rc;
	hs_outfile_write(&o, data, n);
	return hs_outfile_commit(&o);
}
