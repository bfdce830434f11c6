/* What the kernel could not write into the rings, told apart: a PERF_RECORD_LOST counts records
 * of any kind (a ring's, whichever event's), so where the kernel counts each event's lost
 * records (PERF_FORMAT_LOST, Linux 6.0) and the side-band has an event of its own, the sampling
 * events' counts are the samples lost, and the side-band event's the rest. */
#include "session-private.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

bool hs_record_lost_countable(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_LOST;
	fd = hs_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	/* an older kernel refuses the format it does not know: EINVAL, whatever else it allows */
	return fd != -EINVAL;
}

/* The records an event opened with read_format PERF_FORMAT_LOST could not write: its value,
 * then that count. An inherited event's children count into it (the kernel charges their
 * records to the event they were inherited from). */
static uint64_t lost_of(int fd)
{
	uint64_t v[2];

	return read(fd, v, sizeof(v)) == (ssize_t)sizeof(v) ? v[1] : 0;
}

void hs_record_count_lost(struct hs_record *r, bool final)
{
	uint64_t seen = __atomic_load_n(&r->lost_records, __ATOMIC_RELAXED), all = 0, side = 0, samples;
	struct hs_perf_event ev;

	/* nothing was lost since the last look (a ring that lost records says so in a
	 * PERF_RECORD_LOST once it has room), but at the end, when a ring full to it has not */
	if (!r->lost_counted || (!final && seen == r->lost_seen))
		return;
	r->lost_seen = seen;
	for (size_t i = 0; i < r->fds.n; i++)
		all += lost_of(r->fds.v[i]);
	for (size_t i = 0; i < r->side_fds.n; i++)
		side += lost_of(r->side_fds.v[i]);
	samples = all > side ? all - side : 0;
	r->lost_side = HS_MAX(r->lost_side, side);
	if (samples <= r->lost_samples)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_LOST_SAMPLES;
	ev.lost.lost = samples - r->lost_samples;
	r->lost_samples = samples;
	r->sink->event(r->sink->ctx, &ev);
}

bool hs_record_counts_lost(const struct hs_record *r)
{
	return r->lost_counted;
}

uint64_t hs_record_lost_side(const struct hs_record *r)
{
	/* -a's side-band rings say what they lost in records of their own, too (session.c) */
	return HS_MAX(r->lost_side, __atomic_load_n(&r->sideband_lost, __ATOMIC_RELAXED));
}
