/* Live recording: its lifecycle, and the loop: a reader thread drains the rings (one per CPU,
 * see open.c) while the main thread puts the records in time order, hands them on, and watches
 * the targets (targets.c) and the signals. */
#include "session-private.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/infile.h"

/* The main thread wakes for each round of the reader's and for its signals and timers; else
 * only this often, to see whether -t's threads are gone and to show progress: each wake-up
 * costs two context switches, paid by every sample of a recording that does nothing else. */
#define MAIN_POLL_MS 250

/* The signals the main loop reads (SIGUSR2 only when it asks for the next period) */
static void own_signals(sigset_t *set, bool usr2)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGCHLD);
	if (usr2)
		sigaddset(set, SIGUSR2);
}

void hs_record_block_signals(bool switch_signal)
{
	sigset_t set;

	own_signals(&set, switch_signal);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* ---- open / close ---- */

int hs_record_open(struct hs_record *r, const struct hs_record_opts *o, struct hs_error *err)
{
	struct rlimit rl;
	sigset_t set;
	struct epoll_event ee = {EPOLLIN, {.u64 = 1}};
	int rc;

	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	r->o = *o;
	r->epfd = r->sigfd = r->timerfd = r->go_fd = r->err_fd = -1;
	r->ring_epfd = r->wake_fd = r->stop_fd = -1;
	hs_queue_init(&r->queue);
	if (r->o.callgraph == HS_CG_STACK && !r->o.stack_bytes)
		r->o.stack_bytes = HS_DEFAULT_STACK_BYTES;
	r->pages_explicit = r->o.mmap_pages != 0;
	if (r->pages_explicit) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t least = hs_callgraph_min_ring_pages(r->o.callgraph, r->o.stack_bytes, page);
		if (r->o.mmap_pages < least)
			return hs_record_fail(err, -EINVAL, HS_RECORD_RING_SMALL,
					      "-m %zu (%zu KiB a ring) is too small for two samples with %u-byte "
					      "stack copies, which need -m %zu or more",
					      r->o.mmap_pages, r->o.mmap_pages * page >> 10, r->o.stack_bytes, least);
	}
	if (!r->o.mmap_pages)
		r->o.mmap_pages = hs_callgraph_ring_pages(r->o.callgraph, r->o.stack_bytes, (size_t)sysconf(_SC_PAGESIZE));
	if (!r->o.max_stack || r->o.max_stack > hs_record_max_stack())
		r->o.max_stack = hs_record_max_stack();
	/* one descriptor per (thread, CPU) plus captured files: use what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((rc = hs_record_read_cpus(r, err)) || (rc = hs_record_ring_check(r, err)))
		return rc;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->ring_epfd = epoll_create1(EPOLL_CLOEXEC);
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&r->lock, NULL);
	if (r->ring_epfd < 0 || r->wake_fd < 0 || r->stop_fd < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot set up event polling: %s",
				      strerror(errno));
	{
		struct epoll_event we = {EPOLLIN, {.u64 = 3}}, se = {EPOLLIN, {.u64 = 3}};
		epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wake_fd, &we);
		epoll_ctl(r->ring_epfd, EPOLL_CTL_ADD, r->stop_fd, &se);
	}
	own_signals(&set, o->switch_signal);
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->epfd < 0 || r->sigfd < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot set up event polling: %s",
				      strerror(errno));
	epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->sigfd, &ee);
	if (o->duration > 0) {
		struct itimerspec its = {{0, 0}, {(time_t)o->duration, (long)((o->duration - (double)(time_t)o->duration) * 1e9)}};
		struct epoll_event te = {EPOLLIN, {.u64 = 2}};
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
		r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (r->timerfd < 0)
			return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot create a timer: %s",
					      strerror(errno));
		timerfd_settime(r->timerfd, 0, &its, NULL);
		epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->timerfd, &te);
	}
	hs_record_setup_attr(r);
	hs_record_fair_open(r);
	hs_record_rt_open(r); /* before the events: each is given the frame readers' dispatcher */
	hs_record_rt_watch(r, r->ring_epfd, 4);
	if ((rc = hs_record_open_targets(r, err)))
		return rc;
	hs_record_measure_tsc(r);
	return 0;
}

static void stop_reader(struct hs_record *r);

void hs_record_close(struct hs_record *r)
{
	stop_reader(r);
	for (size_t i = 0; i < r->inbox.n; i++)
		free(r->inbox.v[i].rec);
	hs_vec_free(&r->inbox);
	if (r->ring_epfd >= 0)
		close(r->ring_epfd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	if (r->stop_fd >= 0) {
		close(r->stop_fd);
		pthread_mutex_destroy(&r->lock);
	}
	r->ring_epfd = r->wake_fd = r->stop_fd = -1;
	for (size_t i = 0; i < r->rings.n; i++) {
		munmap(r->rings.v[i].base, r->rings.v[i].len);
		hs_ring_release(&r->rings.v[i].ring);
		hs_held_release(&r->rings.v[i]);
		pthread_mutex_destroy(&r->rings.v[i].lock);
	}
	free(r->take_buf);
	r->take_buf = NULL;
	for (size_t i = 0; i < r->fds.n; i++)
		close(r->fds.v[i]);
	for (size_t i = 0; i < r->pidfds.n; i++)
		if (r->pidfds.v[i] >= 0)
			close(r->pidfds.v[i]);
	for (size_t i = 0; i < r->captures.n; i++)
		close(r->captures.v[i].fd);
	if (r->child > 0 && !r->child_exited) {
		/* the recording failed before the command ran: it is waiting on the go pipe */
		if (r->go_fd >= 0)
			close(r->go_fd);
		r->go_fd = -1;
		kill(r->child, SIGKILL);
		waitpid(r->child, &r->child_status, 0);
		r->child_exited = true;
	}
	if (r->go_fd >= 0)
		close(r->go_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->sigfd >= 0)
		close(r->sigfd);
	if (r->timerfd >= 0)
		close(r->timerfd);
	hs_queue_release(&r->queue);
	hs_vec_free(&r->cpus);
	hs_vec_free(&r->fds);
	hs_vec_free(&r->side_fds);
	hs_vec_free(&r->rings);
	hs_vec_free(&r->tids);
	hs_vec_free(&r->attach_comms);
	hs_vec_free(&r->pidfds);
	hs_vec_free(&r->captures);
	hs_u64map_release(&r->off_cpu_ids);
	hs_record_rt_close(r);
	hs_record_fair_close(r);
	r->epfd = r->sigfd = r->timerfd = -1;
}

/* ---- capturing mapped files ---- */

/* A mapped file, held on to through the mapping itself. A process can map a device (a GPU's,
 * /dev/mem): only a regular file is opened, a device never, not even to be closed again. */
static int open_map_file(int32_t pid, uint64_t start, uint64_t end)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = hs_infile_open(path, 0, NULL);
	return fd < 0 ? -1 : fd;
}

int hs_record_capture(void *record, int32_t pid, uint64_t start, uint64_t end)
{
	struct hs_record *r = record;
	int fd = -1;

	pthread_mutex_lock(&r->lock);
	for (size_t i = r->captures.n; i-- > 0;) {
		struct hs_capture *c = &r->captures.v[i];
		if (c->pid == pid && c->start == start && c->end == end) {
			fd = c->fd;
			*c = r->captures.v[--r->captures.n];
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return fd >= 0 ? fd : open_map_file(pid, start, end);
}

/* A new executable file mapping: hold on to the file now, while the mapping surely exists. */
static void capture_early(struct hs_record *r, const struct hs_perf_event *ev)
{
	const struct hs_perf_mmap *m = &ev->mmap;
	struct hs_capture c;

	if (!m->is_mmap2 || !(m->prot & PROT_EXEC) || !m->filename || m->filename[0] != '/' ||
	    !strncmp(m->filename, "//", 2) || m->pid == UINT32_MAX)
		return;
	/* a file held on to lately is known by now: opening it again for each of a loop's
	 * mappings took the reader all its time */
	if (!hs_record_fair_capture(r, m, ev->sid.time))
		return;
	c.fd = open_map_file((int32_t)m->pid, m->start, m->start + m->len);
	if (c.fd < 0) {
		hs_record_fair_capture_failed(r);
		return;
	}
	c.pid = (int32_t)m->pid;
	c.start = m->start;
	c.end = m->start + m->len;
	c.time = ev->sid.time;
	pthread_mutex_lock(&r->lock);
	hs_vec_push(&r->captures, c);
	pthread_mutex_unlock(&r->lock);
}

/* Captures of mappings already handed on and not taken are no longer needed. */
static void drop_captures(struct hs_record *r, uint64_t upto)
{
	size_t k = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->captures.n; i++) {
		if (r->captures.v[i].time <= upto)
			close(r->captures.v[i].fd);
		else
			r->captures.v[k++] = r->captures.v[i];
	}
	r->captures.n = k;
	pthread_mutex_unlock(&r->lock);
}

/* ---- the loop ---- */

struct reader_round {
	struct hs_record *r;
	HS_VEC(struct hs_drained) got;
	uint64_t last_time;
	bool idle; /* the last round drained nothing */
	bool busy; /* the last round drained records of processes coming, going or mapping */
	size_t ring; /* the ring being scanned */
};

/* Between rounds the reader waits for a ring half full, or this long when the last round
 * saw only samples (a steady program's: they wait in their rings well enough), else the usual
 * interval, so that processes that come and go are followed while their /proc entries last. */
#define QUIET_POLL_MS 250
#define BUSY_POLL_MS 50
/* How late a record may be published after the time it is stamped with (a virtual CPU stopped
 * while writing one). One later still is handed on at the next round, out of order by as much. */
#define ROUND_MARGIN_NS (5 * 1000000ULL)

static void push_drained(void *ctx, struct perf_event_header *rec, uint64_t time)
{
	struct reader_round *rr = ctx;
	struct hs_drained d = {time, rec, 0};

	__atomic_add_fetch(&rr->r->backlog, rec->size, __ATOMIC_RELAXED);
	hs_vec_push(&rr->got, d);
}

/* On the reader thread: each record scanned, left in its ring (a reference handed on) unless
 * it wrapped around the ring's end (a copy). The kernel reserves the whole requested stack
 * size in every sample, most of it unused where stacks are shallow: copying it all doubled
 * hotstack's CPU time at 64 KiB. */
static void on_record(void *ctx, const struct perf_event_header *rec, uint64_t pos, bool copied)
{
	struct reader_round *rr = ctx;
	struct hs_record *r = rr->r;
	bool sideband = r->rings.v[rr->ring].sideband;
	struct hs_perf_event ev;
	struct hs_drained d = {0};
	uint64_t time;
	bool resync;

	__atomic_add_fetch(&r->records, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->bytes, rec->size, __ATOMIC_RELAXED);
	if (!copied && rec->type == PERF_RECORD_SAMPLE && r->time_pos >= 0 &&
	    rec->size >= sizeof(*rec) + 8 * ((size_t)r->time_pos + 1)) {
		/* a sample where the kernel wrote it: its time is all the reader needs of it (the
		 * main thread parses it, and counts it if it is unreadable) */
		memcpy(&rr->last_time, (const char *)(rec + 1) + 8 * r->time_pos, 8);
		d.time = rr->last_time;
		d.ref = hs_held_add(r, rr->ring, pos, rec->size, true);
		hs_vec_push(&rr->got, d);
		return;
	}
	if (hs_perf_event_parse(rec, rec->size, &r->layout, 0, &ev, &r->reader_perr)) {
		__atomic_add_fetch(&r->bad_records, 1, __ATOMIC_RELAXED);
		hs_held_add(r, rr->ring, pos, rec->size, false);
		return;
	}
	if (ev.type != PERF_RECORD_SAMPLE)
		rr->busy = true;
	time = ev.sid.has_time ? ev.sid.time : rr->last_time;
	if (ev.type == PERF_RECORD_LOST && sideband) {
		/* mappings, names or processes of someone lost, no sample: every process is read
		 * again from /proc at its next sample */
		__atomic_add_fetch(&r->sideband_lost, ev.lost.lost, __ATOMIC_RELAXED);
		hs_held_add(r, rr->ring, pos, rec->size, false);
		push_drained(rr, hs_record_resync_record(UINT32_MAX, UINT32_MAX, time), time);
		return;
	}
	if (ev.type == PERF_RECORD_LOST)
		__atomic_add_fetch(&r->lost_records, ev.lost.lost, __ATOMIC_RELAXED);
	if (!hs_record_fair_admit(r, &ev, time, &resync)) {
		/* a process over its budget: its space given back at once, the process read again
		 * from /proc when it is next sampled */
		hs_held_add(r, rr->ring, pos, rec->size, false);
		if (resync)
			push_drained(rr, hs_record_fair_resync(&ev, time), time);
		return;
	}
	if (ev.type == PERF_RECORD_MMAP2)
		capture_early(r, &ev);
	hs_record_rt_event(r, &ev);
	if (ev.sid.has_time)
		rr->last_time = ev.sid.time;
	d.time = rr->last_time;
	/* a side-band ring's records are few bytes each: copied at once, their space given back,
	 * so that a ring of them never waits on the main thread */
	if (copied || sideband) {
		d.rec = hs_record_copy(rec, &ev);
		__atomic_add_fetch(&r->backlog, d.rec->size, __ATOMIC_RELAXED);
	}
	d.ref = hs_held_add(r, rr->ring, pos, rec->size, !copied && !sideband);
	hs_vec_push(&rr->got, d);
}

/* One round: every ring drained, then handed over with an end-of-round mark. Unless last, none
 * while the backlog is over its cap: the records wait in the rings (and what does not fit there
 * is lost, and counted by the kernel) until the main thread has caught up. */
static void reader_round(struct reader_round *rr, bool last)
{
	struct hs_record *r = rr->r;
	/* the mark's time: when the round began, before any ring was read */
	struct hs_drained mark = {hs_record_times_monotonic(r) ? hs_now_ns() : 0, NULL, 0};
	uint64_t one = 1;

	if (!last && __atomic_load_n(&r->backlog, __ATOMIC_RELAXED) > HS_RECORD_MAX_BACKLOG) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
		return;
	}
	rr->got.n = 0;
	rr->busy = false;
	for (rr->ring = 0; rr->ring < r->rings.n; rr->ring++) {
		hs_ring_scan(&r->rings.v[rr->ring].ring, on_record, rr);
		hs_held_spill_if_full(r, rr->ring);
	}
	/* after the rings: the Python frames of every sample drained are in the frame reader's
	 * ring by now, since it writes them before the kernel writes the sample */
	hs_record_rt_drain(r, push_drained, rr);
	/* a round after an empty one with nothing new says nothing the last mark did not: no mark,
	 * so that a main thread busy for long (a big file to read) does not find millions of them */
	if (!rr->got.n && rr->idle)
		return;
	rr->idle = !rr->got.n;
	hs_vec_push(&rr->got, mark);
	pthread_mutex_lock(&r->lock);
	hs_vec_reserve(&r->inbox, r->inbox.n + rr->got.n);
	memcpy(r->inbox.v + r->inbox.n, rr->got.v, rr->got.n * sizeof(*rr->got.v));
	r->inbox.n += rr->got.n;
	pthread_mutex_unlock(&r->lock);
	if (write(r->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the main thread has wake-ups pending anyway */
	}
}

static void *reader_main(void *arg)
{
	struct reader_round rr = {arg, {0}, 0, false, true, 0};
	struct hs_record *r = arg;
	bool stopping = false;

	while (!stopping) {
		struct epoll_event evs[64];
		int ms = hs_record_rt_poll_ms(r);
		int n = epoll_wait(r->ring_epfd, evs, 64, ms >= 0 ? ms : rr.busy ? BUSY_POLL_MS : QUIET_POLL_MS);
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == 3) {
				stopping = true;
			} else if (evs[i].events & (EPOLLHUP | EPOLLERR) && tag >= 1000 && tag - 1000 < r->rings.n) {
				/* its thread has exited: the hang-up would wake us at once for ever; what
				 * its ring still gets (other threads') is drained every round anyway */
				epoll_ctl(r->ring_epfd, EPOLL_CTL_DEL, r->rings.v[tag - 1000].fd, NULL);
			}
		}
		reader_round(&rr, stopping);
	}
	hs_vec_free(&rr.got);
	return NULL;
}

static void stop_reader(struct hs_record *r)
{
	uint64_t one = 1;

	if (!r->reader_running)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot happen with a fresh eventfd; the reader's 50 ms timeout is no help here */
	}
	pthread_join(r->reader, NULL);
	r->reader_running = false;
}

/* Every queued record up to limit, to the sink: a copy the reader made, or the record where it
 * is in its ring, copied now. */
static void hand_on(struct hs_record *r, uint64_t limit)
{
	struct hs_queue_item it;

	while (hs_queue_pop(&r->queue, limit, &it)) {
		struct hs_perf_event ev;
		if (!it.rec && hs_held_take_in_place(r, it.ref, &ev)) {
			/* a sample with a stack, read where it is (its stack only where the unwinder
			 * reads it); given back once its stack is walked */
			r->sink->event(r->sink->ctx, &ev);
			hs_held_finish(r);
			continue;
		}
		if (!it.rec)
			it.rec = hs_held_take(r, it.ref, &it.owned);
		else
			__atomic_sub_fetch(&r->backlog, it.rec->size, __ATOMIC_RELAXED);
		if (it.rec && !hs_perf_event_parse(it.rec, it.rec->size, &r->layout, 0, &ev, &r->perr))
			r->sink->event(r->sink->ctx, &ev);
		else if (it.rec)
			__atomic_add_fetch(&r->bad_records, 1, __ATOMIC_RELAXED);
		hs_queue_item_release(&it);
	}
	drop_captures(r, limit);
}

/* On the main thread: what the reader drained goes into time order, and every record older than
 * the previous round's newest is handed on. */
static void process_inbox(struct hs_record *r, bool final)
{
	HS_VEC(struct hs_drained) batch = {0};
	uint64_t count;

	if (read(r->wake_fd, &count, sizeof(count)) < 0) {
		/* nothing pending: fine */
	}
	pthread_mutex_lock(&r->lock);
	batch.v = r->inbox.v;
	batch.n = r->inbox.n;
	batch.cap = r->inbox.cap;
	memset(&r->inbox, 0, sizeof(r->inbox));
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < batch.n; i++) {
		uint64_t limit;
		if (batch.v[i].rec) {
			hs_queue_push_owned(&r->queue, batch.v[i].rec, batch.v[i].time);
			continue;
		}
		if (batch.v[i].ref) {
			hs_queue_push_ref(&r->queue, batch.v[i].ref, batch.v[i].time);
			continue;
		}
		/* Records stamped well before the round began were in their rings when it read
		 * them: the kernel writes a record in the interrupt that stamps it. So everything
		 * older than that goes on now, rather than a round later (perf's rule, kept for a
		 * clock the rings cannot be compared with), and a ring holds a round's records,
		 * not two: half as many wake-ups for the same room. */
		limit = hs_queue_round(&r->queue);
		if (batch.v[i].time > ROUND_MARGIN_NS)
			limit = HS_MAX(limit, batch.v[i].time - ROUND_MARGIN_NS);
		hand_on(r, limit);
	}
	hs_vec_free(&batch);
	if (final)
		hand_on(r, UINT64_MAX);
}

static void enable_all(struct hs_record *r, unsigned long req)
{
	for (size_t i = 0; i < r->fds.n; i++)
		ioctl(r->fds.v[i], req, 0);
}

void hs_record_stop(struct hs_record *r)
{
	if (r->cause == HS_CAUSE_NONE)
		r->cause = HS_CAUSE_ASKED;
}

int hs_record_run(struct hs_record *r, const struct hs_record_sink *sink, struct hs_error *err)
{
	uint64_t last_progress, tick_ns = UINT64_MAX;
	bool switch_asked;
	int rc;

	r->sink = sink;
	r->time_pos = hs_perf_time_pos_sample(&r->layout);
	r->start_ns = hs_now_ns();
	last_progress = r->start_ns;
	if ((rc = pthread_create(&r->reader, NULL, reader_main, r)))
		return hs_record_fail(err, -rc, HS_RECORD_FAILED, "cannot start the ring reader: %s", strerror(rc));
	r->reader_running = true;
	/* the processes attached to: their runtimes' readers loaded before their first sample */
	hs_record_probe_targets(r);
	/* events of a command start at its exec; the others now */
	if (!r->o.argv || r->o.all_cpus)
		enable_all(r, PERF_EVENT_IOC_ENABLE);
	if (r->o.argv && (rc = hs_record_release_command(r, err)))
		return rc;
	hs_record_describe_running(r);

	while (r->cause == HS_CAUSE_NONE) {
		struct epoll_event evs[32];
		/* a tick asked for sooner than the usual poll (a period's end): then, to the ms */
		int n = epoll_wait(r->epfd, evs, 32,
				   tick_ns < MAIN_POLL_MS * 1000000ULL ? (int)((tick_ns + 999999) / 1000000) : MAIN_POLL_MS);

		switch_asked = false;
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == 1) {
				struct signalfd_siginfo si;
				while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						hs_record_reap_child(r);
					} else if (si.ssi_signo == SIGUSR2) {
						switch_asked = true;
					} else if (r->cause == HS_CAUSE_NONE) {
						r->cause = HS_CAUSE_SIGNAL;
						r->stop_signal = (int)si.ssi_signo;
					}
				}
			} else if (tag == 2) {
				if (r->cause == HS_CAUSE_NONE)
					r->cause = HS_CAUSE_DURATION;
			} else if (tag >= 100 && tag < 1000) {
				size_t k = tag - 100, alive = 0;
				epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->pidfds.v[k], NULL);
				close(r->pidfds.v[k]);
				r->pidfds.v[k] = -1;
				for (size_t j = 0; j < r->pidfds.n; j++)
					alive += r->pidfds.v[j] >= 0;
				if (!alive && !r->o.argv && !r->o.all_cpus && !r->o.ntids && r->cause == HS_CAUSE_NONE)
					r->cause = HS_CAUSE_TARGETS_EXITED;
			}
		}
		hs_record_reap_child(r);
		if (r->cause == HS_CAUSE_NONE && hs_record_threads_gone(r))
			r->cause = HS_CAUSE_TARGETS_EXITED;
		process_inbox(r, false);
		hs_record_count_lost(r, false);
		if (sink->progress && hs_now_ns() - last_progress >= 1000000000ULL) {
			struct hs_record_progress p = {__atomic_load_n(&r->records, __ATOMIC_RELAXED),
						       __atomic_load_n(&r->bytes, __ATOMIC_RELAXED),
						       __atomic_load_n(&r->lost_records, __ATOMIC_RELAXED),
						       (double)(hs_now_ns() - r->start_ns) / 1e9};
			last_progress = hs_now_ns();
			sink->progress(sink->ctx, &p);
		}
		if (sink->tick && r->cause == HS_CAUSE_NONE)
			tick_ns = sink->tick(sink->ctx, switch_asked);
	}

	r->stop_ns = hs_now_ns();
	enable_all(r, PERF_EVENT_IOC_DISABLE);
	stop_reader(r); /* after a last round */
	process_inbox(r, true);
	hs_record_count_lost(r, true);
	if (sink->ending)
		sink->ending(sink->ctx);
	hs_record_end_command(r);
	return 0;
}
