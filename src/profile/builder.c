/* Events to profile: the builder's life, samples, mappings and processes to the model and the
 * profile, the deferred naming of JIT code, and its periods. A sample's chain is made into
 * locations by builder-chains.c. */
#include "profile/builder-private.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "profile/filter.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf-lines.h"
#include "util/strbuf.h"

void hs_builder_init(struct hs_builder *b, const struct hs_builder_opts *opts)
{
	struct hs_symbolizer_opts so = {opts->kallsyms, opts->no_inline};

	so.kallsyms_running = opts->kallsyms_running;

	memset(b, 0, sizeof(*b));
	b->opts = *opts;
	b->p = hs_profile_new();
	hs_model_init(&b->model);
	b->model.symfs = opts->symfs;
	b->model.jit.opts.live = opts->live;
	b->model.jit.opts.timed = opts->jit_timed;
	b->model.jit.opts.tsc = opts->tsc;
	hs_symbolizer_init(&b->sym, &so);
	{
		struct hs_unwinder_opts uo = {opts->unwind == HS_UNWIND_AUTO, 0, 0, opts->live};
		hs_unwinder_init(&b->unwinder, &b->model, &uo);
	}
	hs_profile_add_type(b->p, "samples", "count");
	b->off_cpu_ev = UINT32_MAX;
	{
		struct hs_loc_cache_entry e0 = {0};
		hs_vec_push(&b->loc_cache, e0); /* index 0 unused so that ids stay non-zero */
	}
}

uint32_t hs_builder_add_event(struct hs_builder *b, const char *name, bool time_based)
{
	uint32_t ix;

	/* the first CPU-time event is pprof's usual "cpu"; any other is named after itself */
	if (time_based && hs_profile_find_type(b->p, "cpu") < 0)
		ix = b->cpu_ix = hs_profile_add_type(b->p, "cpu", "nanoseconds");
	else
		ix = hs_profile_add_type(b->p, name, time_based ? "nanoseconds" : "count");
	if (ix == 1)
		b->p->period_type = b->p->types.v[1];
	while (b->p->type_events.n < ix)
		hs_vec_push(&b->p->type_events, 0);
	hs_vec_push(&b->p->type_events, hs_profile_intern_str(b->p, name));
	hs_vec_reserve(&b->values, b->p->types.n);
	return ix - 1;
}

uint32_t hs_builder_add_off_cpu(struct hs_builder *b, uint64_t min_ns)
{
	uint32_t ev = hs_builder_add_event(b, "off-cpu", true), wall_ix = 0;

	b->off_cpu_ev = ev;
	if (b->cpu_ix) {
		wall_ix = hs_profile_add_type(b->p, "wall", "nanoseconds");
		hs_vec_push(&b->p->type_events, 0);
		hs_vec_reserve(&b->values, b->p->types.n);
	}
	hs_off_cpu_init(&b->off_cpu, b->p, ev + 1, wall_ix, min_ns, b->opts.keep_time);
	return ev;
}

void hs_builder_release(struct hs_builder *b)
{
	if (!b)
		return;
	hs_off_cpu_release(&b->off_cpu);
	hs_symbolizer_release(&b->sym, &b->model);
	hs_unwinder_release(&b->unwinder);
	hs_builder_rt_release(b);
	hs_builder_seg_release(b);
	hs_builder_py_release(b);
	hs_builder_ip_forget_locations(b);
	hs_model_release(&b->model);
	hs_profile_free(b->p);
	hs_callchain_release(&b->cc);
	hs_vec_free(&b->locs);
	hs_vec_free(&b->values);
	hs_vec_free(&b->loc_cache);
	free(b->frame_memo);
	b->frame_memo = NULL;
	hs_builder_chain_memo_free(b);
	hs_index_release(&b->loc_ix);
	hs_u64map_release(&b->kernel_maps);
	hs_u64map_release(&b->demangled);
	hs_u64map_release(&b->exe_samples);
	hs_vec_free(&b->jit_pending);
	hs_vec_free(&b->user_pending);
}

struct hs_profile *hs_builder_take(struct hs_builder *b)
{
	struct hs_profile *p, *q;

	hs_builder_finish(b);
	p = b->p;
	if (b->stats.last_time > b->stats.first_time)
		p->duration_nanos = (int64_t)(b->stats.last_time - b->stats.first_time);
	b->p = NULL;
	/* Locations named late (their DWARF opened by a thread, JIT code named at the end) leave
	 * their placeholders' strings and functions behind, and which ones is up to the threads'
	 * timing. What is handed on is a copy with only what the samples refer to, in the order
	 * they first do, so the same input gives the same bytes on every run. */
	if (!hs_profile_filter(p, &(struct hs_filter){0}, &q)) {
		hs_profile_free(p);
		p = q;
	}
	return p;
}

/* ---- events ---- */

/* The thread's name, else ":TID" in buf. */
static const char *thread_name(struct hs_builder *b, int32_t tid, char buf[24])
{
	const char *comm = hs_model_comm_of(&b->model, tid);

	if (comm)
		return comm;
	snprintf(buf, 24, ":%d", (int)tid);
	return buf;
}

/* A sample value from a period the recording gives (any u64, in a file): held at INT64_MAX
 * rather than turned negative. */
static int64_t value_of(uint64_t v)
{
	return (int64_t)HS_MIN(v, (uint64_t)INT64_MAX);
}

/* The off-CPU counters as the builder's stats show them. */
static void off_cpu_stats(struct hs_builder *b)
{
	b->stats.off_cpu = b->off_cpu.stats;
}

void hs_builder_off_cpu_end(struct hs_builder *b, uint64_t end_time)
{
	if (end_time < b->stats.last_time)
		end_time = b->stats.last_time;
	hs_off_cpu_end(&b->off_cpu, end_time);
	off_cpu_stats(b);
}

/* One more sample of the program process pid runs. */
static void count_exe(struct hs_builder *b, int32_t pid)
{
	uint64_t ix, n = 0;
	const struct hs_process *p;

	if (!hs_u64map_get(&b->model.proc_ix, (uint32_t)pid, &ix))
		return;
	p = b->model.procs.v[ix];
	if (!p->exe)
		return;
	hs_u64map_get(&b->exe_samples, p->exe->id, &n);
	hs_u64map_put(&b->exe_samples, p->exe->id, n + 1);
}

/* The main binary: the program of the processes with the most samples, when code of it was
 * sampled. */
static void choose_main_mapping(struct hs_builder *b)
{
	const struct hs_dso *best = NULL;
	uint64_t most = 0, n;
	uint32_t file;

	for (size_t i = 0; i < b->model.dsos.n; i++) {
		const struct hs_dso *d = b->model.dsos.v[i];
		if (hs_u64map_get(&b->exe_samples, d->id, &n) && n > most) {
			most = n;
			best = d;
		}
	}
	if (!best || (file = hs_profile_find_str(b->p, best->path, strlen(best->path))) == UINT32_MAX)
		return;
	for (uint32_t i = 1; i < b->p->mappings.n; i++) {
		if (b->p->mappings.v[i].file == file && b->p->mappings.v[i].kind == HS_KIND_USER) {
			b->p->main_mapping = i;
			return;
		}
	}
}

static void capture_proc_map(void *ctx, int32_t pid, struct hs_map *map);

static void on_sample(struct hs_builder *b, const struct hs_perf_sample *s, uint32_t evidx)
{
	int32_t pid = (int32_t)s->sid.pid, tid = (int32_t)s->sid.tid;
	bool off_cpu = evidx == b->off_cpu_ev, cpu = evidx + 1 == b->cpu_ix;
	uint64_t period = s->period ? s->period : 1, wall = period;
	char name[24];
	const char *comm;
	struct hs_chain_stack *cs;
	uint32_t stack;

	if (b->opts.exclude_pid && pid == b->opts.exclude_pid) {
		b->stats.own_samples++;
		return;
	}
	if (off_cpu && (!tid || tid == -1 || !s->sid.has_time))
		return; /* the idle task: its "blocked" time is everybody's CPU time */
	if (b->model.nstale || b->model.unknown_stale)
		hs_model_resync(&b->model, pid, tid, capture_proc_map, b); /* if it is stale */
	b->chain = NULL;
	if (!hs_builder_sample_locs(b, s, pid, b->opts.strip_tracing || off_cpu))
		return;
	if (hs_builder_rt_merge(b, s, pid))
		b->chain = NULL; /* its locations are not the chain's */
	if (off_cpu) {
		hs_off_cpu_out(&b->off_cpu, pid, tid, s->sid.time, thread_name(b, tid, name), b->locs.v, b->locs.n);
		return;
	}
	if (b->off_cpu_ev != UINT32_MAX && s->sid.has_time)
		wall = hs_off_cpu_running(&b->off_cpu, tid, s->sid.time, period, cpu);
	cs = b->chain ? hs_builder_chain_stack(b->chain, b->chain_leaf) : NULL;
	if (cs) {
		stack = cs->stack;
	} else {
		stack = hs_profile_stack(b->p, b->locs.v, (uint32_t)b->locs.n);
		/* not the stand-in of stacks over the cap: each of those is counted */
		if (b->chain && (!b->p->stacks_over_cap || stack != b->p->over_cap_stack))
			cs = hs_builder_chain_stack_put(b->chain, b->chain_leaf, stack);
	}
	hs_vec_reserve(&b->values, b->p->types.n);
	memset(b->values.v, 0, b->p->types.n * sizeof(*b->values.v));
	b->values.v[0] = 1;
	if (1 + (size_t)evidx < b->p->types.n)
		b->values.v[1 + evidx] = value_of(period);
	if (b->off_cpu.wall_ix && cpu)
		b->values.v[b->off_cpu.wall_ix] = value_of(wall);
	comm = thread_name(b, tid, name);
	/* the stack's sample in this thread, by the same name, as the last time (samples with
	 * their time are each their own) */
	if (cs && cs->sample != UINT32_MAX && cs->tid == tid && !strcmp(hs_profile_str(b->p, cs->comm), comm)) {
		hs_profile_add_values(b->p, cs->sample, b->values.v);
	} else {
		uint32_t c = hs_profile_intern_str(b->p, comm);
		uint32_t sample = hs_profile_add_sample(b->p, stack, c, pid, tid, b->opts.keep_time ? s->sid.time : 0,
							b->values.v);
		if (cs && !b->opts.keep_time)
			*cs = (struct hs_chain_stack){cs->leaf, cs->stack, sample, c, tid};
	}
	b->stats.samples++;
	count_exe(b, pid);
}

/* jit-PID.dump, the name perf (and every runtime writing jitdump) gives the file. */
static bool is_jitdump_marker(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return false;
	n = strspn(base + 4, "0123456789");
	return n > 0 && !strcmp(base + 4 + n, ".dump");
}

static void on_mmap(struct hs_builder *b, const struct hs_perf_mmap *m)
{
	struct hs_dso_ident id = {0};
	struct hs_dso *dso;
	struct hs_map *map;
	uint8_t bid[20];
	size_t bid_size;

	if (m->pid == UINT32_MAX || m->data || !m->filename)
		return; /* the kernel's own maps, and data mappings, hold no user code */
	if (m->is_mmap2 && !(m->prot & PROT_EXEC))
		return;
	if (is_jitdump_marker(m->filename)) {
		/* a runtime's jitdump file, mapped as a marker for profilers: not code */
		int fd = b->opts.live && b->opts.capture
				 ? b->opts.capture(b->opts.capture_ctx, (int32_t)m->pid, m->start, m->start + m->len)
				 : -1;
		hs_jit_add_jitdump(&b->model.jit, (int32_t)m->pid, fd, m->filename);
		hs_model_process(&b->model, (int32_t)m->pid); /* its exit forgets its files */
		return;
	}
	id.path = m->filename;
	if (m->build_id_size) {
		id.build_id = m->build_id;
		id.build_id_size = m->build_id_size;
	} else if (b->opts.build_id && (bid_size = b->opts.build_id(b->opts.build_id_ctx, m->filename, bid))) {
		/* the recording says which file it was: a file changed since is noticed */
		id.build_id = bid;
		id.build_id_size = (uint8_t)bid_size;
	} else {
		id.maj = m->maj;
		id.min = m->min;
		id.ino = m->ino;
		id.ino_generation = m->ino_generation;
	}
	dso = hs_model_dso(&b->model, &id);
	if (!dso->ino_generation && dso->ino == m->ino)
		dso->ino_generation = m->ino_generation; /* made from /proc/PID/maps, which has none */
	map = hs_model_mmap(&b->model, (int32_t)m->pid, m->start, m->len, m->pgoff, m->prot ? m->prot : PROT_EXEC, dso);
	if (map && dso->kind == HS_DSO_FILE && dso->fd < 0 && !dso->sym && b->opts.capture)
		dso->fd = b->opts.capture(b->opts.capture_ctx, (int32_t)m->pid, map->start, map->end);
	if (map && dso->kind == HS_DSO_FILE && b->opts.prefetch_dwarf && id.build_id == bid)
		hs_symbolizer_prefetch_dwarf(&b->sym, dso);
}

void hs_builder_event(struct hs_builder *b, const struct hs_perf_event *ev)
{
	hs_builder_event_of(b, ev, 0);
}

void hs_builder_event_of(struct hs_builder *b, const struct hs_perf_event *ev, uint32_t evidx)
{
	if (ev->sid.has_time) {
		b->model.now = ev->sid.time;
		if (!b->stats.first_time)
			b->stats.first_time = ev->sid.time;
		if (ev->sid.time > b->stats.last_time)
			b->stats.last_time = ev->sid.time;
	}
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(b, &ev->sample, evidx);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(b, &ev->mmap);
		break;
	case PERF_RECORD_COMM:
		if (ev->comm.comm)
			hs_model_comm(&b->model, (int32_t)ev->comm.pid, (int32_t)ev->comm.tid, ev->comm.comm, ev->comm.exec);
		break;
	case PERF_RECORD_FORK:
		hs_model_fork(&b->model, (int32_t)ev->task.pid, (int32_t)ev->task.ppid, (int32_t)ev->task.tid,
			      (int32_t)ev->task.ptid);
		if (b->off_cpu_ev != UINT32_MAX)
			hs_off_cpu_fork(&b->off_cpu, (int32_t)ev->task.tid);
		break;
	case PERF_RECORD_EXIT:
		hs_model_exit(&b->model, (int32_t)ev->task.pid, (int32_t)ev->task.tid);
		if (b->off_cpu_ev != UINT32_MAX)
			hs_off_cpu_exit(&b->off_cpu, (int32_t)ev->task.tid, ev->task.time);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (b->off_cpu_ev != UINT32_MAX)
			hs_off_cpu_switch(&b->off_cpu, ev);
		break;
	case HS_RECORD_RT_STACK:
		hs_builder_rt_stack(b, ev);
		break;
	case HS_RECORD_RESYNC:
		if (ev->sid.pid == UINT32_MAX)
			hs_model_stale_all(&b->model);
		else
			hs_model_stale(&b->model, (int32_t)ev->sid.pid);
		break;
	case PERF_RECORD_LOST:
		b->stats.lost_records += ev->lost.lost;
		hs_off_cpu_lost(&b->off_cpu);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		b->stats.lost += ev->lost.lost;
		hs_off_cpu_lost(&b->off_cpu);
		break;
	default:
		b->stats.unknown_records++;
		break;
	}
	if (b->off_cpu_ev != UINT32_MAX)
		off_cpu_stats(b);
}

static void capture_proc_map(void *ctx, int32_t pid, struct hs_map *map)
{
	struct hs_builder *b = ctx;

	if (map->dso->kind == HS_DSO_FILE && map->dso->fd < 0 && !map->dso->sym && b->opts.capture)
		map->dso->fd = b->opts.capture(b->opts.capture_ctx, pid, map->start, map->end);
}

int hs_builder_add_proc(struct hs_builder *b, int32_t pid)
{
	int rc = hs_model_from_proc(&b->model, pid, capture_proc_map, b);
	struct hs_process *p;

	if (rc)
		return rc;
	/* a runtime already writing jitdump when the recording started: its marker mapping */
	p = hs_model_process(&b->model, pid);
	for (size_t i = 0; i < p->maps.n; i++) {
		struct hs_map *m = &p->maps.v[i];
		int fd = -1;
		if (m->dso->kind != HS_DSO_FILE || !is_jitdump_marker(m->dso->path))
			continue;
		if (m->dso->fd >= 0)
			fd = fcntl(m->dso->fd, F_DUPFD_CLOEXEC, 0);
		else if (b->opts.live && b->opts.capture)
			fd = b->opts.capture(b->opts.capture_ctx, pid, m->start, m->end);
		hs_jit_add_jitdump(&b->model.jit, pid, fd, m->dso->path);
	}
	return 0;
}

/* ---- deferred JIT naming ---- */

void hs_builder_jit_pids(const struct hs_builder *b, struct hs_pid_list *pids)
{
	struct hs_u64map seen = {0};
	uint64_t v;

	for (size_t i = 0; i < b->jit_pending.n; i++) {
		int32_t pid = b->jit_pending.v[i].pid;
		if (hs_u64map_get(&seen, (uint32_t)pid, &v))
			continue;
		hs_u64map_put(&seen, (uint32_t)pid, 1);
		hs_vec_push(pids, pid);
	}
	hs_u64map_release(&seen);
}

/* Frames whose file's DWARF was not open yet at their first sample: named now, the location
 * keeping its id as JIT frames do below. */
static void name_user_pending(struct hs_builder *b)
{
	for (size_t i = 0; i < b->user_pending.n; i++) {
		const struct hs_user_pending *pd = &b->user_pending.v[i];
		struct hs_sym_frame frames[HS_DWARF_MAX_INLINE];
		struct hs_location *l;
		uint64_t sym_off = 0;
		int nf = hs_symbolize_user_frames(&b->sym, pd->dso, pd->file_offset, frames, HS_DWARF_MAX_INLINE, &sym_off);
		uint32_t line0 = (uint32_t)b->p->lines.n;

		if (nf <= 0) {
			l = &b->p->locations.v[pd->loc];
			b->p->lines.v[l->line0].line = 0; /* the placeholder, as hs_builder_named_location() makes it */
			continue;
		}
		for (int k = 0; k < nf; k++) {
			struct hs_line ln = {hs_builder_symbol_function(b, frames[k].name, frames[k].file), frames[k].line};
			hs_vec_push(&b->p->lines, ln);
		}
		l = &b->p->locations.v[pd->loc];
		l->line0 = line0;
		l->nlines = (uint32_t)nf;
		l->sym_off = sym_off + pd->ret;
	}
	b->user_pending.n = 0;
}

/* Names the JIT code left unnamed at its samples from the jitdump records and perf maps read
 * so far; what is named leaves jit_pending. Locations keep their ids: only their lines change. */
static void name_jit_pending(struct hs_builder *b)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->jit_pending.n; i++) {
		const struct hs_jit_pending *pd = &b->jit_pending.v[i];
		struct hs_location *l;
		struct hs_jit_sym js;
		uint32_t nm, file;
		struct hs_line ln;

		if (!hs_symbolize_jit(&b->sym, &b->model, pd->pid, pd->addr, pd->time, true, &js)) {
			b->jit_pending.v[kept++] = *pd;
			continue;
		}
		nm = hs_profile_intern_str(b->p, js.name);
		file = js.file ? hs_profile_intern_str(b->p, js.file) : 0;
		ln.function = hs_profile_function(b->p, nm, nm, file, 0);
		ln.line = js.line;
		/* the location keeps its id (stacks refer to it); it is found by its new lines no
		 * more, which nothing needs: its address's cache entry still leads to it */
		l = &b->p->locations.v[pd->loc];
		l->line0 = (uint32_t)b->p->lines.n;
		l->nlines = 1;
		l->sym_off = js.offset + (l->address - pd->addr);
		hs_vec_push(&b->p->lines, ln);
	}
	b->jit_pending.n = kept;
}

void hs_builder_finish(struct hs_builder *b)
{
	struct hs_jit *j = &b->model.jit;
	struct hs_pid_list pids = {0};

	if (b->finished || !b->p)
		return;
	b->finished = true;
	choose_main_mapping(b);
	name_user_pending(b);
	if (!b->jit_pending.n) {
		hs_jit_end(j);
		return;
	}
	hs_jit_read_all(j, -1);
	hs_builder_jit_pids(b, &pids);
	for (size_t i = 0; i < pids.n; i++)
		hs_jit_perfmap_read(j, pids.v[i], b->model.now, 0, true);
	free(pids.v);
	name_jit_pending(b);
	hs_jit_end(j);
}

struct hs_profile *hs_builder_profile_now(struct hs_builder *b)
{
	if (b->p && !b->finished) {
		choose_main_mapping(b);
		name_user_pending(b);
		name_jit_pending(b);
	}
	return b->p;
}

struct hs_profile *hs_builder_copy(struct hs_builder *b, struct hs_builder_mark *mark, bool advance)
{
	struct hs_filter f = {0};
	struct hs_profile *q;

	if (!hs_builder_profile_now(b))
		return NULL;
	f.since = mark->values.v;
	f.nsince = mark->values.n;
	if (hs_profile_filter(b->p, &f, &q))
		return NULL;
	if (advance)
		hs_builder_mark_now(b, mark);
	return q;
}

void hs_builder_mark_now(const struct hs_builder *b, struct hs_builder_mark *mark)
{
	mark->values.n = 0;
	if (!b->p)
		return;
	hs_vec_reserve(&mark->values, b->p->values.n);
	if (b->p->values.n)
		memcpy(mark->values.v, b->p->values.v, b->p->values.n * sizeof(*b->p->values.v));
	mark->values.n = b->p->values.n;
}

/* The files no process maps now: their symbols, DWARF and unwinding tables, and the dsos. A
 * machine's processes come and go with files of their own (builds, tests, deployments): what a
 * recording of months holds stays that of the files mapped. */
static void forget_files(struct hs_builder *b)
{
	uint32_t *renumber = hs_model_unmapped_dsos(&b->model);

	if (renumber)
		hs_symbolizer_forget(&b->sym, &b->model, renumber);
	hs_unwinder_forget(&b->unwinder, renumber);
	hs_model_drop_dsos(&b->model, renumber);
	free(renumber);
	hs_builder_drop_pages(b);
}

void hs_builder_drop_pages(struct hs_builder *b)
{
	hs_symbolizer_drop_pages(&b->sym);
	hs_unwinder_drop_pages(&b->unwinder);
}

bool hs_builder_rebase(struct hs_builder *b)
{
	struct hs_profile *old = b->p, *p;
	struct hs_u64map gone = {0};

	if (!old || b->finished || b->off_cpu_ev != UINT32_MAX)
		return false;
	p = hs_profile_new();
	for (size_t i = 0; i < old->types.n; i++)
		hs_profile_add_type(p, hs_profile_str(old, old->types.v[i].type), hs_profile_str(old, old->types.v[i].unit));
	for (size_t i = 0; i < old->type_events.n; i++)
		hs_vec_push(&p->type_events, old->type_events.v[i] ? hs_profile_intern_str(p, hs_profile_str(old, old->type_events.v[i])) : 0);
	p->period_type.type = hs_profile_intern_str(p, hs_profile_str(old, old->period_type.type));
	p->period_type.unit = hs_profile_intern_str(p, hs_profile_str(old, old->period_type.unit));
	p->period = old->period;
	p->max_stacks = old->max_stacks;
	p->max_frames = old->max_frames;
	hs_profile_free(old);
	b->p = p;
	/* what held the old profile's ids */
	b->loc_cache.n = 1;
	hs_index_release(&b->loc_ix);
	free(b->frame_memo);
	b->frame_memo = NULL;
	hs_builder_chain_memo_free(b);
	b->chain = NULL;
	hs_u64map_release(&b->kernel_maps);
	hs_u64map_release(&b->demangled);
	hs_u64map_release(&b->exe_samples);
	b->jit_pending.n = 0;
	b->user_pending.n = 0;
	hs_builder_py_forget_locations(b);
	hs_builder_ip_forget_locations(b);
	hs_builder_seg_forget_locations(b);
	/* the processes that exited, and what is kept of them elsewhere */
	hs_model_forget_exited(&b->model, &gone);
	hs_jit_forget(&b->model.jit, &gone);
	hs_rt_names_forget(b->opts.rt_names, &gone);
	hs_u64map_release(&gone);
	hs_builder_rt_forget_threads(b);
	forget_files(b);
	for (size_t i = 0; i < b->model.procs.n; i++)
		for (size_t k = 0; k < b->model.procs.v[i]->maps.n; k++)
			b->model.procs.v[i]->maps.v[k].profile_mapping = 0;
	return true;
}

void hs_builder_mark_release(struct hs_builder_mark *mark)
{
	hs_vec_free(&mark->values);
}

void hs_builder_summary(const struct hs_builder *b, struct hs_builder_summary *ret)
{
	const struct hs_symbolizer_stats *sy = &b->sym.stats;
	const struct hs_unwinder_stats *un = &b->unwinder.stats;
	const struct hs_jit_stats *jt = &b->model.jit.stats;

	memset(ret, 0, sizeof(*ret));
	ret->stats = b->stats;
	ret->files_loaded = sy->files_loaded;
	ret->files_unreadable = sy->files_unreadable;
	ret->dwarf_restarts = sy->dwarf_restarts;
	ret->files_mismatched = sy->files_mismatched;
	ret->frames = un->frames;
	ret->cfi_steps = un->cfi_steps;
	ret->fp_steps = un->fp_steps;
	ret->tables_built = un->tables_built;
	ret->tables_cached = un->tables_cached;
	ret->fp_own_records = un->fp_own_records;
	ret->fp_outside_stack = un->fp_outside_stack;
	ret->fp_not_code = un->fp_not_code;
	ret->fp_not_after_call = un->fp_not_after_call;
	ret->jit_files = jt->files;
	ret->jit_code_loads = jt->code_loads;
	ret->jit_code_moves = jt->code_moves;
	ret->jit_tables = un->jit_tables;
	ret->jit_perf_maps = jt->perf_maps;
	ret->jit_perf_map_entries = jt->perf_map_entries;
	ret->jit_named_jitdump = sy->jit_jitdump;
	ret->jit_named_perf_map = sy->jit_perf_map;
	ret->jit_unnamed = sy->jit_unnamed;
	ret->jit_warnings = b->model.jit.warnings.v;
	ret->jit_nwarnings = b->model.jit.warnings.n;
}
