/* The JIT code store's jitdump side. jitdump records become code entries with a validity
 * interval in time; a process's entries are kept in appearance order and indexed by start
 * address (a sorted index extended by merging, with the running maximum of ends so that a
 * lookup walks back only over entries that can still cover the address). Perf maps are
 * jit-perfmap.c's; processes, warnings and file checks jit-proc.c's. */
#include "jit.h"
#include "jit-proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/dso-file.h"
#include "util/infile.h"
#include "util/strbuf.h"

#define UNTIMED_REREAD_NS 10000000ULL
#define HEADER_READ 4096

struct hs_jit_source {
	int fd;
	char *path;
	dev_t dev;
	ino_t ino;
	bool have_header;
	struct hs_jitdump_header h;
	uint64_t off;         /* file offset of the next record */
	bool done;            /* CODE_CLOSE, or an error nothing after can be found past */
	bool timed;
	bool arch_time;
	uint64_t read_until;  /* CLOCK_MONOTONIC when last read to the end: records of times before
	                       * it are in (live); UINT64_MAX once read whole */
	uint64_t records;
	/* CODE_DEBUG_INFO and CODE_UNWINDING_INFO describe the CODE_LOAD that follows them */
	bool pending_lines;
	uint64_t pending_lines_addr;
	uint32_t pending_line0, pending_nlines;
	uint32_t pending_unwind;
};

/* ---- strings ---- */

struct str_key {
	const struct hs_jit *j;
	const char *s;
	size_t n;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	const char *s = hs_jit_str(k->j, id);
	return !strncmp(s, k->s, k->n) && s[k->n] == '\0';
}

/* Strings in one pool, not one allocation each: a perf map of a million lines is a million
 * names. */
static uint32_t intern(struct hs_jit *j, const char *s, size_t n)
{
	struct str_key k = {j, s, n};
	uint64_t h;
	uint32_t id;
	char *copy;

	/* a name stops at an embedded NUL, as C strings do */
	n = strnlen(s, n);
	k.n = n;
	h = hs_hash_mem(s, n);
	id = hs_index_find(&j->str_ix, h, str_eq, &k);
	if (id != UINT32_MAX)
		return id;
	if (j->str_pool.n + n + 1 > UINT32_MAX)
		hs_die_oom();
	hs_vec_reserve(&j->str_pool, j->str_pool.n + n + 1);
	copy = j->str_pool.v + j->str_pool.n;
	memcpy(copy, s, n);
	copy[n] = '\0';
	/* names end up in text formats: no line breaks or control characters */
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	id = (uint32_t)j->str_off.n;
	hs_vec_push(&j->str_off, (uint32_t)j->str_pool.n);
	j->str_pool.n += n + 1;
	hs_index_insert(&j->str_ix, h, id);
	return id;
}

/* ---- lifecycle ---- */

void hs_jit_init(struct hs_jit *j, const struct hs_jit_opts *opts)
{
	memset(j, 0, sizeof(*j));
	if (opts)
		j->opts = *opts;
	intern(j, "", 0);
}

static void source_free(struct hs_jit_source *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

static void proc_free(struct hs_jit_proc *p)
{
	for (size_t k = 0; k < p->sources.n; k++)
		source_free(p->sources.v[k]);
	hs_vec_free(&p->sources);
	hs_vec_free(&p->codes);
	hs_vec_free(&p->by_start);
	hs_vec_free(&p->max_end);
	hs_u64map_release(&p->by_index);
	hs_vec_free(&p->pm_entries);
	hs_vec_free(&p->pm_segs);
	free(p->pm_path);
	free(p);
}

void hs_jit_release(struct hs_jit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->procs.n; i++)
		proc_free(j->procs.v[i]);
	hs_vec_free(&j->procs);
	hs_u64map_release(&j->proc_ix);
	hs_vec_free(&j->str_pool);
	hs_vec_free(&j->str_off);
	hs_index_release(&j->str_ix);
	hs_vec_free(&j->lines);
	for (size_t i = 0; i < j->unwinds.n; i++)
		free(j->unwinds.v[i].data); /* tables: the unwinder freed them */
	hs_vec_free(&j->unwinds);
	hs_vec_free(&j->buf);
	hs_vec_free(&j->pm_names);
	for (size_t i = 0; i < j->warnings.n; i++)
		free(j->warnings.v[i]);
	hs_vec_free(&j->warnings);
	hs_vec_free(&j->dropped_tables);
	memset(j, 0, sizeof(*j));
}

/* The packing of hs_jit_forget(): the new pools, and where each old entry went. */
struct jit_pack {
	struct hs_jit *j;
	struct hs_jit n;        /* the new strings, lines and unwinding information */
	struct hs_u64map lines; /* old line0 -> new line0 */
	uint32_t *unwinds;      /* old index -> new index + 1, 0 while not moved */
};

static uint32_t pack_str(struct jit_pack *k, uint32_t id)
{
	const char *s = hs_jit_str(k->j, id);
	return intern(&k->n, s, strlen(s));
}

/* Lines [line0, line0 + nlines) of the old store: their new first index. */
static uint32_t pack_lines(struct jit_pack *k, uint32_t line0, uint32_t nlines)
{
	uint64_t to;

	if (!nlines)
		return 0;
	if (hs_u64map_get(&k->lines, line0, &to))
		return (uint32_t)to;
	to = k->n.lines.n;
	for (uint32_t i = 0; i < nlines; i++) {
		struct hs_jit_line l = k->j->lines.v[line0 + i];
		l.file = pack_str(k, l.file);
		hs_vec_push(&k->n.lines, l);
	}
	hs_u64map_put(&k->lines, line0, to);
	return (uint32_t)to;
}

/* Unwinding information index + 1 (0: none) of the old store, in the new one. */
static uint32_t pack_unwind(struct jit_pack *k, uint32_t unwind)
{
	if (!unwind)
		return 0;
	if (!k->unwinds[unwind - 1]) {
		hs_vec_push(&k->n.unwinds, k->j->unwinds.v[unwind - 1]);
		k->n.unwind_bytes += k->j->unwinds.v[unwind - 1].eh_frame_size + k->j->unwinds.v[unwind - 1].hdr_size;
		k->unwinds[unwind - 1] = (uint32_t)k->n.unwinds.n;
	}
	return k->unwinds[unwind - 1];
}

static void pack_proc(struct jit_pack *k, struct hs_jit_proc *p)
{
	for (size_t i = 0; i < p->codes.n; i++) {
		struct hs_jit_code *c = &p->codes.v[i];
		c->name = pack_str(k, c->name);
		c->line0 = pack_lines(k, c->line0, c->nlines);
		c->unwind = pack_unwind(k, c->unwind);
	}
	for (size_t i = 0; i < p->sources.n; i++) {
		struct hs_jit_source *s = p->sources.v[i];
		if (s->pending_lines)
			s->pending_line0 = pack_lines(k, s->pending_line0, s->pending_nlines);
		s->pending_unwind = pack_unwind(k, s->pending_unwind);
	}
	for (size_t i = 0; i < p->pm_entries.n; i++) {
		const char *name = k->j->pm_names.v + p->pm_entries.v[i].name;
		size_t len = strlen(name) + 1;
		p->pm_entries.v[i].name = (uint32_t)k->n.pm_names.n;
		hs_vec_reserve(&k->n.pm_names, k->n.pm_names.n + len);
		memcpy(k->n.pm_names.v + k->n.pm_names.n, name, len);
		k->n.pm_names.n += len;
	}
	k->n.ncodes += p->codes.n;
	k->n.pm_entries += p->pm_entries.n;
	k->n.pm_bytes += p->pm_consumed;
}

size_t hs_jit_forget(struct hs_jit *j, const struct hs_u64map *gone)
{
	struct jit_pack k;
	size_t kept = 0, n;
	uint64_t v;

	for (size_t i = 0; i < j->procs.n; i++)
		if (!hs_u64map_get(gone, (uint32_t)j->procs.v[i]->pid, &v))
			j->procs.v[kept++] = j->procs.v[i];
		else
			proc_free(j->procs.v[i]);
	n = j->procs.n - kept;
	if (!n)
		return 0;
	j->procs.n = kept;
	hs_u64map_release(&j->proc_ix);
	for (size_t i = 0; i < j->procs.n; i++)
		hs_u64map_put(&j->proc_ix, (uint32_t)j->procs.v[i]->pid, i);
	/* what the processes kept refer to, into new pools */
	memset(&k, 0, sizeof(k));
	k.j = j;
	k.unwinds = hs_xcalloc(j->unwinds.n + 1, sizeof(*k.unwinds));
	intern(&k.n, "", 0);
	for (size_t i = 0; i < j->procs.n; i++)
		pack_proc(&k, j->procs.v[i]);
	for (size_t i = 0; i < j->unwinds.n; i++) {
		if (k.unwinds[i])
			continue;
		free(j->unwinds.v[i].data);
		if (j->unwinds.v[i].table)
			hs_vec_push(&j->dropped_tables, j->unwinds.v[i].table);
	}
	free(k.unwinds);
	hs_u64map_release(&k.lines);
#define SWAP_POOL(f)              \
	do {                      \
		hs_vec_free(&j->f); \
		j->f = k.n.f;     \
	} while (0)
	SWAP_POOL(str_pool);
	SWAP_POOL(str_off);
	SWAP_POOL(lines);
	SWAP_POOL(unwinds);
	SWAP_POOL(pm_names);
#undef SWAP_POOL
	hs_index_release(&j->str_ix);
	j->str_ix = k.n.str_ix;
	j->ncodes = k.n.ncodes;
	j->pm_entries = k.n.pm_entries;
	j->pm_bytes = k.n.pm_bytes;
	j->unwind_bytes = k.n.unwind_bytes;
	return n;
}

/* ---- code entries ---- */

struct start_key {
	uint64_t start;
	uint32_t ix;
};

static int start_key_cmp(const void *a, const void *b)
{
	const struct start_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* Brings the start index up to date: the entries added since are sorted and merged in, and the
 * running maximum of ends recomputed. */
static void index_codes(struct hs_jit_proc *p)
{
	size_t old = p->by_start.n, n = p->codes.n, m = n - old, a = 0, b = 0, k = 0;
	struct start_key *tail;
	uint32_t *merged;
	uint64_t mx = 0;

	if (!m)
		return;
	tail = hs_xmalloc(m * sizeof(*tail));
	for (size_t i = 0; i < m; i++) {
		tail[i].start = p->codes.v[old + i].start;
		tail[i].ix = (uint32_t)(old + i);
	}
	qsort(tail, m, sizeof(*tail), start_key_cmp);
	merged = hs_xmalloc(n * sizeof(*merged));
	while (a < old || b < m) {
		if (b == m || (a < old && p->codes.v[p->by_start.v[a]].start <= tail[b].start))
			merged[k++] = p->by_start.v[a++];
		else
			merged[k++] = tail[b++].ix;
	}
	free(tail);
	free(p->by_start.v);
	p->by_start.v = merged;
	p->by_start.n = p->by_start.cap = n;
	hs_vec_reserve(&p->max_end, n);
	for (size_t i = 0; i < n; i++) {
		mx = HS_MAX(mx, p->codes.v[p->by_start.v[i]].end);
		p->max_end.v[i] = mx;
	}
	p->max_end.n = n;
}

static uint64_t record_time(struct hs_jit *j, const struct hs_jit_source *s, uint64_t t)
{
	return s->arch_time && j->opts.tsc.valid ? hs_tsc_to_ns(&j->opts.tsc, t) : t;
}

static void add_code(struct hs_jit *j, struct hs_jit_proc *p, const struct hs_jit_code *c)
{
	hs_vec_push(&p->codes, *c);
	hs_u64map_put(&p->by_index, c->code_index == UINT64_MAX ? UINT64_MAX - 1 : c->code_index, p->codes.n - 1);
	j->ncodes++;
}

/* A code record not taken in: malformed, or over the cap on code entries. */
static void skip_code(struct hs_jit *j)
{
	j->stats.skipped_records++;
	j->stats.codes_over_cap += j->ncodes >= HS_JIT_MAX_CODES;
}

static void on_load(struct hs_jit *j, struct hs_jit_proc *p, struct hs_jit_source *s, const struct hs_jitdump_record *r)
{
	struct hs_jit_code c = {0};
	bool lines = s->pending_lines, unwind = s->pending_unwind != 0;
	uint64_t addr = r->load.code_addr;

	s->pending_lines = false;
	c.unwind = s->pending_unwind;
	s->pending_unwind = 0;
	j->stats.code_loads++;
	if (!r->load.code_size || r->load.code_size > HS_JITDUMP_MAX_CODE_SIZE || addr + r->load.code_size < addr ||
	    j->ncodes >= HS_JIT_MAX_CODES) {
		skip_code(j);
		return;
	}
	c.start = addr;
	c.end = addr + r->load.code_size;
	c.load_time = record_time(j, s, r->timestamp);
	c.end_time = UINT64_MAX;
	c.seq = ++j->seq;
	c.code_index = r->load.code_index;
	c.id = ++j->next_id;
	c.name = intern(j, r->load.name, r->load.name_len);
	c.timed = s->timed;
	/* the debug information was written for this code's address (or its vma) */
	if (lines && (s->pending_lines_addr == addr || s->pending_lines_addr == r->load.vma)) {
		c.line0 = s->pending_line0;
		c.nlines = s->pending_nlines;
		for (uint32_t i = 0; i < c.nlines; i++)
			j->lines.v[c.line0 + i].off -= s->pending_lines_addr;
	}
	if (unwind)
		j->unwinds.v[c.unwind - 1].code_size = r->load.code_size;
	add_code(j, p, &c);
}

static void on_move(struct hs_jit *j, struct hs_jit_proc *p, struct hs_jit_source *s, const struct hs_jitdump_record *r)
{
	uint64_t ix, t = record_time(j, s, r->timestamp);
	uint64_t key = r->move.code_index == UINT64_MAX ? UINT64_MAX - 1 : r->move.code_index;
	struct hs_jit_code c;

	j->stats.code_moves++;
	if (!hs_u64map_get(&p->by_index, key, &ix) || j->ncodes >= HS_JIT_MAX_CODES) {
		skip_code(j);
		return;
	}
	c = p->codes.v[ix];
	if (c.start != r->move.old_code_addr) {
		j->stats.skipped_records++; /* not the code this index named */
		return;
	}
	/* the old place holds it until the move; the new one from then on */
	p->codes.v[ix].end_time = s->timed ? t : 0;
	if (c.end - c.start + r->move.new_code_addr < r->move.new_code_addr)
		return;
	c.end = r->move.new_code_addr + (c.end - c.start);
	c.start = r->move.new_code_addr;
	c.load_time = t;
	c.end_time = UINT64_MAX;
	c.seq = ++j->seq;
	c.id = ++j->next_id;
	add_code(j, p, &c);
}

static int line_cmp(const void *a, const void *b)
{
	const struct hs_jit_line *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void on_debug(struct hs_jit *j, struct hs_jit_source *s, const struct hs_jitdump_record *r)
{
	struct hs_jitdump_debug_iter it = {0};
	struct hs_jitdump_debug_entry e;
	size_t first = j->lines.n;

	j->stats.debug_infos++;
	s->pending_lines = false;
	while (hs_jitdump_debug_next(r, &it, &e)) {
		/* absolute addresses for now: made relative to the code's start by its CODE_LOAD */
		struct hs_jit_line l = {e.addr, e.line, intern(j, e.file, e.file_len)};
		if (e.addr < r->debug.code_addr)
			continue;
		if (j->lines.n >= HS_JIT_MAX_LINES) {
			j->stats.lines_over_cap++;
			break;
		}
		hs_vec_push(&j->lines, l);
	}
	if (j->lines.n == first)
		return;
	qsort(j->lines.v + first, j->lines.n - first, sizeof(*j->lines.v), line_cmp);
	s->pending_lines = true;
	s->pending_lines_addr = r->debug.code_addr;
	s->pending_line0 = (uint32_t)first;
	s->pending_nlines = (uint32_t)(j->lines.n - first);
}

static void on_unwind(struct hs_jit *j, struct hs_jit_source *s, const struct hs_jitdump_record *r)
{
	struct hs_jit_unwind u = {0};
	size_t n = (size_t)r->unwind.unwinding_size;

	j->stats.unwinding_infos++;
	s->pending_unwind = 0;
	if (!n || r->unwind.eh_frame_hdr_size == n)
		return; /* nothing but a header: the code has no CFI (frame pointers) */
	if (j->unwind_bytes + n > HS_JIT_MAX_UNWIND_BYTES) {
		j->stats.unwind_over_cap++; /* frame pointers then */
		return;
	}
	u.data = hs_xmalloc(n);
	memcpy(u.data, r->unwind.data, n);
	u.hdr_size = (size_t)r->unwind.eh_frame_hdr_size;
	u.eh_frame_size = n - u.hdr_size;
	j->unwind_bytes += n;
	hs_vec_push(&j->unwinds, u);
	s->pending_unwind = (uint32_t)j->unwinds.n;
}

/* ---- reading jitdump files ---- */

static void source_read(struct hs_jit *j, struct hs_jit_proc *p, struct hs_jit_source *s)
{
	uint64_t started = j->opts.live ? hs_now_ns() : UINT64_MAX;
	size_t want = HS_JIT_READ_CHUNK;

	if (s->done || s->fd < 0)
		return;
	if (!s->have_header) {
		struct hs_error err = {0};
		size_t got = hs_jit_read_at(j, s->fd, 0, HEADER_READ);
		int rc = hs_jitdump_header_parse(j->buf.v, got, &s->h, &err);
		if (rc == -ENODATA) {
			if (!j->opts.live)
				s->done = true;
			return;
		}
		if (rc) {
			hs_jit_warn(j, "%s: %s", s->path, err.detail);
			s->done = true;
			return;
		}
		s->have_header = true;
		s->off = s->h.size;
		s->arch_time = (s->h.flags & HS_JITDUMP_FLAG_ARCH_TIMESTAMP) != 0;
		s->timed = j->opts.timed && (!s->arch_time || j->opts.tsc.valid);
		j->stats.files++;
	}
	for (;;) {
		size_t got = hs_jit_read_at(j, s->fd, s->off, want), pos = 0, next_want = HS_JIT_READ_CHUNK;

		while (pos < got) {
			struct hs_jitdump_record r;
			struct hs_error err = {0};
			int rc = hs_jitdump_record_parse(j->buf.v + pos, got - pos, &s->h, s->off + pos, &r, &err);

			if (rc == -ENODATA) {
				/* not complete in what was read: a record larger than the chunk is read
				 * whole next time round; one the runtime is still writing, later */
				if (got - pos >= HS_JITDUMP_RECORD_HEADER && r.size > got - pos)
					next_want = HS_MAX(HS_JIT_READ_CHUNK, (size_t)r.size);
				break;
			}
			if (rc == -EBADMSG && r.size < HS_JITDUMP_RECORD_HEADER) {
				hs_jit_warn(j, "%s: offset 0x%llx: %s: the rest of the file is ignored", s->path,
					    (unsigned long long)err.offset, err.detail);
				s->done = true;
				break;
			}
			pos += r.size;
			j->stats.records++;
			if (++s->records > HS_JIT_MAX_RECORDS) {
				hs_jit_warn(j, "%s: more than %u records: the rest of the file is ignored", s->path,
					    HS_JIT_MAX_RECORDS);
				s->done = true;
				break;
			}
			if (rc) {
				j->stats.skipped_records++; /* over a cap, or contradicting its own size */
				continue;
			}
			switch (r.id) {
			case HS_JIT_CODE_LOAD:
				on_load(j, p, s, &r);
				break;
			case HS_JIT_CODE_MOVE:
				on_move(j, p, s, &r);
				break;
			case HS_JIT_CODE_DEBUG_INFO:
				on_debug(j, s, &r);
				break;
			case HS_JIT_CODE_UNWINDING_INFO:
				on_unwind(j, s, &r);
				break;
			case HS_JIT_CODE_CLOSE:
				s->done = true; /* the runtime is done with the file */
				break;
			default:
				j->stats.skipped_records++; /* a newer writer's record: its size skips it */
				break;
			}
			if (s->done)
				break;
		}
		s->off += pos;
		if (s->done || got < want || (!pos && next_want <= want))
			break; /* the end of what the file holds now */
		want = next_want;
	}
	s->read_until = started;
}

void hs_jit_add_jitdump(struct hs_jit *j, int32_t pid, int fd, const char *path)
{
	struct hs_jit_proc *p = hs_jit_proc_get(j, pid);
	struct hs_jit_source *s;
	struct stat st;

	hs_jit_note_process(j, pid);
	if (fd < 0 && path) {
		/* the path as the process sees it */
		struct hs_strbuf sb = {0};
		if (path[0] == '/' && j->opts.live && hs_pid_has_own_root(pid))
			hs_strbuf_addf(&sb, "/proc/%d/root%s", (int)pid, path);
		else
			hs_strbuf_adds(&sb, path);
		/* a regular file only, never a FIFO or a device named like a jitdump file; not
		 * through a symbolic link: the file is the runtime's, a link could be anyone's */
		fd = hs_infile_open(hs_strbuf_str(&sb), HS_INFILE_NOFOLLOW, NULL);
		hs_strbuf_release(&sb);
		if (fd < 0) {
			if (!hs_jit_open_refused(j, fd, path))
				hs_jit_warn(j, "cannot open '%s': %s", path, strerror(-fd));
			return;
		}
	}
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	/* written by the runtime: its user's, or root's (as perf maps, below) */
	if (!hs_jit_owner_ok(j, p, path ? path : "jitdump", st.st_uid)) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < p->sources.n; i++) {
		if (p->sources.v[i]->dev == st.st_dev && p->sources.v[i]->ino == st.st_ino) {
			close(fd);
			return;
		}
	}
	s = hs_xcalloc(1, sizeof(*s));
	s->fd = fd;
	s->path = hs_xstrdup(path ? path : "jitdump");
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	hs_vec_push(&p->sources, s);
	if (!j->opts.live) {
		source_read(j, p, s);
		s->read_until = UINT64_MAX;
	}
}

bool hs_jit_has_jitdump(const struct hs_jit *j, int32_t pid)
{
	const struct hs_jit_proc *p = hs_jit_proc_find(j, pid);
	return p && p->sources.n;
}

void hs_jit_read_all(struct hs_jit *j, int32_t pid)
{
	for (size_t i = 0; i < j->procs.n; i++) {
		struct hs_jit_proc *p = j->procs.v[i];
		if (pid != -1 && p->pid != pid)
			continue;
		for (size_t k = 0; k < p->sources.n; k++)
			source_read(j, p, p->sources.v[k]);
	}
}

/* Whether a is a better answer than b for time t. */
static bool better(const struct hs_jit_code *a, const struct hs_jit_code *b)
{
	if (!b)
		return true;
	if (a->timed != b->timed)
		return a->timed;
	if (a->timed && a->load_time != b->load_time)
		return a->load_time > b->load_time;
	return a->seq > b->seq;
}

const struct hs_jit_code *hs_jit_find(struct hs_jit *j, int32_t pid, uint64_t addr, uint64_t time)
{
	struct hs_jit_proc *p = hs_jit_proc_find(j, pid);
	const struct hs_jit_code *best = NULL, *after = NULL;
	bool earlier = false; /* some code was there at or before time */
	size_t lo = 0, hi;

	if (!p || !p->sources.n)
		return NULL;
	if (j->opts.live) {
		/* what was appended since the last read, when the sample may need it: its time is past
		 * that read (without comparable times: every 10 ms at most) */
		for (size_t k = 0; k < p->sources.n; k++) {
			struct hs_jit_source *s = p->sources.v[k];
			if (!s->done && (s->timed ? time >= s->read_until : hs_now_ns() >= s->read_until + UNTIMED_REREAD_NS))
				source_read(j, p, s);
		}
	}
	index_codes(p);
	/* the last entry starting at or before addr, then back while an earlier one can reach it */
	hi = p->by_start.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->codes.v[p->by_start.v[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && p->max_end.v[i] > addr;) {
		const struct hs_jit_code *c = &p->codes.v[p->by_start.v[i]];
		if (c->end <= addr)
			continue;
		if (!c->timed) {
			/* no usable time: the newest that did not move away */
			if (c->end_time == UINT64_MAX && better(c, best))
				best = c;
		} else if (c->load_time <= time) {
			earlier = true;
			if (time < c->end_time && better(c, best))
				best = c;
		} else if (!after || c->load_time < after->load_time) {
			after = c;
		}
	}
	return best ? best : earlier ? NULL : after;
}

bool hs_jit_code_line(const struct hs_jit *j, const struct hs_jit_code *c, uint64_t addr, const char **file,
		      uint32_t *line)
{
	uint32_t lo = 0, hi = c->nlines;
	const struct hs_jit_line *v;
	uint64_t off;

	if (!c->nlines || addr < c->start || !j->lines.v)
		return false;
	v = j->lines.v + c->line0;
	off = addr - c->start;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*file = hs_jit_str(j, v[lo - 1].file);
	*line = v[lo - 1].line;
	return true;
}

void hs_jit_end(struct hs_jit *j)
{
	struct hs_jit_stats *st = &j->stats;

	hs_jit_perfmap_end(j);
	if (st->codes_over_cap)
		hs_jit_warn_always(j, "jitdump files describe more than %u pieces of code in all: %llu more were not "
				      "read",
				   HS_JIT_MAX_CODES, (unsigned long long)st->codes_over_cap);
	if (st->lines_over_cap)
		hs_jit_warn_always(j, "jitdump files give more than %u source lines in all: those of %llu more records "
				      "were not read",
				   HS_JIT_MAX_LINES, (unsigned long long)st->lines_over_cap);
	if (st->unwind_over_cap)
		hs_jit_warn_always(j, "jitdump files give more than %zu MiB of unwinding information in all: %llu more "
				      "records were not read (their code is unwound by frame pointer)",
				   HS_JIT_MAX_UNWIND_BYTES >> 20, (unsigned long long)st->unwind_over_cap);
}
