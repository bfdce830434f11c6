/* Compiled CFI tables in the user's cache directory (see cfi-cache.h). */
#include "cfi-cache.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cache.h"
#include "util/outfile.h"
#include "util/util.h"

/* Before the rows and the register rules, which follow it as they are in memory. */
struct header {
	char magic[8];
	uint64_t size, mtime_ns, dev, ino; /* the file's */
	uint64_t debug_size, debug_mtime_ns, debug_dev, debug_ino; /* its debug file's, or 0 */
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint8_t pad[3];
	uint32_t row_size, regs_size;      /* the structures' sizes: another layout is another format */
	uint32_t pad2;
	uint64_t base, n, nregs;
	struct hs_cfi_stats stats;
	uint64_t hash;                     /* of the rows and the rules */
};

static const char header_magic[8] = "HSCFI02";

/* A used entry's mtime is moved when older than this, not on every use. */
#define TOUCH_AGE 3600

/* The identity of the regular file open as fd: its size, mtime, device and inode. */
static bool file_id(int fd, uint64_t id[4])
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	id[0] = (uint64_t)st.st_size;
	id[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	id[2] = (uint64_t)st.st_dev;
	id[3] = (uint64_t)st.st_ino;
	return true;
}

int hs_cfi_cache_key(const struct hs_dso_elf *e, const struct hs_dso_elf *debug, struct hs_cfi_cache_key *ret)
{
	struct hs_cfi_cache_key k = {0};
	uint64_t id[4], did[4] = {0};

	if (!hs_cache_dir() || !file_id(e->fd, id) || (debug && !file_id(debug->fd, did)))
		return -ENOENT;
	k.size = id[0];
	k.mtime_ns = id[1];
	k.dev = id[2];
	k.ino = id[3];
	k.debug_size = did[0];
	k.debug_mtime_ns = did[1];
	k.debug_dev = did[2];
	k.debug_ino = did[3];
	k.build_id_size = e->build_id_size;
	memcpy(k.build_id, e->build_id, e->build_id_size);
	hs_cache_entry_name(k.name, sizeof(k.name), "cfi", k.build_id, k.build_id_size, k.dev, k.ino, "cfi");
	*ret = k;
	return 0;
}

static uint64_t table_hash(const struct hs_cfi_row *rows, size_t n, const struct hs_cfi_regs *regs, size_t nregs)
{
	return hs_hash_bytes(regs, nregs * sizeof(*regs), hs_hash_bytes(rows, n * sizeof(*rows), 0xcf1));
}

/* The header of t from key's file, hash left out. */
static void header_init(struct header *h, const struct hs_cfi_cache_key *key, const struct hs_cfi_table *t)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, header_magic, sizeof(h->magic));
	h->size = key->size;
	h->mtime_ns = key->mtime_ns;
	h->dev = key->dev;
	h->ino = key->ino;
	h->debug_size = key->debug_size;
	h->debug_mtime_ns = key->debug_mtime_ns;
	h->debug_dev = key->debug_dev;
	h->debug_ino = key->debug_ino;
	memcpy(h->build_id, key->build_id, key->build_id_size);
	h->build_id_size = key->build_id_size;
	h->row_size = sizeof(struct hs_cfi_row);
	h->regs_size = sizeof(struct hs_cfi_regs);
	if (t) {
		h->base = t->base;
		h->n = t->n;
		h->nregs = t->nregs;
		memcpy(&h->stats, &t->stats, sizeof(h->stats));
	}
}

/* Whether the rows are a table the unwinder can search and index safely: sorted by PC, each
 * naming rules that exist. */
static bool rows_sane(const struct hs_cfi_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].regs >= t->nregs || (i && t->rows[i].pc < t->rows[i - 1].pc))
			return false;
	return true;
}

static bool read_all(int fd, void *buf, size_t n, off_t off)
{
	while (n) {
		ssize_t got = pread(fd, buf, n, off);
		if (got <= 0)
			return false;
		buf = (char *)buf + got;
		n -= (size_t)got;
		off += got;
	}
	return true;
}

int hs_cfi_cache_load(const struct hs_cfi_cache_key *key, struct hs_cfi_table **ret)
{
	struct header want, got;
	struct hs_cfi_table *t;
	struct stat st;
	int fd = hs_cache_open(key->name), rc = -EBADMSG;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(got) || !read_all(fd, &got, sizeof(got), 0) ||
	    memcmp(got.magic, header_magic, sizeof(got.magic))) {
		close(fd);
		return -EBADMSG;
	}
	header_init(&want, key, NULL);
	/* the file's identity and the format's */
	if (memcmp(&want, &got, offsetof(struct header, base))) {
		close(fd);
		return -ESTALE;
	}
	if (!got.n || got.n > HS_CFI_MAX_ROWS || got.nregs < 2 || got.nregs > HS_CFI_MAX_REGS + 1 ||
	    (uint64_t)st.st_size != sizeof(got) + got.n * sizeof(struct hs_cfi_row) + got.nregs * sizeof(struct hs_cfi_regs)) {
		close(fd);
		return -EBADMSG;
	}
	t = hs_xcalloc(1, sizeof(*t));
	t->base = got.base;
	t->n = got.n;
	t->nregs = got.nregs;
	memcpy(&t->stats, &got.stats, sizeof(t->stats));
	/* read in place: a lookup brings in the pages it reads, not the whole table (tens of
	 * megabytes for a compiler's); the file is never written again (a new entry is a new
	 * file renamed over it) */
	t->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (t->map != MAP_FAILED) {
		t->map_len = (size_t)st.st_size;
		t->rows = (struct hs_cfi_row *)((char *)t->map + sizeof(got));
		t->regs = (struct hs_cfi_regs *)((char *)t->map + sizeof(got) + t->n * sizeof(*t->rows));
		if (table_hash(t->rows, t->n, t->regs, t->nregs) == got.hash && rows_sane(t))
			rc = 0;
		hs_cfi_table_drop_pages(t); /* what the check read */
	} else {
		t->map = NULL;
		t->rows = hs_xmalloc(t->n * sizeof(*t->rows));
		t->regs = hs_xmalloc(t->nregs * sizeof(*t->regs));
		if (read_all(fd, t->rows, t->n * sizeof(*t->rows), sizeof(got)) &&
		    read_all(fd, t->regs, t->nregs * sizeof(*t->regs), (off_t)(sizeof(got) + t->n * sizeof(*t->rows))) &&
		    table_hash(t->rows, t->n, t->regs, t->nregs) == got.hash && rows_sane(t))
			rc = 0;
	}
	/* its mtime says when it was last used (trimming goes by it), to the hour */
	if (!rc && st.st_mtim.tv_sec < time(NULL) - TOUCH_AGE)
		futimens(fd, NULL);
	close(fd);
	if (rc) {
		hs_cfi_table_free(t);
		return rc;
	}
	*ret = t;
	return 0;
}

int hs_cfi_cache_store(const struct hs_cfi_cache_key *key, const struct hs_cfi_table *t)
{
	struct hs_outfile o;
	struct header h;
	int rc = hs_cache_create(&o, key->name);

	if (rc)
		return rc;
	header_init(&h, key, t);
	h.hash = table_hash(t->rows, t->n, t->regs, t->nregs);
	hs_outfile_write(&o, &h, sizeof(h));
	hs_outfile_write(&o, t->rows, t->n * sizeof(*t->rows));
	hs_outfile_write(&o, t->regs, t->nregs * sizeof(*t->regs));
	rc = hs_outfile_commit(&o);
	if (!rc)
		hs_cache_trim("cfi", HS_CFI_CACHE_MAX);
	return rc;
}
