/* The user's cache directory (see cache.h). */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"
#include "util.h"

/* A temporary file of a writer that died goes after this long. */
#define ORPHAN_AGE 600

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

struct entry {
	char *name;
	uint64_t size;
	struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

void hs_cache_entry_name(char *buf, size_t size, const char *dir, const uint8_t *build_id, size_t build_id_size,
			 uint64_t dev, uint64_t ino, const char *ext)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_addf(&sb, "%s/", dir);
	if (build_id_size) {
		for (size_t i = 0; i < build_id_size; i++)
			hs_strbuf_addf(&sb, "%02x", build_id[i]);
	} else {
		hs_strbuf_addf(&sb, "i-%016llx", (unsigned long long)hs_hash_combine(hs_hash_u64(dev), ino));
	}
	hs_strbuf_addf(&sb, ".%s", ext);
	snprintf(buf, size, "%s", hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
}

int hs_cache_trim(const char *subdir, uint64_t max)
{
	const char *cache = hs_cache_dir();
	HS_VEC(struct entry) v = {0};
	struct hs_strbuf sb = {0};
	uint64_t total = 0;
	struct dirent *de;
	int dfd, removed = 0;
	time_t now = time(NULL);
	DIR *dir;

	if (!cache)
		return 0;
	hs_strbuf_addf(&sb, "%s/%s", cache, subdir);
	dfd = open(hs_strbuf_str(&sb), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	hs_strbuf_release(&sb);
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((de = readdir(dir))) {
		struct stat st;
		struct entry en;

		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		/* a writer's temporary file: another run may be writing it now */
		if (de->d_name[0] == '.' && st.st_mtim.tv_sec > now - ORPHAN_AGE) {
			total += (uint64_t)st.st_size;
			continue;
		}
		en.name = hs_xstrdup(de->d_name);
		en.size = (uint64_t)st.st_size;
		en.mtime = st.st_mtim;
		/* orphans first */
		if (de->d_name[0] == '.')
			en.mtime = (struct timespec){0, 0};
		total += en.size;
		hs_vec_push(&v, en);
	}
	if (total > max) {
		qsort(v.v, v.n, sizeof(v.v[0]), by_mtime);
		for (size_t i = 0; i < v.n && total > max; i++) {
			if (unlinkat(dfd, v.v[i].name, 0) == 0) {
				total -= v.v[i].size;
				removed++;
			}
		}
	}
	for (size_t i = 0; i < v.n; i++)
		free(v.v[i].name);
	hs_vec_free(&v);
	closedir(dir);
	return removed;
}
