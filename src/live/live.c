/* A live recording made into profiles: see live.h. */
#include "live/live.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <unistd.h>

#include "profile/off-cpu.h"
#include "push/labels.h"
#include "push/service.h"
#include "record/events.h"
#include "record/jvm.h"
#include "util/strbuf.h"

void hs_live_builder_opts(const struct hs_record *rec, const struct hs_callgraph_opts *cg, struct hs_builder_opts *bo)
{
	bo->unwind = cg->unwind == HS_CG_UNWIND_AUTO  ? HS_UNWIND_AUTO
		     : cg->unwind == HS_CG_UNWIND_CFI ? HS_UNWIND_DWARF
						      : HS_UNWIND_FP;
	bo->kernel = rec->o.kernel;
	bo->user = true;
	bo->lbr_repair = hs_callgraph_lbr_repair(cg, rec->o.event);
	bo->strip_tracing = hs_event_in_kernel_paths(rec->o.event);
	bo->exclude_pid = getpid();
	bo->max_stack = rec->o.max_stack;
	bo->capture = hs_record_capture;
	bo->capture_ctx = (void *)rec;
	bo->live = true;
	bo->jit_timed = hs_record_times_monotonic(rec);
	bo->tsc = rec->tsc;
}

static void say(struct hs_live *lv, const char *fmt, ...) HS_PRINTF(2, 3);
static void say(struct hs_live *lv, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lv->hooks.say(lv->hooks.ctx, false, msg);
}

static void on_event(void *ctx, const struct hs_perf_event *ev)
{
	struct hs_live *lv = ctx;
	uint32_t evidx = 0;

	if (lv->services_on) /* before the model moves on: a sample's process as it is then */
		hs_service_cache_event(&lv->services, ev);
	if (ev->type == PERF_RECORD_SAMPLE && lv->rec->o.off_cpu &&
	    hs_record_event_index(lv->rec, ev->sid.id) == HS_REC_EVENT_OFF_CPU)
		evidx = lv->off_cpu_ev;
	hs_builder_event_of(&lv->b, ev, evidx);
}

static void on_proc(void *ctx, int32_t pid)
{
	struct hs_live *lv = ctx;

	if (lv->services_on)
		hs_service_cache_proc(&lv->services, pid);
	hs_builder_add_proc(&lv->b, pid);
}

static void on_progress(void *ctx, const struct hs_record_progress *p)
{
	struct hs_live *lv = ctx;

	if (lv->hooks.progress)
		lv->hooks.progress(lv->hooks.ctx, lv->b.stats.samples, p);
}

/* Tells the asker which processes have samples in JIT code, and at how many addresses that
 * nothing names now (each looked at once, when it is new): a JVM among them is asked for its
 * perf map while it runs (a command's JVM has often exited by the end), and again as code that
 * its last map does not name is sampled. */
static void feed_jvms(struct hs_live *lv)
{
	struct hs_u64map *maps = &lv->jvm_maps;
	uint64_t v;

	if (!lv->b.jit_pending.n || !lv->o.jvm_perfmap)
		return;
	if (!lv->jvm && hs_jvm_asker_new(&lv->jvm, !lv->o.jvm_perfmap_late)) {
		lv->jvm = NULL;
		return;
	}
	/* a JVM writes its map anew each time: read from its start again, now */
	for (size_t i = 0; i < maps->cap; i++) {
		int32_t pid = (int32_t)maps->keys[i];
		unsigned w = hs_u64map_used(maps, i) ? hs_jvm_asker_written(lv->jvm, pid) : 0;
		if (w && w != maps->vals[i]) {
			maps->vals[i] = w;
			hs_jit_perfmap_rewritten(&lv->b.model.jit, pid);
			hs_jit_perfmap_read(&lv->b.model.jit, pid, lv->b.model.now, 0, false);
		}
	}
	/* the builder names and drops some at checkpoints: those past the end are left unlooked */
	lv->jvm_looked = HS_MIN(lv->jvm_looked, lv->b.jit_pending.n);
	for (; lv->jvm_looked < lv->b.jit_pending.n; lv->jvm_looked++) {
		const struct hs_jit_pending *pd = &lv->b.jit_pending.v[lv->jvm_looked];
		uint32_t pid = (uint32_t)pd->pid;
		struct hs_jit_sym js;
		if (!hs_u64map_get(maps, pid, &v))
			hs_u64map_put(maps, pid, 0);
		if (!hs_symbolize_jit(&lv->b.sym, &lv->b.model, pd->pid, pd->addr, pd->time, true, &js))
			hs_u64map_put(&lv->jvm_unnamed, pid, (hs_u64map_get(&lv->jvm_unnamed, pid, &v) ? v : 0) + 1);
	}
	for (size_t i = 0; i < maps->cap; i++) {
		int32_t pid = (int32_t)maps->keys[i];
		if (!hs_u64map_used(maps, i))
			continue;
		if (hs_record_runtime_reads(lv->rec, HS_RT_HOTSPOT, pid))
			hs_jvm_asker_leave(lv->jvm, pid); /* its Java frames are read at sample time */
		else
			hs_jvm_asker_seen(lv->jvm, pid, hs_u64map_get(&lv->jvm_unnamed, maps->keys[i], &v) ? v : 0);
	}
}

/* At the end, while the targets still run: a HotSpot JVM with frames in JIT code that nothing
 * named is asked for its perf map once more (the builder reads perf maps when the profile is
 * taken). A SIGINT or SIGTERM meanwhile ends the asking, not the run. */
static void on_ending(void *ctx)
{
	struct hs_live *lv = ctx;
	struct hs_pid_list pids = {0};
	size_t left = 0;
	int err;

	feed_jvms(lv);
	if (!lv->jvm)
		return;
	err = hs_jvm_asker_end(lv->jvm, lv->rec->cause == HS_CAUSE_SIGNAL, &left);
	feed_jvms(lv); /* the maps written at the end */
	hs_builder_jit_pids(&lv->b, &pids);
	for (size_t i = 0; i < pids.n; i++) {
		unsigned n = hs_jvm_asker_written(lv->jvm, pids.v[i]);
		char msg[96];
		if (!n)
			continue;
		snprintf(msg, sizeof(msg), "JVM %d wrote its perf map (%u time%s)", (int)pids.v[i], n,
			 n == 1 ? "" : "s");
		lv->hooks.say(lv->hooks.ctx, true, msg);
	}
	free(pids.v);
	if (err)
		say(lv, "%zu processes with unnamed JIT code not asked for their perf maps: %s", left,
		    err == -ETIMEDOUT ? "no time left" : "asked to stop");
}

/* After the naming at the end: each JVM whose JIT code stays unnamed in a share of its samples
 * (of those with a frame in it) that matters, said in one line with why and what to do. */
#define JVM_UNNAMED_SAY_PCT 1.0
#define JVM_UNNAMED_MAX_LINES 5

static void say_unnamed_jvms(struct hs_live *lv)
{
	const struct hs_profile *p = lv->b.p;
	struct hs_u64map locs = {0}, all = {0}, unnamed = {0};
	uint8_t *has = NULL;
	size_t said = 0, more = 0;
	uint64_t v;

	if (!lv->jvm || !lv->b.jit_pending.n || !p || !p->types.n)
		goto out;
	for (size_t i = 0; i < lv->b.jit_pending.n; i++)
		hs_u64map_put(&locs, lv->b.jit_pending.v[i].loc, 1);
	has = hs_xcalloc(p->stacks.n ? p->stacks.n : 1, 1);
	for (size_t i = 0; i < p->stacks.n; i++)
		for (uint32_t k = 0; k < p->stacks.v[i].nlocs && !has[i]; k++)
			has[i] = hs_u64map_get(&locs, p->stack_locs.v[p->stacks.v[i].loc0 + k], &v);
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *sm = &p->samples.v[i];
		int64_t val = p->values.v[i * p->types.n];
		if (sm->pid < 0 || val <= 0)
			continue;
		hs_u64map_put(&all, (uint32_t)sm->pid,
			      (hs_u64map_get(&all, (uint32_t)sm->pid, &v) ? v : 0) + (uint64_t)val);
		if (has[sm->stack])
			hs_u64map_put(&unnamed, (uint32_t)sm->pid,
				      (hs_u64map_get(&unnamed, (uint32_t)sm->pid, &v) ? v : 0) + (uint64_t)val);
	}
	for (size_t i = 0; i < unnamed.cap; i++) {
		struct hs_strbuf sb = {0};
		uint64_t total = 0;
		double share;
		if (!hs_u64map_used(&unnamed, i))
			continue;
		hs_u64map_get(&all, unnamed.keys[i], &total);
		share = 100.0 * (double)unnamed.vals[i] / (double)HS_MAX(total, 1);
		if (share < JVM_UNNAMED_SAY_PCT)
			continue;
		if (said == JVM_UNNAMED_MAX_LINES) {
			more += hs_jvm_asker_why(lv->jvm, (int32_t)unnamed.keys[i], share, &sb);
		} else if (hs_jvm_asker_why(lv->jvm, (int32_t)unnamed.keys[i], share, &sb)) {
			lv->hooks.say(lv->hooks.ctx, false, hs_strbuf_str(&sb));
			said++;
		}
		hs_strbuf_release(&sb);
	}
	if (more)
		say(lv, "and %zu more JVMs with unnamed Java methods", more);
out:
	free(has);
	hs_u64map_release(&locs);
	hs_u64map_release(&all);
	hs_u64map_release(&unnamed);
}

/* What the profile says of the recording: its command line, its event */
static void add_comments(struct hs_profile *p, int argc, char **argv, const struct hs_record_opts *o)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, "hotstack");
	for (int i = 0; i < argc; i++) /* the command after "--", where it was typed without */
		hs_strbuf_addf(&sb, " %s%s", argv + i == o->argv && strcmp(argv[i - 1], "--") ? "-- " : "", argv[i]);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, hs_strbuf_str(&sb)));
	hs_strbuf_reset(&sb);
	hs_event_describe(o->event, o->freq, o->period, &sb);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, hs_strbuf_str(&sb)));
	if (o->off_cpu)
		hs_vec_push(&p->comments, hs_profile_intern_str(p, HS_OFF_CPU_NOTE));
	hs_strbuf_release(&sb);
}

/* Writes the current period's profile to its files: with ended, its last write (the next
 * period begins); else a checkpoint of it so far. Returns 0 or -1. */
static int write_period(struct hs_live *lv, bool ended)
{
	uint64_t began = hs_now_ns();
	/* the period's end, and the next one's start: periods tile time */
	int64_t began_wall = hs_wall_ns();
	/* a period's end: the profile starts afresh, or where it cannot, the next copy starts at
	 * a mark */
	bool fresh = ended && hs_periodic_switching(&lv->pe) && !lv->b.finished && !lv->rec->o.off_cpu;
	/* a checkpoint of a profile that began with the recording: written as the builder has it
	 * (a copy costs as much as the writing), the labels set for it put back after */
	bool in_place = !ended && !lv->mark.values.n;
	struct hs_profile *p = in_place ? hs_builder_profile_now(&lv->b) : hs_builder_copy(&lv->b, &lv->mark, ended && !fresh);
	int64_t time_nanos, duration_nanos;
	size_t ncomments;
	int rc;

	if (!p)
		return -1;
	time_nanos = p->time_nanos;
	duration_nanos = p->duration_nanos;
	ncomments = p->comments.n;
	p->time_nanos = lv->pe.start_wall;
	p->duration_nanos = (int64_t)(began - lv->pe.start);
	add_comments(p, lv->o.argc, lv->o.argv, &lv->rec->o);
	/* pushed first: spooled, it is safe from a kill before the files are */
	if (ended && lv->push)
		hs_push_profile(lv->push, p, lv->pe.start_wall, began_wall);
	rc = lv->o.noutputs ? lv->hooks.write(lv->hooks.ctx, p, hs_periodic_names(&lv->pe), !ended) : 0;
	if (in_place) {
		p->time_nanos = time_nanos;
		p->duration_nanos = duration_nanos;
		p->comments.n = ncomments;
	} else {
		hs_profile_free(p);
	}
	if (fresh) {
		if (lv->view)
			hs_view_rebase(lv->view, &lv->b);
		hs_builder_rebase(&lv->b);
#ifdef __GLIBC__
		/* what the period freed, given back: a recording of months stays at its live size
		 * rather than its largest */
		malloc_trim(0);
#endif
	}
	if (hs_periodic_written(&lv->pe, began, began_wall, hs_now_ns(), ended))
		say(lv, "cannot remove the files past --switch-max-files");
	return rc;
}

/* What the pushing has to say, each said once */
static void say_push_notes(struct hs_live *lv)
{
	char *msg;

	while (lv->push && !hs_push_note(lv->push, &msg)) {
		lv->hooks.say(lv->hooks.ctx, false, msg);
		free(msg);
	}
}

/* More services in a period than it has series: said once */
static void say_series_note(struct hs_live *lv)
{
	if (!lv->services.folded || lv->folded_said)
		return;
	lv->folded_said = true;
	say(lv, "more than %d services in one period: %zu of them pushed as one series, '%s'", HS_SERVICE_MAX_SERIES,
	    lv->services.folded, HS_SERVICE_OTHER);
}

/* File pages resident at most (statm's "shared": our own code's, about 10 MiB, and those of
 * the files read in place: DWARF, symbol and unwinding tables, kallsyms): past it the latter
 * are given back at once rather than at the period's end. They cost no memory the kernel cannot
 * take back, but they count in the RSS an operator watches, and an agent's is to stay under
 * 64 MiB (docs/continuous.md). Looked at once a second; giving them back costs the minor faults
 * of the pages the next lookups read (a few thousand a second at most: milliseconds). */
#define FILE_PAGES_MAX ((uint64_t)16 << 20)

static void bound_file_pages(struct hs_live *lv, uint64_t now)
{
	unsigned long long size, resident, shared;
	FILE *f;

	if (now - lv->pages_checked < 1000000000ULL)
		return;
	lv->pages_checked = now;
	if (!(f = fopen("/proc/self/statm", "re")))
		return;
	if (fscanf(f, "%llu %llu %llu", &size, &resident, &shared) == 3 &&
	    shared * (uint64_t)sysconf(_SC_PAGESIZE) > FILE_PAGES_MAX)
		hs_builder_drop_pages(&lv->b);
	fclose(f);
}

static uint64_t on_tick(void *ctx, bool switch_asked)
{
	struct hs_live *lv = ctx;
	enum hs_periodic_due due = hs_periodic_due(&lv->pe, hs_now_ns(), switch_asked);
	uint64_t next, now;

	say_push_notes(lv);
	say_series_note(lv);
	if (due && write_period(lv, due == HS_DUE_PERIOD)) {
		if (due == HS_DUE_CHECKPOINT) {
			say(lv, "no more checkpoints: the outputs are written at the end only");
			lv->pe.o.checkpoints = false;
		} else {
			lv->write_failed = true;
		}
	}
	now = hs_now_ns();
	bound_file_pages(lv, now);
	if (now - lv->jvm_fed >= 250000000ULL) {
		lv->jvm_fed = now;
		feed_jvms(lv);
	}
	next = hs_periodic_next(&lv->pe, now);
	if (lv->view)
		next = HS_MIN(next, hs_view_tick(lv->view, &lv->b, now));
	if (lv->hooks.tick)
		next = HS_MIN(next, lv->hooks.tick(lv->hooks.ctx));
	return next;
}

void hs_live_stop(struct hs_live *lv)
{
	hs_record_stop(lv->rec);
}

int hs_live_push_label(struct hs_live_opts *o, const char *label)
{
	if (!hs_push_label_ok(label) || o->push.nlabels == HS_ARRAY_SIZE(o->labels))
		return -1;
	o->labels[o->push.nlabels++] = label;
	o->push.labels = o->labels;
	return 0;
}

int hs_live_push_relabel(struct hs_live_opts *o, const char *rename)
{
	if (!hs_relabel_ok(rename) || o->push.nrenames == HS_ARRAY_SIZE(o->renames))
		return -1;
	o->renames[o->push.nrenames++] = rename;
	o->push.renames = o->renames;
	return 0;
}

const char *hs_live_opts_settle(struct hs_live_opts *o, const char *const *outputs, size_t n)
{
	struct hs_periodic_opts *po = &o->periodic;

	if ((o->push.nlabels || o->push.nrenames || o->push.spool_dir) && !o->push.url)
		return "--push-label, --push-relabel and --push-spool go with --push URL";
	if (o->series_by_given && !o->push.url)
		return "--push-series-by goes with --push URL";
	if (o->push.url && !hs_periodic_opts_switching(po)) /* the store's usual 10 s profiles */
		hs_switch_output_parse("10s", po);
	if (po->max_files && !hs_periodic_opts_switching(po))
		return "--switch-max-files goes with --switch-output";
	/* checkpoints (and periods) replace files: never a pipe's or a device's output */
	po->checkpoints = n && hs_outputs_files(outputs, n);
	if (n && hs_periodic_opts_switching(po) && !po->checkpoints)
		return "--switch-output writes files: not standard output, a pipe or a device";
	return NULL;
}

/* The series of a recording that is not system-wide: its command's name, else its first
 * process's service */
static void series_of(struct hs_live *lv, const struct hs_record_opts *ro, char *buf, size_t cap)
{
	const char *slash;
	int32_t pid = ro->npids ? ro->pids[0] : ro->ntids ? ro->tids[0] : -1;

	if (ro->argv) {
		slash = strrchr(ro->argv[0], '/');
		hs_service_of(-1, lv->services.by, slash ? slash + 1 : ro->argv[0], buf, cap);
	} else if (pid > 0) {
		hs_service_cache_name(&lv->services, pid, "hotstack", buf, cap);
	} else {
		hs_service_of(-1, lv->services.by, "hotstack", buf, cap);
	}
}

/* What the recording knows of a process gone from /proc, for its service: its program (the
 * first file it mapped code from since its exec), its name */
static void proc_of(void *ctx, int32_t pid, struct hs_service_proc *ret)
{
	const struct hs_model *m = &((struct hs_live *)ctx)->b.model;
	const struct hs_dso *exe;
	uint64_t ix;

	ret->comm = hs_model_comm_of(m, pid);
	if (!hs_u64map_get(&m->proc_ix, (uint32_t)pid, &ix) || !(exe = m->procs.v[ix]->exe))
		return;
	ret->exe = exe->path;
	ret->exe_fd = exe->fd;
	ret->maj = exe->maj;
	ret->min = exe->min;
	ret->ino = exe->ino;
	ret->build_id = exe->build_id;
	ret->build_id_size = exe->build_id_size;
}

int hs_live_init(struct hs_live *lv, struct hs_record *rec, const struct hs_builder_opts *bo,
		 const struct hs_live_opts *o, const struct hs_live_hooks *hooks, struct hs_error *err)
{
	const struct hs_record_opts *ro = &rec->o;
	char service[128];
	int rc;

	memset(lv, 0, sizeof(*lv));
	if (o->push.url) {
		struct hs_push_opts po = o->push;
		po.by_service = ro->all_cpus;
		lv->services = (struct hs_service_cache){.by = o->series_by, .proc_of = proc_of, .ctx = lv};
		if (hs_record_times_monotonic(rec))
			hs_service_cache_clock(&lv->services);
		lv->services_on = po.by_service;
		po.services = &lv->services;
		series_of(lv, ro, service, sizeof(service));
		po.service = service;
		po.sample_rate = ro->freq;
		if ((rc = hs_push_start(&lv->push, &po, err))) {
			hs_service_cache_release(&lv->services);
			return rc;
		}
	}
	lv->rec = rec;
	lv->o = *o;
	lv->o.push.labels = lv->o.labels;
	lv->o.push.renames = lv->o.renames;
	lv->hooks = *hooks;
	lv->sink = (struct hs_record_sink){on_event, on_proc, on_progress, lv, on_ending, on_tick};
	hs_builder_init(&lv->b, bo);
	hs_builder_add_event(&lv->b, ro->event->name, ro->event->time_based);
	if (ro->off_cpu)
		lv->off_cpu_ev = hs_builder_add_off_cpu(&lv->b, o->off_cpu_min);
	lv->b.p->period = hs_event_sample_period(ro->event, ro->freq, ro->period);
	lv->b.p->time_nanos = hs_wall_ns();
	hs_periodic_init(&lv->pe, &o->periodic, o->outputs, o->noutputs, hs_now_ns(), lv->b.p->time_nanos);
	return 0;
}

int hs_live_run(struct hs_live *lv, struct hs_error *err)
{
	return hs_record_run(lv->rec, &lv->sink, err);
}

struct hs_profile *hs_live_end(struct hs_live *lv, bool *failed)
{
	struct hs_profile *p;

	*failed = lv->write_failed;
	if (lv->rec->o.off_cpu)
		hs_builder_off_cpu_end(&lv->b, lv->rec->stop_ns);
	hs_builder_finish(&lv->b);
	say_unnamed_jvms(lv);
	if (lv->view)
		hs_view_end(lv->view, &lv->b);
	if (hs_periodic_switching(&lv->pe) && write_period(lv, true))
		*failed = true;
	if (lv->push) {
		say_push_notes(lv);
		say_series_note(lv);
		hs_push_finish(lv->push, &lv->push_stats);
		lv->push = NULL;
	}
	p = hs_builder_take(&lv->b);
	add_comments(p, lv->o.argc, lv->o.argv, &lv->rec->o);
	return p;
}

void hs_live_release(struct hs_live *lv)
{
	if (lv->push)
		hs_push_finish(lv->push, &lv->push_stats);
	hs_jvm_asker_free(lv->jvm);
	hs_u64map_release(&lv->jvm_maps);
	hs_u64map_release(&lv->jvm_unnamed);
	hs_service_cache_release(&lv->services);
	hs_periodic_release(&lv->pe);
	hs_builder_mark_release(&lv->mark);
	hs_builder_release(&lv->b);
}
