/* The side-band of a system-wide recording (mmap, comm, fork and exit records) on rings of its
 * own: a dummy event per CPU sends it, the sampling events send none. A process that maps,
 * renames or forks in a loop fills those rings, never the samples': the other processes' samples
 * are never lost to it. What a side-band ring loses is counted, and every process is then read
 * again from /proc at its next sample. */
#include "session-private.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* Data pages of a side-band ring: 512 KiB a CPU (perf's default for all its records); read at
 * half full, or at the reader's usual rounds. */
#define SIDEBAND_PAGES 128

int hs_record_sideband_open(struct hs_record *r, struct hs_error *err)
{
	struct perf_event_attr *b = &r->attr_side;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), ncpu = r->cpus.n;

	if (!r->side_apart)
		return 0;
	hs_record_side_attr(r);
	b->wakeup_watermark = (uint32_t)(SIDEBAND_PAGES * page / 2);
	for (size_t c = 0; c < ncpu; c++) {
		struct hs_record_ring ring = {-1, r->cpus.v[c], NULL, (SIDEBAND_PAGES + 1) * page, {0}};
		struct epoll_event ee = {EPOLLIN, {.u64 = 1000 + r->rings.n}};
		int fd = hs_perf_event_open(b, -1, ring.cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			return hs_record_fail(err, fd, HS_RECORD_FAILED, "cannot open the side-band event of CPU %d: %s",
					      ring.cpu, strerror(-fd));
		hs_vec_push(&r->fds, fd);
		hs_vec_push(&r->side_fds, fd);
		ring.fd = fd;
		ring.base = mmap(NULL, ring.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (ring.base == MAP_FAILED) {
			/* over the locked-memory limit (not root): into the samples' ring, as before */
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[c].fd) < 0)
				return hs_record_fail(err, -errno, HS_RECORD_FAILED,
						      "cannot share the ring buffer of CPU %d: %s", ring.cpu, strerror(errno));
			continue;
		}
		ring.sideband = true;
		hs_ring_init(&ring.ring, ring.base, page, SIDEBAND_PAGES * page);
		hs_vec_push(&r->rings, ring);
		pthread_mutex_init(&r->rings.v[r->rings.n - 1].lock, NULL);
		epoll_ctl(r->ring_epfd, EPOLL_CTL_ADD, fd, &ee);
	}
	return 0;
}
