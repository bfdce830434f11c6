/* The process/thread/mapping model. */
#include "model.h"
#include "proc-maps.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MODEL_MAX_MAPS_PER_PROCESS 1000000

void hs_model_init(struct hs_model *m)
{
	memset(m, 0, sizeof(*m));
	hs_jit_init(&m->jit, NULL);
}

void hs_model_release(struct hs_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->procs.n; i++) {
		hs_vec_free(&m->procs.v[i]->maps);
		free(m->procs.v[i]);
	}
	for (size_t i = 0; i < m->dsos.n; i++) {
		struct hs_dso *d = m->dsos.v[i];
		if (d->fd >= 0)
			close(d->fd);
		free(d->path);
		free(d);
	}
	hs_vec_free(&m->procs);
	hs_vec_free(&m->threads);
	hs_vec_free(&m->dsos);
	hs_u64map_release(&m->proc_ix);
	hs_u64map_release(&m->thread_ix);
	hs_index_release(&m->dso_ix);
	hs_jit_release(&m->jit);
}

bool hs_model_path_is_anon(const char *path)
{
	if (!path || !*path)
		return true;
	if (path[0] == '/')
		return !strncmp(path, "//anon", 6) || !strncmp(path, "/dev/zero", 9) ||
		       !strncmp(path, "/memfd:", 7) || !strncmp(path, "/SYSV", 5) || !strncmp(path, "/anon_hugepage", 14);
	return strcmp(path, "[vdso]") != 0; /* [heap], [stack], [anon:...], memfd ... */
}

struct dso_key {
	const struct hs_model *m;
	const struct hs_dso_ident *id;
};

static bool dso_eq(const void *ctx, uint32_t ix)
{
	const struct dso_key *k = ctx;
	const struct hs_dso *d = k->m->dsos.v[ix];
	const struct hs_dso_ident *id = k->id;

	if (strcmp(d->path, id->path ? id->path : ""))
		return false;
	if (d->build_id_size != id->build_id_size ||
	    (id->build_id_size && memcmp(d->build_id, id->build_id, id->build_id_size)))
		return false;
	return d->maj == id->maj && d->min == id->min && d->ino == id->ino;
}

static uint64_t dso_hash(const struct hs_dso_ident *id)
{
	const char *path = id->path ? id->path : "";
	uint64_t h = hs_hash_bytes(path, strlen(path), id->ino);

	if (id->build_id_size)
		h = hs_hash_combine(h, hs_hash_bytes(id->build_id, id->build_id_size, 1));
	return hs_hash_combine(h, ((uint64_t)id->maj << 32) | id->min);
}

struct hs_dso *hs_model_dso(struct hs_model *m, const struct hs_dso_ident *id)
{
	struct dso_key k = {m, id};
	const char *path = id->path ? id->path : "";
	uint64_t h = dso_hash(id);
	uint32_t ix;
	struct hs_dso *d;

	ix = hs_index_find(&m->dso_ix, h, dso_eq, &k);
	if (ix != UINT32_MAX)
		return m->dsos.v[ix];
	d = hs_xcalloc(1, sizeof(*d));
	d->id = (uint32_t)m->dsos.n;
	d->path = hs_xstrdup(path);
	d->kind = !strcmp(path, "[vdso]") ? HS_DSO_VDSO : hs_model_path_is_anon(path) ? HS_DSO_ANON : HS_DSO_FILE;
	d->build_id_size = id->build_id_size > 20 ? 20 : id->build_id_size;
	if (d->build_id_size)
		memcpy(d->build_id, id->build_id, d->build_id_size);
	d->maj = id->maj;
	d->min = id->min;
	d->ino = id->ino;
	d->ino_generation = id->ino_generation;
	d->fd = -1;
	d->pid_hint = -1;
	d->period = m->period - 1; /* no frame yet */
	d->symfs = m->symfs && *m->symfs ? m->symfs : NULL;
	hs_vec_push(&m->dsos, d);
	hs_index_insert(&m->dso_ix, h, d->id);
	return d;
}

struct hs_process *hs_model_process(struct hs_model *m, int32_t pid)
{
	uint64_t ix;
	struct hs_process *p;

	if (hs_u64map_get(&m->proc_ix, (uint32_t)pid, &ix))
		return m->procs.v[ix];
	p = hs_xcalloc(1, sizeof(*p));
	p->pid = pid;
	hs_u64map_put(&m->proc_ix, (uint32_t)pid, m->procs.n);
	hs_vec_push(&m->procs, p);
	return p;
}

static struct hs_thread *thread_get(struct hs_model *m, int32_t pid, int32_t tid)
{
	uint64_t ix;
	struct hs_thread t = {tid, pid, "", 0, 0, 0};

	if (hs_u64map_get(&m->thread_ix, (uint32_t)tid, &ix)) {
		m->threads.v[ix].pid = pid;
		return &m->threads.v[ix];
	}
	hs_u64map_put(&m->thread_ix, (uint32_t)tid, m->threads.n);
	hs_vec_push(&m->threads, t);
	return &m->threads.v[m->threads.n - 1];
}

/* First map whose end is above addr. */
static size_t first_above(const struct hs_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->maps.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps.v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* p's mappings made its own: a copy of its parent's as they are now, where it shared them. */
static void own_maps(struct hs_model *m, struct hs_process *p)
{
	struct hs_process *parent;
	uint64_t ix;

	if (!p->lazy)
		return;
	p->lazy = false;
	if (!hs_u64map_get(&m->proc_ix, (uint32_t)p->parent, &ix) || (parent = m->procs.v[ix]) == p)
		return;
	own_maps(m, parent); /* never lazy: its forks made it its own first */
	hs_vec_reserve(&p->maps, parent->maps.n);
	if (parent->maps.n) /* a parent seen only by name (system-wide) has none: v may be NULL */
		memcpy(p->maps.v, parent->maps.v, parent->maps.n * sizeof(*parent->maps.v));
	p->maps.n = parent->maps.n;
	for (size_t i = 0; i < p->maps.n; i++)
		p->maps.v[i].profile_mapping = 0;
}

/* Before p's mappings change or go: the children sharing them get a copy of them as they were
 * (those that exited need none: no sample of theirs is to come). */
static void before_change(struct hs_model *m, struct hs_process *p)
{
	if (!p->lazy_children)
		return;
	p->lazy_children = false;
	for (size_t i = 0; i < m->procs.n; i++) {
		struct hs_process *c = m->procs.v[i];
		if (!c->lazy || c->parent != p->pid || c == p)
			continue;
		if (c->exited)
			c->lazy = false;
		else
			own_maps(m, c);
	}
}

struct hs_map *hs_model_mmap(struct hs_model *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
			     uint32_t prot, struct hs_dso *dso)
{
	struct hs_process *p = hs_model_process(m, pid);
	uint64_t end = start + len;
	struct hs_map nm = {start, end, pgoff, prot, dso, 0};
	size_t i, j;

	if (!len || end < start)
		return NULL;
	before_change(m, p);
	own_maps(m, p);
	m->gen++;
	/* maps [i, j) overlap the new one; keep the parts that stick out on either side */
	i = first_above(p, start);
	for (j = i; j < p->maps.n && p->maps.v[j].start < end; j++)
		;
	if (i < j) {
		struct hs_map left = p->maps.v[i], right = p->maps.v[j - 1];
		size_t keep = 0;
		struct hs_map parts[2];

		if (left.start < start) {
			left.end = start;
			parts[keep++] = left;
		}
		if (right.end > end) {
			right.pgoff += end - right.start;
			right.start = end;
			right.profile_mapping = 0;
			parts[keep++] = right;
		}
		memmove(&p->maps.v[i], &p->maps.v[j], (p->maps.n - j) * sizeof(*p->maps.v));
		p->maps.n -= j - i;
		hs_vec_reserve(&p->maps, p->maps.n + keep);
		memmove(&p->maps.v[i + keep], &p->maps.v[i], (p->maps.n - i) * sizeof(*p->maps.v));
		memcpy(&p->maps.v[i], parts, keep * sizeof(*parts));
		p->maps.n += keep;
		i = first_above(p, start);
	}
	if (p->maps.n >= MODEL_MAX_MAPS_PER_PROCESS)
		return NULL;
	hs_vec_reserve(&p->maps, p->maps.n + 1);
	memmove(&p->maps.v[i + 1], &p->maps.v[i], (p->maps.n - i) * sizeof(*p->maps.v));
	p->maps.v[i] = nm;
	p->maps.n++;
	if (!p->exe && dso->kind == HS_DSO_FILE)
		p->exe = dso;
	if (dso->pid_hint < 0) {
		dso->pid_hint = pid;
		dso->start_hint = start;
	}
	return &p->maps.v[i];
}

struct hs_map *hs_model_find_map(struct hs_model *m, int32_t pid, uint64_t addr)
{
	uint64_t ix;
	struct hs_process *p;
	size_t i;

	if (!hs_u64map_get(&m->proc_ix, (uint32_t)pid, &ix))
		return NULL;
	p = m->procs.v[ix];
	own_maps(m, p);
	i = first_above(p, addr);
	if (i < p->maps.n && p->maps.v[i].start <= addr)
		return &p->maps.v[i];
	return NULL;
}

void hs_model_comm(struct hs_model *m, int32_t pid, int32_t tid, const char *comm, bool exec)
{
	struct hs_thread *t = thread_get(m, pid, tid);

	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	if (exec) {
		struct hs_process *p = hs_model_process(m, pid);
		before_change(m, p);
		m->gen++;
		p->lazy = false;
		p->maps.n = 0;
		p->exe = NULL;
		p->exited = false;
	}
}

void hs_model_fork(struct hs_model *m, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid)
{
	char comm[32] = "";
	uint64_t ix;
	struct hs_thread *t;

	if (hs_u64map_get(&m->thread_ix, (uint32_t)ptid, &ix))
		memcpy(comm, m->threads.v[ix].comm, sizeof(comm));
	if (pid != ppid) {
		struct hs_process *child = hs_model_process(m, pid), *parent;
		before_change(m, child);
		m->gen++;
		/* a reused pid starts from nothing; a forked process sees its parent's mappings */
		child->maps.n = 0;
		child->exe = NULL;
		child->exited = child->lazy = false;
		if (hs_u64map_get(&m->proc_ix, (uint32_t)ppid, &ix) && (parent = m->procs.v[ix]) != child) {
			own_maps(m, parent);
			child->exe = parent->exe;
			child->lazy = true;
			child->parent = ppid;
			parent->lazy_children = true;
		}
	}
	t = thread_get(m, pid, tid);
	memcpy(t->comm, comm, sizeof(comm));
	/* a new thread, maybe with a reused tid */
	t->exited = false;
	t->stack_lo = t->stack_hi = 0;
	t->stack_reads = 0;
}

void hs_model_exit(struct hs_model *m, int32_t pid, int32_t tid)
{
	uint64_t ix;

	if (pid == tid && hs_u64map_get(&m->proc_ix, (uint32_t)pid, &ix))
		m->procs.v[ix]->exited = true;
	if (pid != tid && hs_u64map_get(&m->thread_ix, (uint32_t)tid, &ix) && m->threads.v[ix].pid == pid)
		m->threads.v[ix].exited = true;
}

size_t hs_model_forget_exited(struct hs_model *m, struct hs_u64map *gone_ret)
{
	struct hs_u64map gone = {0};
	size_t kept = 0, tkept = 0;
	uint64_t ix;

	/* the children still sharing the mappings of those that go get them first */
	for (size_t i = 0; i < m->procs.n; i++)
		if (m->procs.v[i]->exited)
			before_change(m, m->procs.v[i]);
	for (size_t i = 0; i < m->procs.n; i++) {
		struct hs_process *p = m->procs.v[i];
		if (!p->exited) {
			m->procs.v[kept++] = p;
			continue;
		}
		hs_u64map_put(&gone, (uint32_t)p->pid, 1);
		if (p->stale)
			m->nstale--;
		hs_vec_free(&p->maps);
		free(p);
	}
	if (kept != m->procs.n) {
		m->procs.n = kept;
		hs_u64map_release(&m->proc_ix);
		for (size_t i = 0; i < m->procs.n; i++)
			hs_u64map_put(&m->proc_ix, (uint32_t)m->procs.v[i]->pid, i);
	}
	/* the threads of those, and the threads that exited from the others (a process that
	 * starts and joins threads all day keeps its live ones) */
	for (size_t i = 0; i < m->threads.n; i++)
		if (!m->threads.v[i].exited && !hs_u64map_get(&gone, (uint32_t)m->threads.v[i].pid, &ix))
			m->threads.v[tkept++] = m->threads.v[i];
	if (tkept != m->threads.n) {
		m->threads.n = tkept;
		hs_u64map_release(&m->thread_ix);
		for (size_t i = 0; i < m->threads.n; i++)
			hs_u64map_put(&m->thread_ix, (uint32_t)m->threads.v[i].tid, i);
	}
	if (!gone.n) {
		hs_u64map_release(&gone);
		return 0;
	}
	kept = gone.n;
	if (gone_ret) {
		hs_u64map_release(gone_ret);
		*gone_ret = gone;
	} else {
		hs_u64map_release(&gone);
	}
	m->gen++;
	return kept;
}

uint32_t *hs_model_unmapped_dsos(struct hs_model *m)
{
	uint32_t *renumber = hs_xcalloc(m->dsos.n + 1, sizeof(*renumber));
	uint32_t kept = 0;

	/* 1 where mapped or used, then the new ids in place */
	for (size_t i = 0; i < m->dsos.n; i++)
		renumber[i] = m->dsos.v[i]->period == m->period;
	m->period++;
	for (size_t i = 0; i < m->procs.n; i++) {
		const struct hs_process *p = m->procs.v[i];
		for (size_t k = 0; k < p->maps.n; k++)
			renumber[p->maps.v[k].dso->id] = 1;
		if (p->exe)
			renumber[p->exe->id] = 1;
	}
	for (size_t i = 0; i < m->dsos.n; i++)
		renumber[i] = renumber[i] ? kept++ : UINT32_MAX;
	if (kept == m->dsos.n) {
		free(renumber);
		return NULL;
	}
	return renumber;
}

void hs_model_drop_dsos(struct hs_model *m, const uint32_t *renumber)
{
	size_t kept = 0;

	if (!renumber)
		return;
	hs_index_release(&m->dso_ix);
	for (size_t i = 0; i < m->dsos.n; i++) {
		struct hs_dso *d = m->dsos.v[i];
		struct hs_dso_ident id = {d->path, d->build_id, d->build_id_size, d->maj, d->min, d->ino};
		if (renumber[i] == UINT32_MAX) {
			if (d->fd >= 0)
				close(d->fd);
			free(d->path);
			free(d);
			continue;
		}
		d->id = (uint32_t)kept;
		m->dsos.v[kept++] = d;
		hs_index_insert(&m->dso_ix, dso_hash(&id), d->id);
	}
	m->dsos.n = kept;
	m->gen++;
}

const char *hs_model_comm_of(const struct hs_model *m, int32_t tid)
{
	uint64_t ix;

	if (!hs_u64map_get(&m->thread_ix, (uint32_t)tid, &ix) || !m->threads.v[ix].comm[0])
		/* the idle task of each CPU: no COMM event or /proc entry names it; perf calls
		 * it swapper, its name in the kernel's init_task */
		return tid == 0 ? "swapper" : NULL;
	return m->threads.v[ix].comm;
}

#define THREAD_STACK_READS 4
/* All threads together: a burst of 32 reads, then 16 a second. A maps file can be tens of
 * megabytes (a process with a million mappings), and many threads with garbage frame pointers
 * each asking would hold the main thread, and its answer to a signal, for minutes. */
#define STACK_READ_BURST 32
#define STACK_READS_PER_SECOND 16

static bool take_stack_read(struct hs_model *m)
{
	uint64_t now = hs_now_ns(), per = 1000000000ULL / STACK_READS_PER_SECOND;

	if (!m->stack_read_refill_ns) {
		m->stack_read_tokens = STACK_READ_BURST;
		m->stack_read_refill_ns = now;
	} else if (now - m->stack_read_refill_ns >= per) {
		uint64_t add = (now - m->stack_read_refill_ns) / per;
		m->stack_read_tokens = (uint32_t)HS_MIN((uint64_t)STACK_READ_BURST, m->stack_read_tokens + add);
		m->stack_read_refill_ns += add * per;
	}
	if (!m->stack_read_tokens)
		return false;
	m->stack_read_tokens--;
	return true;
}

bool hs_model_thread_stack(struct hs_model *m, int32_t pid, int32_t tid, uint64_t sp, uint64_t *lo, uint64_t *hi)
{
	struct hs_thread *t = thread_get(m, pid, tid);
	char *text;
	size_t len;

	if (sp < t->stack_lo || sp >= t->stack_hi) {
		/* a thread's stack does not move: a miss is a thread not asked about yet, a reused
		 * tid, or an alternate signal stack, hence the few reads allowed */
		if (t->stack_reads >= THREAD_STACK_READS || !take_stack_read(m) || hs_proc_maps_read(pid, &text, &len) < 0)
			return false;
		t->stack_reads++;
		t->stack_lo = t->stack_hi = 0;
		for (const char *line = text; line < text + len;) {
			const char *nl = memchr(line, '\n', (size_t)(text + len - line));
			size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
			struct hs_proc_map pm;

			if (hs_proc_maps_parse_line(line, n, &pm) && sp >= pm.start && sp < pm.end) {
				t->stack_lo = pm.start;
				t->stack_hi = pm.end;
				break;
			}
			line += n + 1;
		}
		free(text);
		if (!t->stack_hi)
			return false;
	}
	*lo = t->stack_lo;
	*hi = t->stack_hi;
	return true;
}

size_t hs_model_add_proc_maps(struct hs_model *m, int32_t pid, const char *buf, size_t len,
			      void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx)
{
	char path[HS_PROC_MAPS_MAX_PATH + 1];
	size_t off = 0, added = 0;

	while (off < len) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		struct hs_dso_ident id = {0};
		struct hs_proc_map pm;
		struct hs_map *map;

		off += n + (nl != NULL);
		if (!hs_proc_maps_parse_line(line, n, &pm) || !(pm.prot & PROT_EXEC))
			continue;
		memcpy(path, pm.name, pm.name_len);
		path[pm.name_len] = '\0';
		id.path = pm.name_len ? path : "//anon";
		id.maj = pm.maj;
		id.min = pm.min;
		id.ino = pm.ino;
		map = hs_model_mmap(m, pid, pm.start, pm.end - pm.start, pm.pgoff, pm.prot, hs_model_dso(m, &id));
		if (!map)
			continue;
		added++;
		if (capture && map->dso->kind != HS_DSO_ANON)
			capture(ctx, pid, map);
	}
	return added;
}

static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t k;

	if (!f)
		return -errno;
	k = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[k] = '\0';
	while (k && (buf[k - 1] == '\n'))
		buf[--k] = '\0';
	return 0;
}

void hs_model_stale(struct hs_model *m, int32_t pid)
{
	struct hs_process *p = hs_model_process(m, pid);

	if (!p->stale)
		m->nstale++;
	p->stale = true;
}

void hs_model_stale_all(struct hs_model *m)
{
	for (size_t i = 0; i < m->procs.n; i++)
		if (!m->procs.v[i]->stale) {
			m->procs.v[i]->stale = true;
			m->nstale++;
		}
	m->unknown_stale = true;
}

int hs_model_resync(struct hs_model *m, int32_t pid, int32_t tid,
		    void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx)
{
	struct hs_process *p;
	char path[96], comm[64];
	char *text;
	size_t len;
	uint64_t ix;
	int e;

	if (hs_u64map_get(&m->proc_ix, (uint32_t)pid, &ix)) {
		p = m->procs.v[ix];
	} else if (m->unknown_stale) {
		hs_model_stale(m, pid);
		p = hs_model_process(m, pid);
	} else {
		return 0;
	}
	if (!p->stale)
		return 0;
	p->stale = false;
	m->nstale--;
	if ((e = hs_proc_maps_read(pid, &text, &len)) < 0)
		return e;
	before_change(m, p);
	m->gen++;
	p->lazy = false;
	p->maps.n = 0;
	hs_model_add_proc_maps(m, pid, text, len, capture, ctx);
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (read_small(path, comm, sizeof(comm)) == 0)
		hs_model_comm(m, pid, tid, comm, false);
	return 0;
}

int hs_model_from_proc(struct hs_model *m, int32_t pid,
		       void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx)
{
	char path[64], comm[64];
	char *text;
	size_t len;
	int e;
	DIR *d;
	struct dirent *de;

	if ((e = hs_proc_maps_read(pid, &text, &len)) < 0)
		return e;
	hs_model_add_proc_maps(m, pid, text, len, capture, ctx);
	free(text);

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		char tpath[96];
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%d/comm", (int)pid, tid);
		if (read_small(tpath, comm, sizeof(comm)) == 0)
			hs_model_comm(m, pid, tid, comm, false);
	}
	closedir(d);
	return 0;
}
