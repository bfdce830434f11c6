/* What one process may cost a live recording, and so the other processes' samples: its mapping
 * and rename records are followed up to a budget per second, past which they are left out and
 * the process is read again from /proc at its next sample (HS_RECORD_RESYNC); a file it maps is
 * held on to (its /proc/PID/map_files entry opened) at most once a second, whoever maps it. */
#include "session-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The records of one process followed in a second: far above what a program's start needs (a
 * JVM or a browser maps a few hundred files), far below what a loop that maps and unmaps a file
 * makes (over 100,000 a second). Past FAIR_TOTAL records of all processes in a second, each
 * process gets FAIR_PER_PROC_BUSY of them: many processes churning at once are cut sooner. */
#define FAIR_WINDOW_NS 1000000000ULL
#define FAIR_PER_PROC 1024
#define FAIR_TOTAL 32768
#define FAIR_PER_PROC_BUSY 64
/* Files held on to lately, by identity: a direct-mapped table (a collision costs one more open) */
#define CAPTURE_SLOTS 4096
#define CAPTURE_AGAIN_NS FAIR_WINDOW_NS

/* In counts: the process was told to be read again in this window */
#define RESYNC_SENT (1ULL << 63)

struct hs_record_fair {
	uint64_t window;         /* when the current window began, by the records' clock */
	struct hs_u64map counts; /* pid -> its records in the window (| RESYNC_SENT) */
	uint64_t total;          /* records of all processes in the window */
	size_t last_slot;        /* of the last capture asked for */
	struct {
		uint64_t key, time;
	} captured[CAPTURE_SLOTS];
};

void hs_record_fair_open(struct hs_record *r)
{
	r->fair = hs_xcalloc(1, sizeof(*r->fair));
}

void hs_record_fair_close(struct hs_record *r)
{
	if (!r->fair)
		return;
	hs_u64map_release(&r->fair->counts);
	free(r->fair);
	r->fair = NULL;
}

/* The process a record's cost is put on, or -1 for records never left out: exits (a process
 * gone must be forgotten), execs (its mappings start afresh), forks (cheap, and what a process
 * is made of), samples and the kernel's own. */
static int64_t payer(const struct hs_perf_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return ev->mmap.pid == UINT32_MAX ? -1 : (int64_t)ev->mmap.pid;
	case PERF_RECORD_COMM:
		return ev->comm.exec ? -1 : (int64_t)ev->comm.pid;
	default:
		return -1;
	}
}

bool hs_record_fair_admit(struct hs_record *r, const struct hs_perf_event *ev, uint64_t time, bool *resync_ret)
{
	struct hs_record_fair *f = r->fair;
	int64_t pid = payer(ev);
	uint64_t v = 0, n;

	*resync_ret = false;
	if (!f || pid < 0)
		return true;
	if (time >= f->window + FAIR_WINDOW_NS) {
		/* a new window: the counts start again (the map made anew keeps it as small as the
		 * processes of one window). The rings are read one after the other, so times go back
		 * by up to a round from one ring to the next: those count in the window they are in */
		hs_u64map_release(&f->counts);
		f->window = time;
		f->total = 0;
	}
	hs_u64map_get(&f->counts, (uint64_t)pid, &v);
	n = (v & ~RESYNC_SENT) + 1;
	f->total++;
	if (n <= (f->total > FAIR_TOTAL ? FAIR_PER_PROC_BUSY : FAIR_PER_PROC)) {
		hs_u64map_put(&f->counts, (uint64_t)pid, n | (v & RESYNC_SENT));
		return true;
	}
	/* left out: the first time in a window, its process is marked to be read again */
	*resync_ret = !(v & RESYNC_SENT);
	hs_u64map_put(&f->counts, (uint64_t)pid, n | RESYNC_SENT);
	__atomic_add_fetch(&r->left_out, 1, __ATOMIC_RELAXED);
	if (*resync_ret)
		__atomic_add_fetch(&r->resyncs, 1, __ATOMIC_RELAXED);
	return false;
}

struct perf_event_header *hs_record_resync_record(uint32_t pid, uint32_t tid, uint64_t time)
{
	struct perf_event_header *h = hs_xmalloc(sizeof(*h) + 16);

	h->type = HS_RECORD_RESYNC;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + 16);
	memcpy(h + 1, &time, 8);
	memcpy((char *)(h + 1) + 8, &pid, 4);
	memcpy((char *)(h + 1) + 12, &tid, 4);
	return h;
}

struct perf_event_header *hs_record_fair_resync(const struct hs_perf_event *ev, uint64_t time)
{
	if (ev->type == PERF_RECORD_COMM)
		return hs_record_resync_record(ev->comm.pid, ev->comm.tid, time);
	return hs_record_resync_record(ev->mmap.pid, ev->mmap.tid, time);
}

bool hs_record_fair_capture(struct hs_record *r, const struct hs_perf_mmap *m, uint64_t time)
{
	struct hs_record_fair *f = r->fair;
	uint64_t key;
	size_t slot;

	if (!f)
		return true;
	/* the file, as the kernel names it: its build-id, else its device, inode and generation;
	 * and its path, which a capture is found by when the file is read */
	if (m->build_id_size)
		key = hs_hash_bytes(m->build_id, m->build_id_size, 1);
	else
		key = hs_hash_combine(hs_hash_combine(hs_hash_u64((uint64_t)m->maj << 32 | m->min), m->ino),
				      m->ino_generation);
	key = hs_hash_combine(key, hs_hash_mem(m->filename, strlen(m->filename)));
	slot = key & (CAPTURE_SLOTS - 1);
	if (f->captured[slot].key == key && time >= f->captured[slot].time &&
	    time - f->captured[slot].time < CAPTURE_AGAIN_NS)
		return false;
	f->captured[slot].key = key;
	f->captured[slot].time = time;
	f->last_slot = slot;
	return true;
}

void hs_record_fair_capture_failed(struct hs_record *r)
{
	if (r->fair)
		r->fair->captured[r->fair->last_slot].key = 0;
}
