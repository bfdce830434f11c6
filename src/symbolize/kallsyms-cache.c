/* The running kernel's symbols kept in the user's cache (see kallsyms.h), so that a run need
 * not have the kernel format /proc/kallsyms again: the table as hs_kallsyms_load() leaves it,
 * without dynamic text, written once and then mapped and used in place. */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cache.h"
#include "util/util.h"

const struct hs_kernel_files hs_running_kernel = {
	.kallsyms = "/proc/kallsyms",
	.modules = "/proc/modules",
	.boot_id = "/proc/sys/kernel/random/boot_id",
};

#define ENTRY "kallsyms"
#define MAGIC "hsksyms\n"
#define VERSION 2 /* 2: an end marker is never chosen among aliases */
#define BYTE_ORDER_MARK 0x01020304u
#define MODULES_MAX ((size_t)16 << 20)
#define ENTRY_MAX ((uint64_t)1 << 30)

/* What the table depends on. A module load or unload changes /proc/modules; a new boot changes
 * the boot id (and with it, under KASLR, every address). */
struct key {
	char boot_id[40];         /* as the file has it, without the newline, NUL-padded */
	uint64_t modules_len;     /* UINT64_MAX: no modules file (a kernel without modules) */
	uint64_t modules_hash[2]; /* of the whole file, two seeds */
};

/* The entry: this header, then the ranges, the symbols, and the names they point to. */
struct header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t sizeof_header, sizeof_ksym, sizeof_range, zero;
	struct key key;
	uint64_t file_size;
	uint64_t ranges_off, nranges;
	uint64_t syms_off, nsyms;
	uint64_t names_off, names_len;
};

_Static_assert(sizeof(struct header) % 8 == 0 && sizeof(struct hs_ksym) % 8 == 0 && sizeof(struct hs_krange) % 8 == 0,
	       "every part of the entry starts 8-aligned");

static int read_key(const struct hs_kernel_files *f, struct key *ret)
{
	char *b = NULL;
	size_t len = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if ((rc = hs_read_file(f->boot_id, 0, 64, &b, &len)))
		return rc;
	while (len && (b[len - 1] == '\n' || b[len - 1] == '\0'))
		len--;
	if (!len || len >= sizeof(ret->boot_id) || memchr(b, '\0', len)) {
		free(b);
		return -EBADMSG;
	}
	memcpy(ret->boot_id, b, len);
	free(b);
	b = NULL;
	rc = hs_read_file(f->modules, 0, MODULES_MAX, &b, &len);
	if (rc == -ENOENT) {
		ret->modules_len = UINT64_MAX;
		return 0;
	}
	if (rc)
		return rc;
	ret->modules_len = len;
	ret->modules_hash[0] = hs_hash_bytes(b, len, 0);
	ret->modules_hash[1] = hs_hash_bytes(b, len, 0x5bd1e9955bd1e995ULL);
	free(b);
	return 0;
}

/* Whether n elements of size at off fit in a file of size bytes. */
static bool fits(uint64_t off, uint64_t n, uint64_t size, uint64_t file_size)
{
	return off <= file_size && off % 8 == 0 && n <= (file_size - off) / size;
}

/* Checks the header, the names' ends and the ranges (a few hundred), so that an entry that is
 * damaged there is refused, not used. The symbols are not walked: a hundred thousand of them,
 * megabytes that a walk would fault in on every run, while a recording looks up a few hundred.
 * A lookup checks the name offsets of the symbol it returns instead (hs_kallsyms_lookup()), and
 * a binary search stays inside the array whatever the addresses: a damaged symbol can misname
 * an address, never make a read outside the entry. */
static bool entry_valid(const void *map, uint64_t size, const struct key *key)
{
	const struct header *h = map;
	const struct hs_krange *r;
	const char *names;

	if (size < sizeof(*h) || memcmp(h->magic, MAGIC, 8) || h->version != VERSION ||
	    h->byte_order != BYTE_ORDER_MARK || h->sizeof_header != sizeof(*h) ||
	    h->sizeof_ksym != sizeof(struct hs_ksym) || h->sizeof_range != sizeof(struct hs_krange) || h->zero ||
	    memcmp(&h->key, key, sizeof(*key)) || h->file_size != size)
		return false;
	if (!h->nranges || !h->nsyms || !h->names_len || !fits(h->ranges_off, h->nranges, sizeof(*r), size) ||
	    !fits(h->syms_off, h->nsyms, sizeof(struct hs_ksym), size) || h->names_off > size ||
	    h->names_len > size - h->names_off || h->names_len > UINT32_MAX)
		return false;
	names = (const char *)map + h->names_off;
	/* every name ends inside the pool, whatever offset points into it */
	if (names[0] || names[h->names_len - 1])
		return false;
	r = (const struct hs_krange *)((const char *)map + h->ranges_off);
	for (uint64_t i = 0; i < h->nranges; i++)
		if (r[i].start >= r[i].end || (i && r[i].start < r[i - 1].end))
			return false;
	return true;
}

static int load_entry(const struct key *key, struct hs_kallsyms **ret)
{
	int fd = hs_cache_open(ENTRY);
	const struct header *h;
	struct hs_kallsyms *k;
	struct stat st;
	void *map;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(*h) || (uint64_t)st.st_size > ENTRY_MAX) {
		close(fd);
		return -EBADMSG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if (!entry_valid(map, (uint64_t)st.st_size, key)) {
		munmap(map, (size_t)st.st_size);
		return -ESTALE;
	}
	h = map;
	k = hs_xcalloc(1, sizeof(*k));
	k->map = map;
	k->map_len = (size_t)st.st_size;
	/* read-only memory: nothing writes to a table once it is made */
	k->syms = (struct hs_ksym *)((char *)map + h->syms_off);
	k->n = h->nsyms;
	k->names = (char *)map + h->names_off;
	k->names_len = h->names_len;
	k->ranges = (const struct hs_krange *)((char *)map + h->ranges_off);
	k->nranges = h->nranges;
	k->text_end = k->ranges[k->nranges - 1].end;
	*ret = k;
	return 0;
}

/* Code that the kernel makes and drops without a module coming or going: BPF programs and
 * the trampolines of ftrace and kprobes, shown as pseudo-modules. */
static bool dynamic_module(const char *m)
{
	return !strcmp(m, "bpf") || !strncmp(m, "__builtin__", 11);
}

/* The entry's names: only those of the symbols kept, each module's once. */
struct pool {
	char *v;
	size_t n, cap;
};

static uint32_t pool_add(struct pool *pool, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = (uint32_t)pool->n;

	hs_vec_reserve(pool, pool->n + n);
	memcpy(pool->v + pool->n, s, n);
	pool->n += n;
	return off;
}

static int range_cmp(const void *a, const void *b)
{
	const struct hs_krange *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Writes k, less its dynamic text, with the text range of each module (and of the kernel):
 * from its lowest symbol to the page past its highest, a module's text being one page-aligned
 * allocation. Best effort: a cache that cannot be written is only a slower next run. */
static void write_entry(const struct hs_kallsyms *k, const struct key *key)
{
	struct mod {
		const char *name;
		uint32_t off;
		struct hs_krange r;
	};
	HS_VEC(struct mod) mods = {0};
	struct pool pool = {0};
	struct hs_ksym *syms = hs_xcalloc(k->n ? k->n : 1, sizeof(*syms)); /* zeroed padding */
	struct hs_krange *ranges = NULL;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), nr = 0;
	struct header h = {0};
	struct hs_outfile o;
	size_t n = 0, last = 0;

	hs_vec_push(&pool, '\0');
	for (size_t i = 0; i < k->n; i++) {
		const struct hs_ksym *s = &k->syms[i];
		const char *mod = k->names + s->module;
		size_t m;

		if (s->module && dynamic_module(mod))
			continue;
		/* a module's symbols come together: the last one is nearly always the one */
		if (mods.n && !strcmp(mods.v[last].name, mod)) {
			m = last;
		} else {
			for (m = 0; m < mods.n && strcmp(mods.v[m].name, mod); m++)
				;
			if (m == mods.n) {
				struct mod nm = {mod, *mod ? pool_add(&pool, mod) : 0, {s->addr, s->addr}};
				hs_vec_push(&mods, nm);
			}
			last = m;
		}
		if (mods.v[m].r.end < s->addr)
			mods.v[m].r.end = s->addr;
		syms[n].addr = s->addr;
		syms[n].name = pool_add(&pool, k->names + s->name);
		syms[n].module = mods.v[m].off;
		syms[n].global = s->global;
		n++;
	}
	if (!n || !page || pool.n > UINT32_MAX)
		goto out;
	ranges = hs_xcalloc(mods.n, sizeof(*ranges));
	for (size_t m = 0; m < mods.n; m++) {
		ranges[m].start = mods.v[m].r.start;
		ranges[m].end = (mods.v[m].r.end & ~(page - 1)) + page;
	}
	qsort(ranges, mods.n, sizeof(*ranges), range_cmp);
	for (size_t m = 0; m < mods.n; m++) {
		if (nr && ranges[m].start < ranges[nr - 1].end) {
			if (ranges[nr - 1].end < ranges[m].end)
				ranges[nr - 1].end = ranges[m].end;
		} else {
			ranges[nr++] = ranges[m];
		}
	}

	memcpy(h.magic, MAGIC, 8);
	h.version = VERSION;
	h.byte_order = BYTE_ORDER_MARK;
	h.sizeof_header = sizeof(h);
	h.sizeof_ksym = sizeof(*syms);
	h.sizeof_range = sizeof(*ranges);
	h.key = *key;
	h.ranges_off = sizeof(h);
	h.nranges = nr;
	h.syms_off = h.ranges_off + nr * sizeof(*ranges);
	h.nsyms = n;
	h.names_off = h.syms_off + n * sizeof(*syms);
	h.names_len = pool.n;
	h.file_size = h.names_off + h.names_len;
	if (hs_cache_create(&o, ENTRY))
		goto out;
	hs_outfile_write(&o, &h, sizeof(h));
	hs_outfile_write(&o, ranges, nr * sizeof(*ranges));
	hs_outfile_write(&o, syms, n * sizeof(*syms));
	hs_outfile_write(&o, pool.v, pool.n);
	hs_outfile_commit(&o);
out:
	free(ranges);
	free(syms);
	hs_vec_free(&pool);
	hs_vec_free(&mods);
}

/* Whether the kernel shows this user its symbols' addresses now: some address in the first
 * lines of the kallsyms file is not zero (the kernel formats only what is read: cheap). An
 * entry is used only then, so that raising kernel.kptr_restrict takes back what it hides. */
static bool addresses_shown(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (const char *line = buf; *line; line++) {
		size_t digits = strspn(line, "0123456789abcdefABCDEF");
		if (digits && line[digits] == ' ' && strspn(line, "0") < digits)
			return true;
		if (!(line = strchr(line, '\n')))
			break;
	}
	return false;
}

int hs_kallsyms_load_kernel(const struct hs_kernel_files *f, bool fresh, struct hs_kallsyms **ret)
{
	struct key before, after;
	struct hs_kallsyms *k = NULL;
	bool keyed = hs_cache_dir() && read_key(f, &before) == 0;
	int rc;

	if (keyed && !fresh && addresses_shown(f->kallsyms) && load_entry(&before, ret) == 0)
		return 0;
	if ((rc = hs_kallsyms_load(f->kallsyms, &k)))
		return rc;
	/* a module that came or went during the read: the table is right, but for neither key */
	if (keyed && read_key(f, &after) == 0 && !memcmp(&before, &after, sizeof(before)))
		write_entry(k, &before);
	*ret = k;
	return 0;
}
