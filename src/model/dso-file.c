/* Opening mapped files and memory images with the identity checks that keep names and unwind
 * tables from coming out of the wrong file. */
#include "dso-file.h"

#include <elfutils/debuginfod.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "format/elf.h"
#include "util/infile.h"
#include "util/strbuf.h"
#include "util/util.h"

#define VDSO_MAX_SIZE (1u << 20)

/* An ELF image's size from its header: where its section headers end. */
static size_t image_size(const unsigned char *hdr)
{
	GElf_Ehdr eh;

	if (memcmp(hdr, ELFMAG, SELFMAG) || hdr[EI_CLASS] != ELFCLASS64)
		return 0;
	memcpy(&eh, hdr, sizeof(eh));
	return (size_t)(eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize);
}

/* Our own vdso: the kernel gives every 64-bit process the same image, as perf also assumes. The
 * process's memory (/proc/PID/mem) is not read: the process can have unmapped its vdso and put
 * there a file whose reads never end (a FUSE file whose daemon does not answer), and such a read
 * waits until SIGKILL. */
static int open_vdso(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	const unsigned char *own = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	(void)d;
	if (!own || !(size = image_size(own)) || size > VDSO_MAX_SIZE)
		return -ENOENT;
	ret->image = hs_xmalloc(size);
	memcpy(ret->image, own, size);
	ret->elf = elf_memory(ret->image, size);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		if (ret->elf)
			elf_end(ret->elf);
		free(ret->image);
		return -EBADMSG;
	}
	return 0;
}

static int open_mapped(const struct hs_dso *d, struct hs_dso_elf *ret);
static int open_from_cache(const struct hs_dso *d, struct hs_dso_elf *ret);

int hs_dso_elf_open(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	bool captured = d->fd >= 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	elf_version(EV_CURRENT);
	if (d->kind == HS_DSO_VDSO) {
		rc = open_vdso(d, ret);
		if (!rc)
			ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
		return rc;
	}
	if (d->kind != HS_DSO_FILE)
		return -ENOENT;
	rc = open_mapped(d, ret);
	/* not the file the recording saw, or gone: perf's build-id cache may hold a copy */
	if ((rc == -ESTALE || rc == -ENOENT) && d->build_id_size && !captured && !open_from_cache(d, ret))
		rc = 0;
	if (!rc)
		ret->symfs = d->symfs; /* where its debug files are looked for first */
	return rc;
}

/* Opens fd (of the file sb describes) as ELF into ret, with its build-id; closes fd when it is
 * not an ELF file. */
static int adopt_elf(int fd, const struct stat *sb, struct hs_dso_elf *ret)
{
	ret->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		if (ret->elf)
			elf_end(ret->elf);
		ret->elf = NULL;
		close(fd);
		return -EBADMSG;
	}
	ret->fd = fd;
	ret->dev = sb->st_dev;
	ret->ino = sb->st_ino;
	ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
	return 0;
}

/* Whether fd, of the file sb describes, is the file of d's device and inode. */
static bool same_inode(const struct hs_dso *d, int fd, const struct stat *sb)
{
	struct statfs fs;
	int gen;

	if (sb->st_ino != d->ino)
		return false;
	if (major(sb->st_dev) == d->maj && minor(sb->st_dev) == d->min)
		return true;
	/* btrfs: stat gives each subvolume's device, the kernel's records (and /proc/PID/maps) the
	 * file system's, and inode numbers repeat across subvolumes; the inode's generation (the
	 * transaction that made it, in MMAP2 records) tells files apart */
	return d->ino_generation && fstatfs(fd, &fs) == 0 && fs.f_type == BTRFS_SUPER_MAGIC &&
	       ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 && (uint32_t)gen == d->ino_generation;
}

/* Takes fd (closing it on failure) as d's file. check_inode: a file found by its path on this
 * machine must be the one the process mapped, also when there is no build-id to tell. */
static int open_fd(const struct hs_dso *d, int fd, bool check_inode, struct hs_dso_elf *ret)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if (check_inode && !d->build_id_size && d->ino && !same_inode(d, fd, &sb)) {
		close(fd);
		return -ESTALE;
	}
	if (adopt_elf(fd, &sb, ret))
		return -EBADMSG;
	if (d->build_id_size &&
	    (ret->build_id_size != d->build_id_size || memcmp(ret->build_id, d->build_id, d->build_id_size))) {
		hs_dso_elf_close(ret);
		return -ESTALE;
	}
	return 0;
}

bool hs_pid_has_own_root(int32_t pid)
{
	struct stat theirs, ours;
	char path[64];

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if (stat(path, &theirs) < 0 || stat("/proc/self/root", &ours) < 0)
		return false;
	if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
		return true;
	/* the same root directory seen through another mount table (unshare -m, most containers
	 * before pivot_root): paths can still name files that only exist in there */
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat(path, &theirs) < 0 || stat("/proc/self/ns/mnt", &ours) < 0)
		return false;
	return theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino;
}

/* Which of two failures to report: a file that is there but not the one mapped says more than
 * one that is not there. */
static int worse(int best, int rc)
{
	return rc == -ESTALE || best == -ENOENT ? rc : best;
}

/* The file at a path a recording named, if it is a regular file (infile.h): anything else
 * there is as good as no file, and never opened. */
static int open_named(const char *path)
{
	int fd = hs_infile_open(path, 0, NULL);

	return fd == -EPERM || fd == -EISDIR ? -ENOENT : fd;
}

static int open_mapped(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	struct hs_strbuf sb = {0};
	int fd, rc, best = -ENOENT;

	if (d->fd >= 0) {
		fd = dup(d->fd);
		rc = fd < 0 ? -errno : open_fd(d, fd, false, ret);
		/* a container's file: its debug files are in there too */
		if (!rc && d->path[0] == '/' && hs_pid_has_own_root(d->pid_hint))
			ret->root_pid = d->pid_hint;
		return rc;
	}
	if (d->path[0] == '/' && d->symfs) {
		/* another machine's files: its inode numbers mean nothing here, its build-ids do */
		hs_strbuf_addf(&sb, "%s%s", d->symfs, d->path);
		fd = open_named(hs_strbuf_str(&sb));
		rc = fd < 0 ? fd : open_fd(d, fd, false, ret);
		if (!rc)
			goto out;
		best = worse(best, rc);
	}
	if (d->path[0] == '/' && hs_pid_has_own_root(d->pid_hint)) {
		/* a container's file, through the process's own view of the file system */
		hs_strbuf_reset(&sb);
		hs_strbuf_addf(&sb, "/proc/%d/root%s", (int)d->pid_hint, d->path);
		fd = open_named(hs_strbuf_str(&sb));
		rc = fd < 0 ? fd : open_fd(d, fd, true, ret);
		if (!rc) {
			ret->root_pid = d->pid_hint;
			goto out;
		}
		best = worse(best, rc);
	}
	fd = open_named(d->path);
	rc = fd < 0 ? fd : open_fd(d, fd, true, ret);
	if (rc)
		rc = worse(best, rc);
out:
	hs_strbuf_release(&sb);
	return rc;
}

static int open_debug_candidate(const char *path, const uint8_t *id, size_t id_size, const uint32_t *crc,
				struct hs_dso_elf *ret);

size_t hs_buildid_cache_path(const uint8_t *id, size_t n, char *buf, size_t cap)
{
	const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	int k;

	if (!n)
		return 0;
	if (dir && *dir)
		k = snprintf(buf, cap, "%s/.build-id/%02x/", dir, id[0]);
	else if (home && *home)
		k = snprintf(buf, cap, "%s/.debug/.build-id/%02x/", home, id[0]);
	else
		return 0;
	for (size_t i = 1; i < n && k > 0 && (size_t)k < cap; i++)
		k += snprintf(buf + k, cap - (size_t)k, "%02x", id[i]);
	return k > 0 && (size_t)k < cap ? (size_t)k : 0;
}

/* perf's build-id cache: ~/.debug/.build-id/xx/yyyy/elf (a directory since perf 4.x), or the
 * file itself at ~/.debug/.build-id/xx/yyyy in older layouts. */
static int open_from_cache(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	char path[4096];
	size_t n = hs_buildid_cache_path(d->build_id, d->build_id_size, path, sizeof(path) - 8);

	if (!n)
		return -ENOENT;
	memcpy(path + n, "/elf", 5);
	if (!open_debug_candidate(path, d->build_id, d->build_id_size, NULL, ret))
		return 0;
	path[n] = '\0';
	return open_debug_candidate(path, d->build_id, d->build_id_size, NULL, ret) ? -ENOENT : 0;
}

void hs_dso_elf_close(struct hs_dso_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

uint64_t hs_dso_elf_key(const struct hs_dso_elf *e)
{
	if (e->build_id_size)
		return hs_hash_bytes(e->build_id, e->build_id_size, 0xb1d) & ~1ULL;
	return hs_hash_combine(hs_hash_u64((uint64_t)e->dev), (uint64_t)e->ino) & ~1ULL;
}

/* .gnu_debuglink's CRC-32 (the zlib polynomial) is of the whole file: a file planted as the
 * debug file may be terabytes (sparse: no disk used) and must not cost that much time. A file
 * over the cap, or past the run's total, is not checksummed: it is taken on a matching build-id
 * alone (a real debug file that big has one), else refused. */
#define DEBUGLINK_CRC_MAX_FILE ((off_t)1 << 30)
#define DEBUGLINK_CRC_MAX_TOTAL ((uint64_t)8 << 30)

static uint64_t crc_bytes_read; /* over the run (atomic) */

/* Whether size bytes may still be checksummed in this run (and counts them). */
static bool crc_affordable(off_t size)
{
	return size <= DEBUGLINK_CRC_MAX_FILE &&
	       __atomic_add_fetch(&crc_bytes_read, (uint64_t)size, __ATOMIC_RELAXED) <= DEBUGLINK_CRC_MAX_TOTAL;
}

/* Whether fd's CRC-32 is want; reads, not maps: a file truncated meanwhile is a short read,
 * not a SIGBUS. */
static bool crc_matches(int fd, off_t size, uint32_t want)
{
	size_t cap = 1 << 20;
	unsigned char *buf;
	uLong crc = 0;
	off_t off = 0;

	buf = hs_xmalloc(cap);
	while (off < size) {
		ssize_t n = pread(fd, buf, (size_t)HS_MIN((off_t)cap, size - off), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	free(buf);
	return off == size && (uint32_t)crc == want;
}

/* Opens path as the debug file of the ELF with build-id id (id_size 0: none): found by build-id
 * (crc NULL), it must have that build-id; found by .gnu_debuglink, that build-id when both have
 * one, and the link's CRC (see DEBUGLINK_CRC_MAX_FILE). Only a regular file is opened, and it is
 * known to be ELF before any of it is read through. */
static int open_debug_candidate(const char *path, const uint8_t *id, size_t id_size, const uint32_t *crc,
				struct hs_dso_elf *ret)
{
	struct stat sb;
	int fd = hs_infile_open(path, 0, &sb);
	bool ok, same_id;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	if (fd < 0)
		return fd == -EPERM || fd == -EISDIR ? -ENOENT : fd;
	if ((!crc && !id_size) || sb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOENT;
	}
	if (adopt_elf(fd, &sb, ret))
		return -EBADMSG;
	same_id = id_size && ret->build_id_size == id_size && !memcmp(ret->build_id, id, id_size);
	if (!crc)
		ok = same_id;
	else if (id_size && ret->build_id_size && !same_id)
		ok = false;
	else if (crc_affordable(sb.st_size))
		ok = crc_matches(fd, sb.st_size, *crc);
	else
		ok = same_id;
	if (!ok) {
		hs_dso_elf_close(ret);
		return -ESTALE;
	}
	return 0;
}

/* The file name and CRC in .gnu_debuglink. */
static bool debuglink(Elf *elf, char *name, size_t cap, uint32_t *crc)
{
	Elf_Scn *scn = hs_elf_section(elf, ".gnu_debuglink");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t n;

	if (!d || !d->d_buf || d->d_size < 8)
		return false;
	n = strnlen(d->d_buf, d->d_size);
	if (!n || n >= cap || n >= d->d_size || strchr(d->d_buf, '/'))
		return false;
	memcpy(name, d->d_buf, n + 1);
	/* the CRC follows the name, aligned to 4 bytes */
	n = (n + 4) & ~(size_t)3;
	if (n + 4 > d->d_size)
		return false;
	memcpy(crc, (const char *)d->d_buf + n, 4);
	return true;
}

/* ---- debuginfod ---- */

/* One client for the process, and what each build-id got: a path in debuginfod's cache, or NULL
 * when the servers did not have it (asked once, never again in this process). */
struct asked {
	uint8_t id[20];
	uint8_t id_size;
	char *path;
};

static struct {
	pthread_mutex_t lock;
	debuginfod_client *client;
	bool began, at_exit;
	bool cancelled; /* the last request was given up for a stop signal */
	struct hs_u64map by_id; /* hash of the build-id -> index in asked */
	HS_VEC(struct asked) asked;
} dfd = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* libdebuginfod is opened when a debug file is first asked of a server, not linked: it brings
 * libcurl and its TLS, Kerberos and LDAP libraries, whose loading and relocation took a few
 * milliseconds of every run, most of which never ask. */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} dfd_lib;

static debuginfod_client *client_begin(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return NULL;
	dfd_lib.begin = (debuginfod_client * (*)(void)) dlsym(h, "debuginfod_begin");
	dfd_lib.end = (void (*)(debuginfod_client *))dlsym(h, "debuginfod_end");
	dfd_lib.set_progressfn =
		(void (*)(debuginfod_client *, debuginfod_progressfn_t))dlsym(h, "debuginfod_set_progressfn");
	dfd_lib.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))dlsym(
		h, "debuginfod_find_debuginfo");
	if (!dfd_lib.begin || !dfd_lib.end || !dfd_lib.set_progressfn || !dfd_lib.find_debuginfo)
		return NULL;
	return dfd_lib.begin();
}

static void debuginfod_release(void)
{
	pthread_mutex_lock(&dfd.lock);
	if (dfd.client)
		dfd_lib.end(dfd.client);
	dfd.client = NULL;
	for (size_t i = 0; i < dfd.asked.n; i++)
		free(dfd.asked.v[i].path);
	hs_vec_free(&dfd.asked);
	hs_u64map_release(&dfd.by_id);
	pthread_mutex_unlock(&dfd.lock);
}

/* Called during transfers: a download (minutes for a big debug file, on the thread that also
 * takes the recording's signals) is given up when the user asks hotstack to stop. */
static int debuginfod_progress(debuginfod_client *c, long done, long total)
{
	(void)c;
	(void)done;
	(void)total;
	if (!hs_stop_signal_pending())
		return 0;
	dfd.cancelled = true;
	return 1;
}

/* The path of the debug file of this build-id that debuginfod serves, or NULL; owned by dfd. */
static const char *debuginfod_path(const uint8_t *id, size_t n)
{
	uint64_t key = hs_hash_bytes(id, n, 0xd1fd) & ~1ULL, ix;
	struct asked a = {{0}, (uint8_t)n, NULL};
	int fd;

	if (hs_u64map_get(&dfd.by_id, key, &ix)) {
		const struct asked *old = &dfd.asked.v[ix];
		if (old->id_size == n && !memcmp(old->id, id, n))
			return old->path;
		return NULL; /* two build-ids of one hash: the second is not asked */
	}
	if (!dfd.began) {
		dfd.began = true;
		dfd.client = client_begin();
		if (dfd.client)
			dfd_lib.set_progressfn(dfd.client, debuginfod_progress);
		if (!dfd.at_exit && !atexit(debuginfod_release))
			dfd.at_exit = true;
	}
	if (dfd.client) {
		char *path = NULL;
		dfd.cancelled = false;
		fd = dfd_lib.find_debuginfo(dfd.client, id, (int)n, &path);
		if (fd >= 0) {
			close(fd);
			a.path = path;
		} else {
			free(path);
			/* given up, not answered: not remembered as a miss, a later lookup asks again */
			if (dfd.cancelled)
				return NULL;
		}
	}
	memcpy(a.id, id, n);
	hs_u64map_put(&dfd.by_id, key, dfd.asked.n);
	hs_vec_push(&dfd.asked, a);
	return a.path;
}

static int open_from_debuginfod(const struct hs_dso_elf *main, struct hs_dso_elf *ret)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *path;
	int rc = -ENOENT;

	/* never a connection unless asked for */
	if (!urls || !urls[strspn(urls, " \t")] || main->build_id_size < 2)
		return -ENOENT;
	pthread_mutex_lock(&dfd.lock);
	path = debuginfod_path(main->build_id, main->build_id_size);
	if (path)
		rc = open_debug_candidate(path, main->build_id, main->build_id_size, NULL, ret);
	pthread_mutex_unlock(&dfd.lock);
	return rc;
}

/* ---- local debug files ---- */

static const char *debug_root(void)
{
	const char *dir = getenv("HOTSTACK_DEBUG_DIR");

	return dir && *dir ? dir : "/usr/lib/debug";
}

/* Where e's debug files are looked for, in order: the symfs, the root it was found under (a
 * container's, as /proc/PID/root in proc_root), then ours (""). Returns how many, at most 3. */
static size_t debug_roots(const struct hs_dso_elf *e, const char *roots[3], char proc_root[64])
{
	size_t n = 0;

	if (e->symfs)
		roots[n++] = e->symfs;
	if (e->root_pid > 0) {
		snprintf(proc_root, 64, "/proc/%d/root", (int)e->root_pid);
		roots[n++] = proc_root;
	}
	roots[n++] = "";
	return n;
}

int hs_dso_debug_open(const struct hs_dso_elf *main, const char *path, struct hs_dso_elf *ret)
{
	struct hs_strbuf sb = {0};
	const char *roots[3], *dbg = debug_root();
	char proc_root[64], name[256];
	size_t nroots = 0;
	uint32_t crc;
	int rc = -ENOENT;

	nroots = debug_roots(main, roots, proc_root);
	for (size_t r = 0; r < nroots && rc && main->build_id_size >= 2; r++) {
		hs_strbuf_reset(&sb);
		hs_strbuf_addf(&sb, "%s%s/.build-id/%02x/", roots[r], dbg, main->build_id[0]);
		for (size_t i = 1; i < main->build_id_size; i++)
			hs_strbuf_addf(&sb, "%02x", main->build_id[i]);
		hs_strbuf_adds(&sb, ".debug");
		rc = open_debug_candidate(hs_strbuf_str(&sb), main->build_id, main->build_id_size, NULL, ret);
	}
	if (rc && main->elf && path && path[0] == '/' && debuglink(main->elf, name, sizeof(name), &crc)) {
		const char *slash = strrchr(path, '/');
		int dirlen = (int)(slash - path);
		/* beside the file, in its .debug/ directory, under the debug root */
		const char *const pre[] = {"", "", dbg}, *const mid[] = {"/", "/.debug/", "/"};

		for (size_t r = 0; r < nroots && rc; r++) {
			for (size_t i = 0; i < HS_ARRAY_SIZE(pre) && rc; i++) {
				size_t rlen = strlen(roots[r]);
				const char *full;

				hs_strbuf_reset(&sb);
				hs_strbuf_addf(&sb, "%s%s%.*s%s%s", roots[r], pre[i], dirlen, path, mid[i], name);
				full = hs_strbuf_str(&sb);
				/* the debug file is never the file itself */
				if (!strncmp(full, roots[r], rlen) && !strcmp(full + rlen, path))
					continue;
				rc = open_debug_candidate(full, main->build_id, main->build_id_size, &crc, ret);
			}
		}
	}
	hs_strbuf_release(&sb);
	if (rc)
		rc = open_from_debuginfod(main, ret);
	if (rc)
		return -ENOENT;
	/* its own supplementary file is looked for where the file's debug files are */
	ret->symfs = main->symfs;
	ret->root_pid = main->root_pid;
	return 0;
}

int hs_dso_alt_open(const struct hs_dso_elf *e, const char *name, const uint8_t *id, size_t id_size,
		    struct hs_dso_elf *ret)
{
	struct hs_strbuf sb = {0};
	const char *roots[3];
	char proc_root[64];
	size_t nroots = 0;
	int rc = -ENOENT;

	if (!id_size || id_size > sizeof(e->build_id))
		return -ENOENT;
	nroots = debug_roots(e, roots, proc_root);
	/* by its build-id under the debug root, as libdw looks first */
	for (size_t r = 0; r < nroots && rc && id_size >= 2; r++) {
		hs_strbuf_reset(&sb);
		hs_strbuf_addf(&sb, "%s%s/.build-id/%02x/", roots[r], debug_root(), id[0]);
		for (size_t i = 1; i < id_size; i++)
			hs_strbuf_addf(&sb, "%02x", id[i]);
		hs_strbuf_adds(&sb, ".debug");
		rc = open_debug_candidate(hs_strbuf_str(&sb), id, id_size, NULL, ret);
	}
	/* by its name: an absolute one under each root (dwz writes /usr/lib/debug/.dwz/...), a
	 * relative one beside the file that names it */
	if (rc && name[0] == '/') {
		for (size_t r = 0; r < nroots && rc; r++) {
			hs_strbuf_reset(&sb);
			hs_strbuf_addf(&sb, "%s%s", roots[r], name);
			rc = open_debug_candidate(hs_strbuf_str(&sb), id, id_size, NULL, ret);
		}
	} else if (rc && name[0] && e->fd >= 0) {
		char link[64], dir[4096];
		ssize_t n;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", e->fd);
		n = readlink(link, dir, sizeof(dir) - 1);
		if (n > 0 && dir[0] == '/') {
			dir[n] = '\0';
			*strrchr(dir, '/') = '\0';
			hs_strbuf_reset(&sb);
			hs_strbuf_addf(&sb, "%s/%s", dir, name);
			rc = open_debug_candidate(hs_strbuf_str(&sb), id, id_size, NULL, ret);
		}
	}
	hs_strbuf_release(&sb);
	if (rc)
		return -ENOENT;
	ret->symfs = e->symfs;
	ret->root_pid = e->root_pid;
	return 0;
}

/* ---- MiniDebugInfo ---- */

/* The decoder's memory: xz -9 needs 65 MiB, and no MiniDebugInfo is made with more. */
#define MINIDEBUG_DECODER_MEM ((uint64_t)128 << 20)

int hs_dso_minidebug_open(const struct hs_dso_elf *main, struct hs_dso_elf *ret)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	size_t shstrndx, cap, max;
	lzma_stream xz = LZMA_STREAM_INIT;
	lzma_ret lr = LZMA_OK;
	unsigned char *buf;

	if (!main->elf || elf_getshdrstrndx(main->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(main->elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (nm = elf_strptr(main->elf, shstrndx, sh.sh_name)) && !strcmp(nm, ".gnu_debugdata")) {
			data = elf_getdata(scn, NULL);
			break;
		}
	}
	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	if (lzma_stream_decoder(&xz, MINIDEBUG_DECODER_MEM, 0) != LZMA_OK)
		return -EBADMSG;
	/* bounded by the section's size too: a few KiB of xz can ask for the whole cap (real
	 * MiniDebugInfo expands 3 to 5 times) */
	max = (size_t)HS_MIN((uint64_t)HS_MINIDEBUG_MAX_SIZE,
			     HS_MINIDEBUG_MIN_SIZE + (uint64_t)data->d_size * HS_MINIDEBUG_RATIO);
	cap = HS_MIN(HS_MAX(data->d_size * 4, (size_t)1 << 16), max);
	buf = hs_xmalloc(cap);
	xz.next_in = data->d_buf;
	xz.avail_in = data->d_size;
	xz.next_out = buf;
	xz.avail_out = cap;
	while ((lr = lzma_code(&xz, LZMA_FINISH)) == LZMA_OK) {
		if (xz.avail_out)
			continue;
		if (cap == max) {
			lr = LZMA_MEMLIMIT_ERROR;
			break;
		}
		cap = HS_MIN(cap * 2, max);
		buf = hs_xrealloc(buf, cap);
		xz.next_out = buf + xz.total_out;
		xz.avail_out = cap - (size_t)xz.total_out;
	}
	lzma_end(&xz);
	if (lr != LZMA_STREAM_END) {
		free(buf);
		return lr == LZMA_MEMLIMIT_ERROR ? -EOVERFLOW : -EBADMSG;
	}
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	ret->image = buf;
	ret->elf = elf_memory((char *)buf, (size_t)xz.total_out);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		hs_dso_elf_close(ret);
		return -EBADMSG;
	}
	ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
	return 0;
}
