/* The runtimes' side of a live recording: the frame readers' dispatcher attached to the sampling
 * events, each process of a runtime found (at attach, at the mmap of a file the runtime can be
 * in) and described to that runtime's reader, loaded for its first one, and what the readers
 * write put in the record stream, time-ordered with the samples it belongs to (as
 * HS_RECORD_RT_STACK records). */
#include "session-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "record/reader.h"

/* A process that mapped a file a runtime can be in: looked at at once, and again every few
 * milliseconds for a while (the runtime's look_ms) if the runtime is not there yet (the dynamic
 * loader maps the data the version and layout are read from after the code; a shared libpython
 * or libjvm comes after the executable). */
struct soon {
	int32_t pid;
	unsigned id; /* the runtime's */
	unsigned tries;
	uint64_t due;
};
#define SOON_RETRY_MS 5

/* One runtime of the recording. */
struct rt_state {
	const struct hs_runtime *rt;
	void *names;          /* borrowed: o.rt_names's */
	bool loaded;          /* its reader (atomic; set once, under lock) */
	bool failed;          /* it could not be loaded (why): no process is looked at again */
	char why[160];        /* what could not be done, for a person */
	char line[200];       /* hs_record_runtime_reader()'s */
	struct hs_u64map pids; /* pid -> 1 reading its frames, 2 another version (said once), 3 no
	                        * runtime found in the time it was looked at, 0 gone */
	size_t forgotten;      /* of them, 0 */
};

/* Loading a reader (its verifier run, its maps) costs milliseconds of CPU, a tenth of a
 * microsecond per sample of a 10-second recording: it is loaded, under lock, by whichever
 * thread finds the first process of its runtime, never in a recording that has none. */
struct hs_record_rt {
	struct hs_rt_reader *rd; /* the dispatcher; NULL when it could not be made (open_err) */
	int open_err;
	int epfd; /* where the readers' rings are watched, with tag */
	uint64_t tag;
	bool watched;
	pthread_mutex_t lock;
	struct rt_state s[HS_RT_SLOTS]; /* by id; rt NULL: not read */
	HS_VEC(char *) notes;           /* lines for a person, each once (under lock) */
	size_t said;                    /* of them, returned by hs_record_runtime_note() */
	HS_VEC(struct soon) soon;       /* reader thread only */
};

static void note(struct hs_record_rt *rr, const char *line)
{
	for (size_t i = 0; i < rr->notes.n; i++)
		if (!strcmp(rr->notes.v[i], line))
			return;
	hs_vec_push(&rr->notes, hs_xstrdup(line));
}

static bool loaded(const struct rt_state *st)
{
	return __atomic_load_n(&st->loaded, __ATOMIC_ACQUIRE);
}

static bool failed(const struct rt_state *st)
{
	return __atomic_load_n(&st->failed, __ATOMIC_RELAXED);
}

void hs_record_rt_open(struct hs_record *r)
{
	struct hs_record_rt *rr;
	bool any = false;

	for (unsigned id = 1; r->o.rt_names && id < HS_RT_SLOTS; id++)
		any |= r->o.rt_names->store[id] != NULL;
	if (!any)
		return;
	rr = hs_xcalloc(1, sizeof(*rr));
	pthread_mutex_init(&rr->lock, NULL);
	rr->epfd = -1;
	for (unsigned id = 1; id < HS_RT_SLOTS; id++) {
		if (!r->o.rt_names->store[id])
			continue;
		rr->s[id].rt = hs_runtime(id);
		rr->s[id].names = r->o.rt_names->store[id];
	}
	r->rt = rr;
	/* what cannot be done is said when a runtime's process is found, never in a recording of none */
	rr->open_err = hs_rt_reader_open(&rr->rd);
}

/* Under rr->lock, for the first process of st's runtime found: its reader loaded and the
 * readers' rings watched, or why not said, once. */
static void load(struct hs_record_rt *rr, struct rt_state *st)
{
	struct epoll_event ee = {EPOLLIN, {.u64 = rr->tag}};
	char line[400];

	if (rr->rd && hs_rt_reader_load(rr->rd, st->rt, st->why, sizeof(st->why)) == 0) {
		if (rr->epfd >= 0 && !rr->watched && hs_rt_reader_fd(rr->rd) >= 0)
			rr->watched = !epoll_ctl(rr->epfd, EPOLL_CTL_ADD, hs_rt_reader_fd(rr->rd), &ee);
		__atomic_store_n(&st->loaded, true, __ATOMIC_RELEASE);
		return;
	}
	if (!rr->rd) {
		if (rr->open_err == -EPERM)
			snprintf(st->why, sizeof(st->why), "reading %s frames needs root, or CAP_BPF and CAP_PERFMON",
				 st->rt->name);
		else
			snprintf(st->why, sizeof(st->why), "the kernel refused the %s frame reader: %s", st->rt->name,
				 strerror(-rr->open_err));
	}
	if (st->rt->fallback)
		snprintf(line, sizeof(line), "%s: %s code shows as %s (%s)", st->why, st->rt->name, st->rt->shows,
			 st->rt->fallback);
	else
		snprintf(line, sizeof(line), "%s: %s code shows as %s", st->why, st->rt->name, st->rt->shows);
	note(rr, line);
	__atomic_store_n(&st->failed, true, __ATOMIC_RELAXED);
}

void hs_record_rt_close(struct hs_record *r)
{
	struct hs_record_rt *rr = r->rt;

	if (!rr)
		return;
	hs_rt_reader_close(rr->rd);
	for (size_t i = 0; i < rr->notes.n; i++)
		free(rr->notes.v[i]);
	hs_vec_free(&rr->notes);
	hs_vec_free(&rr->soon);
	for (unsigned id = 1; id < HS_RT_SLOTS; id++)
		hs_u64map_release(&rr->s[id].pids);
	pthread_mutex_destroy(&rr->lock);
	free(rr);
	r->rt = NULL;
}

void hs_record_rt_watch(struct hs_record *r, int epfd, uint64_t tag)
{
	if (!r->rt)
		return;
	pthread_mutex_lock(&r->rt->lock);
	r->rt->epfd = epfd;
	r->rt->tag = tag;
	pthread_mutex_unlock(&r->rt->lock);
}

void hs_record_rt_attach(struct hs_record *r, int fd)
{
	if (r->rt && r->rt->rd)
		hs_rt_reader_attach(r->rt->rd, fd);
}

/* Looks at pid for st's runtime: true when that settles it (a process whose frames are read from
 * now on, one that cannot be, or a pid looked at before), false when no runtime is there (yet).
 * With last, a runtime that cannot be read is said to be so; else it is tried again later. */
static bool probe(struct hs_record_rt *rr, struct rt_state *st, int32_t pid, bool last)
{
	char why[160]; /* what could not be done, for a person */
	uint64_t state;
	enum hs_rt_found f;
	void *proc = NULL;
	bool settled = true;

	pthread_mutex_lock(&rr->lock);
	if (st->failed || (hs_u64map_get(&st->pids, (uint64_t)pid, &state) && state)) {
		pthread_mutex_unlock(&rr->lock);
		return true;
	}
	f = st->rt->find(pid, &proc, why, sizeof(why));
	if (f == HS_RT_SUPPORTED) {
		if (!st->loaded)
			load(rr, st);
		if (st->loaded) {
			st->rt->names_add(st->names, pid, proc);
			if (hs_rt_reader_add(rr->rd, st->rt, (uint32_t)pid, proc) == 0)
				hs_u64map_put(&st->pids, (uint64_t)pid, 1);
		}
		st->rt->proc_free(proc);
	} else if (f == HS_RT_UNSUPPORTED && (last || !strstr(why, "cannot read"))) {
		char line[400];
		snprintf(line, sizeof(line), "%s (%s frames are read for %s): its code shows as %s", why, st->rt->name,
			 st->rt->versions, st->rt->shows);
		note(rr, line);
		hs_u64map_put(&st->pids, (uint64_t)pid, 2);
	} else {
		settled = false;
	}
	pthread_mutex_unlock(&rr->lock);
	return settled;
}

void hs_record_rt_probe(struct hs_record *r, int32_t pid)
{
	for (unsigned id = 1; r->rt && id < HS_RT_SLOTS; id++)
		if (r->rt->s[id].rt && !failed(&r->rt->s[id]))
			probe(r->rt, &r->rt->s[id], pid, true);
}

/* On the reader thread: the processes due to be looked at. */
static void probe_soon(struct hs_record_rt *rr)
{
	uint64_t now = hs_now_ns();
	size_t k = 0;

	for (size_t i = 0; i < rr->soon.n; i++) {
		struct soon *s = &rr->soon.v[i];
		struct rt_state *st = &rr->s[s->id];
		unsigned tries = HS_MAX(1, st->rt->look_ms / SOON_RETRY_MS);
		if (s->due > now || !probe(rr, st, s->pid, s->tries + 1 >= tries)) {
			if (s->due <= now) {
				s->tries++;
				s->due = now + SOON_RETRY_MS * 1000000ULL;
			}
			if (s->tries < tries) {
				rr->soon.v[k++] = *s;
			} else {
				/* no runtime came: not looked at again until it runs another program */
				pthread_mutex_lock(&rr->lock);
				hs_u64map_put(&st->pids, (uint64_t)s->pid, 3);
				pthread_mutex_unlock(&rr->lock);
			}
		}
	}
	rr->soon.n = k;
}

/* A process gone, or running another program: under the lock, so that a reader being loaded
 * on the other thread meanwhile is told too. */
static void forget(struct hs_record_rt *rr, struct rt_state *st, uint32_t pid)
{
	uint64_t state = 0;

	pthread_mutex_lock(&rr->lock);
	if (hs_u64map_get(&st->pids, pid, &state) && state) {
		hs_u64map_put(&st->pids, pid, 0);
		/* many short-lived processes: the map is made again of those still there */
		if (++st->forgotten > 1024 && st->forgotten > st->pids.n / 2) {
			struct hs_u64map kept = {0};
			for (size_t i = 0; i < st->pids.cap; i++)
				if (hs_u64map_used(&st->pids, i) && st->pids.vals[i])
					hs_u64map_put(&kept, st->pids.keys[i], st->pids.vals[i]);
			hs_u64map_release(&st->pids);
			st->pids = kept;
			st->forgotten = 0;
		}
	}
	if (st->loaded && state == 1) /* its frames were read */
		hs_rt_reader_remove(rr->rd, st->rt, pid);
	pthread_mutex_unlock(&rr->lock);
}

/* Process pid to be looked at for st's runtime soon, once per process and program: one that
 * maps a runtime in a loop is looked at as one that maps it once (each look reads its maps and
 * its memory, look_ms / 5 times at most). */
static void look_soon(struct hs_record_rt *rr, struct rt_state *st, int32_t pid)
{
	struct soon s = {pid, st->rt->id, 0, hs_now_ns()};
	uint64_t state = 0;

	for (size_t i = 0; i < rr->soon.n; i++)
		if (rr->soon.v[i].pid == pid && rr->soon.v[i].id == s.id)
			return;
	pthread_mutex_lock(&rr->lock);
	hs_u64map_get(&st->pids, (uint64_t)pid, &state);
	pthread_mutex_unlock(&rr->lock);
	if (!state)
		hs_vec_push(&rr->soon, s);
}

/* A child process of its own (multiprocessing's workers): it has its parent's runtime, and no
 * mapping of it will be seen. */
static void look_at_child(struct hs_record_rt *rr, struct rt_state *st, const struct hs_perf_event *ev)
{
	struct soon s = {(int32_t)ev->task.pid, st->rt->id, 0, hs_now_ns()};
	uint64_t state = 0;

	pthread_mutex_lock(&rr->lock);
	hs_u64map_get(&st->pids, ev->task.ppid, &state);
	pthread_mutex_unlock(&rr->lock);
	for (size_t i = 0; i < rr->soon.n && !state; i++)
		state = rr->soon.v[i].pid == (int32_t)ev->task.ppid && rr->soon.v[i].id == s.id; /* to be looked at */
	if (state == 1)
		hs_vec_push(&rr->soon, s);
}

static void on_event(struct hs_record_rt *rr, struct rt_state *st, const struct hs_perf_event *ev)
{
	bool maps_runtime = ev->type == PERF_RECORD_MMAP2 && (ev->mmap.prot & PROT_EXEC) && ev->mmap.filename &&
			    st->rt->maybe(ev->mmap.filename);

	if (!rr->rd) {
		/* no frames can be read: a runtime mapped is enough to say so, without looking at
		 * its process on the thread that drains the rings */
		if (maps_runtime) {
			pthread_mutex_lock(&rr->lock);
			if (!st->failed)
				load(rr, st);
			pthread_mutex_unlock(&rr->lock);
		}
		return;
	}
	if (maps_runtime)
		look_soon(rr, st, (int32_t)ev->mmap.pid);
	else if (ev->type == PERF_RECORD_FORK && ev->task.pid == ev->task.tid && ev->task.pid != ev->task.ppid)
		look_at_child(rr, st, ev);
	else if (ev->type == PERF_RECORD_EXIT && ev->task.pid == ev->task.tid)
		forget(rr, st, ev->task.pid);
	else if (ev->type == PERF_RECORD_COMM && ev->comm.exec)
		forget(rr, st, ev->comm.pid); /* a new program in the process: looked at again */
}

void hs_record_rt_event(struct hs_record *r, const struct hs_perf_event *ev)
{
	for (unsigned id = 1; r->rt && id < HS_RT_SLOTS; id++)
		if (r->rt->s[id].rt && !failed(&r->rt->s[id]))
			on_event(r->rt, &r->rt->s[id], ev);
}

struct drain_ctx {
	struct hs_record *r;
	void (*push)(void *ctx, struct perf_event_header *rec, uint64_t time);
	void *push_ctx;
};

static void on_stack(void *ctx, unsigned id, const void *data, size_t size)
{
	struct drain_ctx *dc = ctx;
	struct rt_state *st = &dc->r->rt->s[id];
	const struct hs_rt_head *head = data;
	struct perf_event_header *h;

	if (!st->rt || !(size = st->rt->record_size(data, size)) || sizeof(*h) + size > UINT16_MAX)
		return;
	/* read what must be read now, while the process surely still has it */
	st->rt->names_prefetch(st->names, data);
	h = hs_xmalloc(sizeof(*h) + size);
	h->type = HS_RECORD_RT_STACK;
	h->misc = (uint16_t)id;
	h->size = (uint16_t)(sizeof(*h) + size);
	memcpy(h + 1, data, size);
	dc->push(dc->push_ctx, h, head->time - HS_RT_STACK_EARLY_NS);
}

int hs_record_rt_poll_ms(const struct hs_record *r)
{
	bool reading = false, possible = false;

	for (unsigned id = 1; r->rt && r->rt->rd && id < HS_RT_SLOTS; id++) {
		reading |= r->rt->s[id].rt && loaded(&r->rt->s[id]);
		possible |= r->rt->s[id].rt && !failed(&r->rt->s[id]);
	}
	if (!possible)
		return -1;
	if (r->rt->soon.n)
		return 2;
	/* a command starting (its runtime's mapping seen within 10 ms); later a new process waits
	 * for the reader's usual round, and a reader that reads something new wakes it */
	if ((reading || r->o.argv) && hs_now_ns() - r->start_ns < 1000000000ULL)
		return 10;
	return reading ? 50 : -1;
}

void hs_record_rt_drain(struct hs_record *r, void (*push)(void *ctx, struct perf_event_header *rec, uint64_t time),
			void *ctx)
{
	struct drain_ctx dc = {r, push, ctx};

	if (!r->rt)
		return;
	if (r->rt->rd)
		hs_rt_reader_drain(r->rt->rd, on_stack, &dc);
	if (r->rt->soon.n)
		probe_soon(r->rt);
}

const char *hs_record_runtime_note(const struct hs_record *r)
{
	const char *l = NULL;

	if (!r->rt)
		return NULL;
	pthread_mutex_lock(&r->rt->lock);
	if (r->rt->said < r->rt->notes.n)
		l = r->rt->notes.v[r->rt->said++];
	pthread_mutex_unlock(&r->rt->lock);
	return l;
}

static struct rt_state *state_of(const struct hs_record *r, unsigned id)
{
	return r->rt && id < HS_RT_SLOTS && r->rt->s[id].rt ? &r->rt->s[id] : NULL;
}

bool hs_record_runtime_active(const struct hs_record *r, unsigned id)
{
	struct rt_state *st = state_of(r, id);

	return st && loaded(st);
}

const char *hs_record_runtime_reader(const struct hs_record *r, unsigned id)
{
	struct rt_state *st = state_of(r, id);

	if (!st)
		return NULL;
	if (loaded(st))
		return "frame reader loaded";
	if (!failed(st)) {
		snprintf(st->line, sizeof(st->line), "frame reader not loaded: no %s process seen", st->rt->name);
		return st->line;
	}
	memcpy(st->line, "frame reader not loaded: ", 25);
	snprintf(st->line + 25, sizeof(st->line) - 25, "%s", st->why);
	return st->line;
}

bool hs_record_runtime_reads(const struct hs_record *r, unsigned id, int32_t pid)
{
	struct rt_state *st = state_of(r, id);
	uint64_t state = 0;

	if (!st)
		return false;
	pthread_mutex_lock(&r->rt->lock);
	hs_u64map_get(&st->pids, (uint32_t)pid, &state);
	pthread_mutex_unlock(&r->rt->lock);
	return state == 1;
}

uint64_t hs_record_runtime_dropped(const struct hs_record *r, unsigned id)
{
	struct rt_state *st = state_of(r, id);

	return st && loaded(st) ? hs_rt_reader_dropped(r->rt->rd, st->rt) : 0;
}
