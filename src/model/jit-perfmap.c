/* The JIT code store's perf maps (/tmp/perf-PID.map): found for a process as it sees its /tmp,
 * read while the runtime appends (complete lines only, bounded in lines and bytes over all
 * processes), and flattened, later lines over earlier ones, into non-overlapping ranges that
 * name an address. */
#include "jit.h"
#include "jit-proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/perf-map.h"
#include "util/infile.h"
#include "util/strbuf.h"

/* A perf map name, kept in a pool of its own: not interned (no index to pay for on every line of
 * a map of millions), as written (a name stops at an embedded NUL; control characters become
 * spaces: names end up in text formats). Perf map bytes read are capped, so offsets fit. */
static uint32_t pm_name(struct hs_jit *j, const char *s, size_t n)
{
	uint32_t off = (uint32_t)j->pm_names.n;
	char *copy;

	n = strnlen(s, n);
	hs_vec_reserve(&j->pm_names, j->pm_names.n + n + 1);
	copy = j->pm_names.v + j->pm_names.n;
	for (size_t i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
	copy[n] = '\0';
	j->pm_names.n += n + 1;
	return off;
}

/* Takes one line; returns false when the caps on all perf maps are reached (nothing taken). */
static bool pm_take_line(struct hs_jit *j, struct hs_jit_proc *p, const char *line, size_t len)
{
	struct hs_perf_map_entry e;
	struct hs_jit_pm_entry pe;

	if (!hs_perf_map_parse_line(line, len, &e))
		return true;
	if (j->pm_entries >= HS_JIT_MAX_PERFMAP_ENTRIES)
		return false;
	pe.start = e.start;
	pe.end = e.start + e.size;
	pe.name = pm_name(j, e.name, e.name_len);
	p->pm_names_cut += e.name_cut;
	hs_vec_push(&p->pm_entries, pe);
	p->pm_dirty = true;
	j->pm_entries++;
	j->stats.perf_map_entries++;
	return true;
}

/* Takes the complete lines of text (and with final the last one without its newline); returns
 * the bytes taken, short of len when the caps are reached. */
static size_t pm_feed(struct hs_jit *j, struct hs_jit_proc *p, const char *text, size_t len, bool final)
{
	size_t start = 0;

	for (const char *nl; (nl = memchr(text + start, '\n', len - start));) {
		size_t i = (size_t)(nl - text);
		if (!pm_take_line(j, p, text + start, i - start))
			return start;
		start = i + 1;
	}
	if (final && start < len && pm_take_line(j, p, text + start, len - start))
		start = len;
	return start;
}

/* The bytes of the file past off: what a read stopped there leaves unread. */
static uint64_t bytes_after(const struct stat *st, uint64_t off)
{
	return (uint64_t)st->st_size > off ? (uint64_t)st->st_size - off : 0;
}

int hs_jit_perfmap_read(struct hs_jit *j, int32_t pid, uint64_t time, uint64_t min_interval_ns, bool final)
{
	struct hs_jit_proc *p = hs_jit_proc_get(j, pid);
	struct hs_strbuf path = {0};
	struct stat st;
	uint64_t off;
	int fd, rc = 0;

	if (min_interval_ns && p->pm_tried && time - p->pm_last_try < min_interval_ns && time >= p->pm_last_try)
		return 0;
	p->pm_tried = true;
	p->pm_last_try = time;
	if (p->pm_refused)
		return -EPERM;
	hs_jit_note_process(j, pid);
	if (p->own_root)
		hs_strbuf_addf(&path, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)p->nspid);
	else
		hs_strbuf_addf(&path, "/tmp/perf-%d.map", (int)p->nspid);
	/* not through a symbolic link: the file is the runtime's, the link could be anyone's; and
	 * nothing but a regular file is opened at all (a FIFO, a device) */
	fd = hs_infile_open(hs_strbuf_str(&path), HS_INFILE_NOFOLLOW, &st);
	if (hs_jit_open_refused(j, fd, hs_strbuf_str(&path)))
		goto refused;
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	/* written by the process: its user's, or root's; without knowing the process (gone, or
	 * a recording read later), ours or root's, as perf has it */
	if (!hs_jit_owner_ok(j, p, hs_strbuf_str(&path), st.st_uid))
		goto refused;
	if (!p->pm_path)
		p->pm_path = hs_xstrdup(hs_strbuf_str(&path));
	if (st.st_dev != p->pm_dev || st.st_ino != p->pm_ino || (uint64_t)st.st_size < p->pm_consumed) {
		if (st.st_dev != p->pm_dev || st.st_ino != p->pm_ino)
			j->stats.perf_maps++;
		/* another file, or rewritten: start over (the bytes read count on: its names stay in
		 * the pool) */
		j->pm_entries -= p->pm_entries.n;
		p->pm_entries.n = 0;
		p->pm_consumed = 0;
		p->pm_skip = false;
		p->pm_dirty = true;
		p->pm_dev = st.st_dev;
		p->pm_ino = st.st_ino;
	}
	off = p->pm_consumed;
	p->pm_unread = 0;
	for (;;) {
		size_t want = (size_t)HS_MIN((uint64_t)HS_JIT_READ_CHUNK, HS_JIT_MAX_PERFMAP_BYTES - j->pm_bytes);
		size_t got, pos = 0, took;
		bool last;

		if (!want || j->pm_entries >= HS_JIT_MAX_PERFMAP_ENTRIES) {
			/* the caps on all perf maps together: what is left is not read */
			p->pm_unread = bytes_after(&st, off);
			break;
		}
		got = hs_jit_read_at(j, fd, off, want);
		last = got < want;
		if (p->pm_skip) {
			/* the rest of a line longer than a read: its entry was taken from its start */
			const char *nl = memchr(j->buf.v, '\n', got);
			pos = nl ? (size_t)(nl - (const char *)j->buf.v) + 1 : got;
			p->pm_skip = !nl;
		}
		took = pm_feed(j, p, (const char *)j->buf.v + pos, got - pos, last && final);
		if (!took && pos == 0 && !last && want == HS_JIT_READ_CHUNK && !p->pm_skip &&
		    j->pm_entries < HS_JIT_MAX_PERFMAP_ENTRIES) {
			/* a line longer than a read: its start holds the range and the name (cut); the
			 * rest is skipped up to its end */
			pm_take_line(j, p, (const char *)j->buf.v, got);
			p->pm_skip = true;
			took = got;
		}
		if (!last && pos + took == 0) {
			/* a window cut short by the byte cap ends inside a line: the cap is reached */
			p->pm_unread = bytes_after(&st, off);
			break;
		}
		off += pos + took;
		j->pm_bytes += pos + took;
		if (last)
			break;
	}
	p->pm_consumed = off;
	goto out;
refused:
	p->pm_refused = true;
	rc = -EPERM;
out:
	if (fd >= 0)
		close(fd);
	hs_strbuf_release(&path);
	return rc;
}

void hs_jit_perfmap_rewritten(struct hs_jit *j, int32_t pid)
{
	/* read as a file that shrank: from the start, its old lines dropped */
	hs_jit_proc_get(j, pid)->pm_consumed = UINT64_MAX;
}

size_t hs_jit_perfmap_feed(struct hs_jit *j, int32_t pid, const char *text, size_t len, bool final)
{
	return pm_feed(j, hs_jit_proc_get(j, pid), text, len, final);
}

void hs_jit_perfmap_end(struct hs_jit *j)
{
	struct hs_jit_stats *st = &j->stats;

	st->perf_map_bytes_unread = st->perf_maps_cut = 0;
	for (size_t i = 0; i < j->procs.n; i++) {
		const struct hs_jit_proc *p = j->procs.v[i];
		st->perf_map_bytes_unread += p->pm_unread;
		st->perf_maps_cut += p->pm_unread > 0;
		if (!p->pm_names_cut)
			continue;
		char pid[48];

		snprintf(pid, sizeof(pid), "the perf map of process %d", (int)p->pid);
		hs_jit_warn(j, "%s: %llu %s longer than %d bytes %s cut to that length",
			    p->pm_path ? p->pm_path : pid, (unsigned long long)p->pm_names_cut,
			    p->pm_names_cut == 1 ? "name" : "names", HS_PERF_MAP_MAX_NAME,
			    p->pm_names_cut == 1 ? "was" : "were");
	}
	if (st->perf_maps_cut)
		hs_jit_warn_always(j, "perf maps hold more than %u lines or %llu MiB in all: the last %llu MiB of %llu "
				      "of them were not read (JIT frames they would name stay unnamed)",
				   HS_JIT_MAX_PERFMAP_ENTRIES, (unsigned long long)(HS_JIT_MAX_PERFMAP_BYTES >> 20),
				   (unsigned long long)((st->perf_map_bytes_unread + (1 << 20) - 1) >> 20),
				   (unsigned long long)st->perf_maps_cut);
}

/* Max-heap of perf map entry indexes by position: the later line wins. The layout of
 * HS_VEC(uint32_t), named to be passed around. */
struct u32_heap {
	uint32_t *v;
	size_t n, cap;
};

static void heap_push(struct u32_heap *h, uint32_t v)
{
	size_t i;

	hs_vec_push(h, v);
	for (i = h->n - 1; i > 0 && h->v[(i - 1) / 2] < h->v[i]; i = (i - 1) / 2) {
		uint32_t t = h->v[i];
		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
	}
}

static void heap_pop(struct u32_heap *h)
{
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t t;
		if (l < h->n && h->v[l] > h->v[m])
			m = l;
		if (r < h->n && h->v[r] > h->v[m])
			m = r;
		if (m == i)
			break;
		t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
}

/* Entry indexes ordered by start, or by end (ties by index: position in the map). */
struct pm_order {
	const struct hs_jit_pm_entry *e;
	bool by_end;
};

static int pm_cmp(const void *a, const void *b, void *ctx)
{
	const struct pm_order *o = ctx;
	uint32_t i = *(const uint32_t *)a, k = *(const uint32_t *)b;
	uint64_t x = o->by_end ? o->e[i].end : o->e[i].start, y = o->by_end ? o->e[k].end : o->e[k].start;

	if (x != y)
		return x < y ? -1 : 1;
	return i < k ? -1 : i > k;
}

/* Flattens the lines into ranges that do not overlap, each owned by the last line covering
 * it: a sweep over every start and end (two index arrays, by start and by end: 8 bytes a line),
 * with the lines covering the current point in a heap. */
static void pm_flatten(struct hs_jit_proc *p)
{
	const struct hs_jit_pm_entry *e = p->pm_entries.v;
	size_t n = p->pm_entries.n, a = 0, b = 0;
	uint32_t *by_start, *by_end;
	struct u32_heap heap = {0};
	uint64_t x;

	p->pm_segs.n = 0;
	p->pm_dirty = false;
	if (!n)
		return;
	by_start = hs_xmalloc(n * sizeof(*by_start));
	by_end = hs_xmalloc(n * sizeof(*by_end));
	for (size_t i = 0; i < n; i++)
		by_start[i] = by_end[i] = (uint32_t)i;
	qsort_r(by_start, n, sizeof(*by_start), pm_cmp, &(struct pm_order){e, false});
	qsort_r(by_end, n, sizeof(*by_end), pm_cmp, &(struct pm_order){e, true});
	x = e[by_start[0]].start; /* ends are past starts: the first point is a start */
	for (;;) {
		uint64_t y = UINT64_MAX;
		struct hs_jit_pm_seg *last = p->pm_segs.n ? &p->pm_segs.v[p->pm_segs.n - 1] : NULL;

		while (a < n && e[by_start[a]].start <= x)
			heap_push(&heap, by_start[a++]);
		while (heap.n && e[heap.v[0]].end <= x)
			heap_pop(&heap);
		while (b < n && e[by_end[b]].end <= x)
			b++;
		if (a == n && b == n)
			break;
		/* the next point where a line starts or ends */
		if (a < n)
			y = e[by_start[a]].start;
		if (b < n && e[by_end[b]].end < y)
			y = e[by_end[b]].end;
		if (heap.n) {
			if (last && last->end == x && last->entry == heap.v[0]) {
				last->end = y;
			} else {
				struct hs_jit_pm_seg sg = {x, y, heap.v[0]};
				hs_vec_push(&p->pm_segs, sg);
			}
		}
		x = y;
	}
	hs_vec_free(&heap);
	free(by_start);
	free(by_end);
}

const char *hs_jit_perfmap_find(struct hs_jit *j, int32_t pid, uint64_t addr, uint64_t *start)
{
	struct hs_jit_proc *p = hs_jit_proc_find(j, pid);
	size_t lo = 0, hi;

	if (!p || !p->pm_entries.n)
		return NULL;
	if (p->pm_dirty)
		pm_flatten(p);
	hi = p->pm_segs.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->pm_segs.v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->pm_segs.n || p->pm_segs.v[lo].start > addr)
		return NULL;
	{
		const struct hs_jit_pm_entry *e = &p->pm_entries.v[p->pm_segs.v[lo].entry];
		*start = e->start;
		return j->pm_names.v + e->name;
	}
}
