/* The Python side of a live recording: the frame reader's dispatcher attached to the sampling
 * events, each CPython process found (at attach, at the mmap of its runtime) and described to
 * the reader, loaded for the first one, and what it writes put in the record stream,
 * time-ordered with the samples it belongs to (as HS_RECORD_PY_STACK records). */
#include "session-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "python/names.h"
#include "record/pyframes.h"

/* A process that mapped a file a CPython runtime can be in: looked at at once, and again every
 * few milliseconds for a while if the runtime is not there yet (the dynamic loader maps the
 * data the version and layout are read from after the code; a shared libpython comes after
 * the executable). */
struct soon {
	int32_t pid;
	unsigned tries;
	uint64_t due;
};
#define SOON_RETRY_NS 5000000ULL
#define SOON_TRIES 40

/* Loading the reader (its verifier run, its maps) costs milliseconds of CPU, a tenth of a
 * microsecond per sample of a 10-second recording: it is loaded, under lock, by whichever
 * thread finds the first CPython, never in a recording that has none. */
struct hs_record_py {
	struct hs_pyframes *pf; /* its dispatcher; NULL when it could not be made (why) */
	bool loaded;            /* the reader too (atomic; set once, under lock) */
	bool failed;            /* it could not be loaded (why): no process is looked at again */
	char why[160];          /* what could not be done, for a person */
	char line[200];         /* hs_record_python_reader()'s */
	int epfd;               /* where the reader's ring is watched, with tag */
	uint64_t tag;
	struct hs_py_names *names; /* borrowed: o.py_names */
	pthread_mutex_t lock;
	struct hs_u64map pids;    /* pid -> 1 reading its frames, 2 another version (said once), 3 no
	                           * runtime found in the time it was looked at, 0 gone */
	size_t forgotten;         /* of them, 0 */
	HS_VEC(char *) notes;     /* lines for a person, each once (under lock) */
	size_t said;              /* of them, returned by hs_record_python_note() */
	HS_VEC(struct soon) soon; /* reader thread only */
	uint64_t stacks;
};

static void note(struct hs_record_py *py, const char *line)
{
	for (size_t i = 0; i < py->notes.n; i++)
		if (!strcmp(py->notes.v[i], line))
			return;
	hs_vec_push(&py->notes, hs_xstrdup(line));
}

static bool loaded(const struct hs_record_py *py)
{
	return __atomic_load_n(&py->loaded, __ATOMIC_ACQUIRE);
}

void hs_record_py_open(struct hs_record *r)
{
	struct hs_record_py *py;

	if (!r->o.py_names)
		return;
	py = hs_xcalloc(1, sizeof(*py));
	pthread_mutex_init(&py->lock, NULL);
	py->names = r->o.py_names;
	py->epfd = -1;
	r->py = py;
	/* what cannot be done is said when a Python process is found, never in a recording of none */
	hs_pyframes_open(&py->pf, py->why, sizeof(py->why));
}

/* Under py->lock, for the first CPython found: the reader loaded and its ring watched, or why
 * not said, once. */
static void load(struct hs_record_py *py)
{
	struct epoll_event ee = {EPOLLIN, {.u64 = py->tag}};
	char line[320];

	if (py->pf && hs_pyframes_load(py->pf, py->why, sizeof(py->why)) == 0) {
		if (py->epfd >= 0 && hs_pyframes_fd(py->pf) >= 0)
			epoll_ctl(py->epfd, EPOLL_CTL_ADD, hs_pyframes_fd(py->pf), &ee);
		__atomic_store_n(&py->loaded, true, __ATOMIC_RELEASE);
		return;
	}
	snprintf(line, sizeof(line),
		 "%s: Python code shows as the interpreter's native frames "
		 "(on Python 3.12 and later, python -X perf still names its functions)",
		 py->why);
	note(py, line);
	__atomic_store_n(&py->failed, true, __ATOMIC_RELAXED);
}

void hs_record_py_close(struct hs_record *r)
{
	struct hs_record_py *py = r->py;

	if (!py)
		return;
	hs_pyframes_close(py->pf);
	for (size_t i = 0; i < py->notes.n; i++)
		free(py->notes.v[i]);
	hs_vec_free(&py->notes);
	hs_vec_free(&py->soon);
	hs_u64map_release(&py->pids);
	pthread_mutex_destroy(&py->lock);
	free(py);
	r->py = NULL;
}

void hs_record_py_watch(struct hs_record *r, int epfd, uint64_t tag)
{
	if (!r->py)
		return;
	pthread_mutex_lock(&r->py->lock);
	r->py->epfd = epfd;
	r->py->tag = tag;
	pthread_mutex_unlock(&r->py->lock);
}

void hs_record_py_attach(struct hs_record *r, int fd)
{
	if (r->py && r->py->pf)
		hs_pyframes_attach(r->py->pf, fd);
}

/* Looks at pid: true when that settles it (a CPython whose frames are read from now on, one
 * that cannot be, or a pid looked at before), false when no runtime is there (yet). With
 * last, an interpreter that cannot be read is said to be so; else it is tried again later. */
static bool probe(struct hs_record *r, int32_t pid, bool last)
{
	struct hs_record_py *py = r->py;
	struct hs_py_interp in;
	char why[160]; /* what could not be done, for a person */
	uint64_t state;
	enum hs_py_found f;
	bool settled = true;

	pthread_mutex_lock(&py->lock);
	if (py->failed || (hs_u64map_get(&py->pids, (uint64_t)pid, &state) && state)) {
		pthread_mutex_unlock(&py->lock);
		return true;
	}
	f = hs_py_find(pid, &in, why, sizeof(why));
	if (f == HS_PY_SUPPORTED) {
		if (!py->loaded)
			load(py);
		if (py->loaded) {
			hs_py_names_add_proc(py->names, pid, &in);
			if (hs_pyframes_add(py->pf, (uint32_t)pid, &in) == 0)
				hs_u64map_put(&py->pids, (uint64_t)pid, 1);
		}
	} else if (f == HS_PY_UNSUPPORTED && (last || !strstr(why, "cannot read"))) {
		char line[256];
		snprintf(line, sizeof(line),
			 "%s (Python frames are read for 3.8 to 3.13): its code shows as the "
			 "interpreter's native frames",
			 why);
		note(py, line);
		hs_u64map_put(&py->pids, (uint64_t)pid, 2);
	} else {
		settled = false;
	}
	pthread_mutex_unlock(&py->lock);
	return settled;
}

void hs_record_py_probe(struct hs_record *r, int32_t pid)
{
	if (r->py && !__atomic_load_n(&r->py->failed, __ATOMIC_RELAXED))
		probe(r, pid, true);
}

/* On the reader thread: the processes due to be looked at. */
static void probe_soon(struct hs_record *r)
{
	struct hs_record_py *py = r->py;
	uint64_t now = hs_now_ns();
	size_t k = 0;

	for (size_t i = 0; i < py->soon.n; i++) {
		struct soon *s = &py->soon.v[i];
		if (s->due > now || !probe(r, s->pid, s->tries + 1 == SOON_TRIES)) {
			if (s->due <= now) {
				s->tries++;
				s->due = now + SOON_RETRY_NS;
			}
			if (s->tries < SOON_TRIES) {
				py->soon.v[k++] = *s;
			} else {
				/* no runtime came: not looked at again until it runs another program */
				pthread_mutex_lock(&py->lock);
				hs_u64map_put(&py->pids, (uint64_t)s->pid, 3);
				pthread_mutex_unlock(&py->lock);
			}
		}
	}
	py->soon.n = k;
}

/* A process gone, or running another program: under the lock, so that a reader being loaded
 * on the other thread meanwhile is told too. */
static void forget(struct hs_record_py *py, uint32_t pid)
{
	uint64_t state = 0;

	pthread_mutex_lock(&py->lock);
	if (hs_u64map_get(&py->pids, pid, &state) && state) {
		hs_u64map_put(&py->pids, pid, 0);
		/* many short-lived Python processes: the map is made again of those still there */
		if (++py->forgotten > 1024 && py->forgotten > py->pids.n / 2) {
			struct hs_u64map kept = {0};
			for (size_t i = 0; i < py->pids.cap; i++)
				if (hs_u64map_used(&py->pids, i) && py->pids.vals[i])
					hs_u64map_put(&kept, py->pids.keys[i], py->pids.vals[i]);
			hs_u64map_release(&py->pids);
			py->pids = kept;
			py->forgotten = 0;
		}
	}
	if (py->loaded && state == 1) /* its frames were read */
		hs_pyframes_remove(py->pf, pid);
	pthread_mutex_unlock(&py->lock);
}

void hs_record_py_event(struct hs_record *r, const struct hs_perf_event *ev)
{
	struct hs_record_py *py = r->py;

	if (!py || __atomic_load_n(&py->failed, __ATOMIC_RELAXED))
		return;
	if (!py->pf) {
		/* no frames can be read: a runtime mapped is enough to say so, without looking at
		 * its process on the thread that drains the rings */
		if (ev->type == PERF_RECORD_MMAP2 && (ev->mmap.prot & PROT_EXEC) && ev->mmap.filename &&
		    hs_py_maybe_runtime(ev->mmap.filename)) {
			pthread_mutex_lock(&py->lock);
			if (!py->failed)
				load(py);
			pthread_mutex_unlock(&py->lock);
		}
		return;
	}
	if (ev->type == PERF_RECORD_MMAP2 && (ev->mmap.prot & PROT_EXEC) && ev->mmap.filename &&
	    hs_py_maybe_runtime(ev->mmap.filename)) {
		struct soon s = {(int32_t)ev->mmap.pid, 0, hs_now_ns()};
		uint64_t state = 0;
		/* once per process and program: one that maps a runtime in a loop is looked at as
		 * one that maps it once (each look reads its maps and its memory, 40 times at most) */
		for (size_t i = 0; i < py->soon.n; i++)
			if (py->soon.v[i].pid == s.pid)
				return;
		pthread_mutex_lock(&py->lock);
		hs_u64map_get(&py->pids, ev->mmap.pid, &state);
		pthread_mutex_unlock(&py->lock);
		if (!state)
			hs_vec_push(&py->soon, s);
	} else if (ev->type == PERF_RECORD_FORK && ev->task.pid == ev->task.tid && ev->task.pid != ev->task.ppid) {
		/* a process of its own (multiprocessing's workers): it has its parent's runtime,
		 * and no mapping of it will be seen */
		struct soon s = {(int32_t)ev->task.pid, 0, hs_now_ns()};
		uint64_t state = 0;
		pthread_mutex_lock(&py->lock);
		hs_u64map_get(&py->pids, ev->task.ppid, &state);
		pthread_mutex_unlock(&py->lock);
		for (size_t i = 0; i < py->soon.n && !state; i++)
			state = py->soon.v[i].pid == (int32_t)ev->task.ppid; /* to be looked at */
		if (state == 1)
			hs_vec_push(&py->soon, s);
	} else if (ev->type == PERF_RECORD_EXIT && ev->task.pid == ev->task.tid) {
		forget(py, ev->task.pid);
	} else if (ev->type == PERF_RECORD_COMM && ev->comm.exec) {
		/* a new program in the process: whatever it was, it is looked at again */
		forget(py, ev->comm.pid);
	}
}

struct drain_ctx {
	struct hs_record *r;
	void (*push)(void *ctx, struct perf_event_header *rec, uint64_t time);
	void *push_ctx;
};

static void on_stack(void *ctx, const void *data, size_t size)
{
	struct drain_ctx *dc = ctx;
	const struct hs_py_sample *s = data;
	struct perf_event_header *h;
	size_t want;

	if (size < offsetof(struct hs_py_sample, frames))
		return;
	want = offsetof(struct hs_py_sample, frames) +
	       (size_t)HS_MIN(s->nframes, HS_PY_MAX_FRAMES) * sizeof(s->frames[0]);
	if (size > want)
		size = want;
	/* read the code objects now, while the process surely still has them */
	hs_py_names_prefetch(dc->r->py->names, s);
	h = hs_xmalloc(sizeof(*h) + size);
	h->type = HS_RECORD_PY_STACK;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + size);
	memcpy(h + 1, data, size);
	dc->r->py->stacks++;
	dc->push(dc->push_ctx, h, s->time - HS_PY_STACK_EARLY_NS);
}

int hs_record_py_poll_ms(const struct hs_record *r)
{
	bool reading;

	if (!r->py || !r->py->pf || __atomic_load_n(&r->py->failed, __ATOMIC_RELAXED))
		return -1;
	if (r->py->soon.n)
		return 2;
	reading = loaded(r->py);
	/* a command starting (its interpreter's mapping seen within 10 ms); later a new
	 * interpreter waits for the reader's usual round, and a new code object wakes it */
	if ((reading || r->o.argv) && hs_now_ns() - r->start_ns < 1000000000ULL)
		return 10;
	return reading ? 50 : -1;
}

void hs_record_py_drain(struct hs_record *r, void (*push)(void *ctx, struct perf_event_header *rec, uint64_t time),
			void *ctx)
{
	struct drain_ctx dc = {r, push, ctx};

	if (!r->py)
		return;
	if (loaded(r->py))
		hs_pyframes_drain(r->py->pf, on_stack, &dc);
	if (r->py->soon.n)
		probe_soon(r);
}

const char *hs_record_python_note(const struct hs_record *r)
{
	const char *l = NULL;

	if (!r->py)
		return NULL;
	pthread_mutex_lock(&r->py->lock);
	if (r->py->said < r->py->notes.n)
		l = r->py->notes.v[r->py->said++];
	pthread_mutex_unlock(&r->py->lock);
	return l;
}

bool hs_record_python_active(const struct hs_record *r)
{
	return r->py && loaded(r->py);
}

const char *hs_record_python_reader(const struct hs_record *r)
{
	if (!r->py)
		return NULL;
	if (loaded(r->py))
		return "frame reader loaded";
	if (!r->py->failed)
		return "frame reader not loaded: no Python process seen";
	snprintf(r->py->line, sizeof(r->py->line), "frame reader not loaded: %s", r->py->why);
	return r->py->line;
}

uint64_t hs_record_python_dropped(const struct hs_record *r)
{
	return r->py && loaded(r->py) ? hs_pyframes_dropped(r->py->pf) : 0;
}
