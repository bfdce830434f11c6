/* Parsers for perf_event records. Layouts follow linux/perf_event.h and the order in which
 * kernel/events/core.c (perf_output_sample) writes sample fields, which differs from the
 * header's comment for CGROUP, the page sizes and AUX. */
#include "perf-event.h"

#include <errno.h>
#include <string.h>

#include "util/cursor.h"

/* A record being read: the cursor over it (origin: its offset in the file) and where the first
 * error goes. Each field read names itself, so that the error says which one the record ended
 * before. */
struct reader {
	struct hs_cursor c;
	struct hs_error *err;
};

static void ended(struct reader *r, const char *what)
{
	/* only the first failed read's name is kept: hs_error_at() keeps the first error */
	hs_error_at(r->err, hs_cursor_fail_offset(&r->c), "%s runs past the end of a %zu-byte record", what,
			   r->c.len);
}

static uint64_t get64(struct reader *r, const char *what)
{
	uint64_t v = hs_cursor_u64(&r->c);

	if (hs_cursor_failed(&r->c))
		ended(r, what);
	return v;
}

static void get32x2(struct reader *r, uint32_t *a, uint32_t *b, const char *what)
{
	if (!hs_cursor_need(&r->c, 8)) {
		ended(r, what);
		return;
	}
	*a = hs_cursor_u32(&r->c);
	*b = hs_cursor_u32(&r->c);
}

static const void *getbytes(struct reader *r, uint64_t n, const char *what)
{
	const void *p;

	/* a length over the whole record leaves the field out without failing the record */
	if (n > r->c.len)
		return NULL;
	p = hs_cursor_bytes(&r->c, n);
	if (!p)
		ended(r, what);
	return p;
}

static uint32_t popcount64(uint64_t v)
{
	return (uint32_t)__builtin_popcountll(v);
}

static size_t read_format_size(uint64_t rf, const struct hs_cursor *c, bool *ok)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t fixed = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	struct hs_cursor peek = *c;
	uint64_t nr;

	*ok = true;
	if (!(rf & PERF_FORMAT_GROUP))
		return (per + fixed) * 8;
	nr = hs_cursor_u64(&peek);
	if (hs_cursor_failed(&peek) || nr > 4096) {
		*ok = false;
		return 0;
	}
	return (1 + fixed + (size_t)nr * per) * 8;
}

static void parse_sid(struct reader *r, uint64_t st, struct hs_perf_sample_id *sid)
{
	if (st & PERF_SAMPLE_TID)
		get32x2(r, &sid->pid, &sid->tid, "pid/tid");
	if (st & PERF_SAMPLE_TIME) {
		sid->time = get64(r, "time");
		sid->has_time = !hs_cursor_failed(&r->c);
	}
	if (st & PERF_SAMPLE_ID)
		sid->id = get64(r, "id");
	if (st & PERF_SAMPLE_STREAM_ID)
		sid->stream_id = get64(r, "stream id");
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;
		get32x2(r, &sid->cpu, &res, "cpu");
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		sid->id = get64(r, "identifier");
}

size_t hs_perf_sample_id_size(const struct hs_perf_layout *l)
{
	uint64_t st = l->sample_type;

	if (!l->sample_id_all)
		return 0;
	return 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
		    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

int hs_perf_id_pos_sample(const struct hs_perf_layout *l)
{
	uint64_t st = l->sample_type;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
	       !!(st & PERF_SAMPLE_ADDR);
}

int hs_perf_time_pos_sample(const struct hs_perf_layout *l)
{
	uint64_t st = l->sample_type;

	if (!(st & PERF_SAMPLE_TIME))
		return -1;
	return !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID);
}

int hs_perf_id_pos_trailer(const struct hs_perf_layout *l)
{
	uint64_t st = l->sample_type;

	if (!l->sample_id_all)
		return -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

static void parse_regs(struct reader *r, uint64_t mask, uint64_t *abi, uint32_t *nr, const void **regs,
		       const char *what)
{
	*abi = get64(r, what);
	if (*abi) {
		*nr = popcount64(mask);
		*regs = getbytes(r, (uint64_t)*nr * 8, what);
	}
}

static int parse_sample(struct reader *r, const struct hs_perf_layout *l, struct hs_perf_sample *s)
{
	uint64_t st = l->sample_type;

	if (st & ~HS_PERF_SAMPLE_KNOWN) {
		hs_error_at(r->err, r->c.origin, "unsupported sample_type bits 0x%llx",
				   (unsigned long long)(st & ~HS_PERF_SAMPLE_KNOWN));
		return -EOPNOTSUPP;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->sid.id = get64(r, "identifier");
	if (st & PERF_SAMPLE_IP)
		s->ip = get64(r, "ip");
	if (st & PERF_SAMPLE_TID)
		get32x2(r, &s->sid.pid, &s->sid.tid, "pid/tid");
	if (st & PERF_SAMPLE_TIME) {
		s->sid.time = get64(r, "time");
		s->sid.has_time = !hs_cursor_failed(&r->c);
	}
	if (st & PERF_SAMPLE_ADDR)
		s->addr = get64(r, "addr");
	if (st & PERF_SAMPLE_ID)
		s->sid.id = get64(r, "id");
	if (st & PERF_SAMPLE_STREAM_ID)
		s->sid.stream_id = get64(r, "stream id");
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;
		get32x2(r, &s->sid.cpu, &res, "cpu");
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = get64(r, "period");
	if (st & PERF_SAMPLE_READ) {
		bool ok;
		size_t n = read_format_size(l->read_format, &r->c, &ok);
		if (!ok) {
			hs_error_at(r->err, hs_cursor_offset(&r->c), "bad read_format group size");
			hs_cursor_fail(&r->c);
		}
		s->read = getbytes(r, n, "read values");
		s->read_size = n;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->nr_callchain = get64(r, "callchain size");
		if (s->nr_callchain > r->c.len / 8) {
			hs_error_at(r->err, hs_cursor_offset(&r->c) - 8,
					   "callchain of %llu entries in a %zu-byte record",
					   (unsigned long long)s->nr_callchain, r->c.len);
			hs_cursor_fail(&r->c);
		}
		s->callchain = getbytes(r, s->nr_callchain * 8, "callchain");
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t pad;
		s->raw_size = hs_cursor_u32(&r->c);
		if (hs_cursor_failed(&r->c))
			ended(r, "raw size");
		s->raw = getbytes(r, s->raw_size, "raw data");
		/* the u32 size plus the data are padded to a multiple of 8 */
		pad = (uint32_t)((8 - ((4 + (uint64_t)s->raw_size) & 7)) & 7);
		getbytes(r, pad, "raw padding");
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		s->nr_branches = get64(r, "branch stack size");
		s->branch_sample_type = l->branch_sample_type;
		if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = get64(r, "branch hw index");
		if (s->nr_branches > r->c.len / 24) {
			hs_error_at(r->err, hs_cursor_offset(&r->c),
					   "branch stack of %llu entries in a %zu-byte record",
					   (unsigned long long)s->nr_branches, r->c.len);
			hs_cursor_fail(&r->c);
		}
		s->branches = getbytes(r, s->nr_branches * 24, "branch stack");
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		parse_regs(r, l->sample_regs_user, &s->user_abi, &s->nr_user_regs, &s->user_regs, "user registers");
		s->user_regs_mask = l->sample_regs_user;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		s->stack_size = get64(r, "user stack size");
		if (s->stack_size) {
			s->stack = getbytes(r, s->stack_size, "user stack");
			s->stack_dyn_size = get64(r, "user stack dynamic size");
			if (s->stack_dyn_size > s->stack_size) {
				hs_error_at(r->err, hs_cursor_offset(&r->c) - 8,
						   "user stack dynamic size %llu over its copy of %llu",
						   (unsigned long long)s->stack_dyn_size, (unsigned long long)s->stack_size);
				hs_cursor_fail(&r->c);
			}
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = get64(r, "weight");
		if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
			s->weight = (uint32_t)w;
			s->weight_var2 = (uint16_t)(w >> 32);
			s->weight_var3 = (uint16_t)(w >> 48);
		} else {
			s->weight = w;
		}
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = get64(r, "data source");
	if (st & PERF_SAMPLE_TRANSACTION)
		s->transaction = get64(r, "transaction");
	if (st & PERF_SAMPLE_REGS_INTR)
		parse_regs(r, l->sample_regs_intr, &s->intr_abi, &s->nr_intr_regs, &s->intr_regs, "interrupt registers");
	if (st & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = get64(r, "physical address");
	if (st & PERF_SAMPLE_CGROUP)
		s->cgroup = get64(r, "cgroup");
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = get64(r, "data page size");
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = get64(r, "code page size");
	if (st & PERF_SAMPLE_AUX) {
		s->aux_size = get64(r, "aux size");
		s->aux = getbytes(r, s->aux_size, "aux data");
	}
	return hs_cursor_failed(&r->c) ? -EBADMSG : 0;
}

/* Non-sample records end with the sample_id trailer; parse it from its fixed size at the end. */
static int parse_trailer(struct reader *r, const struct hs_perf_layout *l, struct hs_perf_sample_id *sid)
{
	size_t n = hs_perf_sample_id_size(l);
	struct reader t;

	if (!n)
		return 0;
	if (n > r->c.len - 8) {
		hs_error_at(r->err, r->c.origin, "record of %zu bytes too small for its sample_id", r->c.len);
		return -EBADMSG;
	}
	t = *r;
	hs_cursor_seek(&t.c, r->c.len - n);
	parse_sid(&t, l->sample_type, sid);
	hs_cursor_limit(&r->c, r->c.len - n); /* the record's own fields end where the trailer starts */
	return hs_cursor_failed(&t.c) ? -EBADMSG : 0;
}

static const char *get_string(struct reader *r, const char *what)
{
	const char *s = hs_cursor_string(&r->c, NULL);

	if (!s)
		hs_error_at(r->err, hs_cursor_fail_offset(&r->c), "%s is not NUL-terminated", what);
	return s;
}

int hs_perf_event_parse(const void *rec, size_t size, const struct hs_perf_layout *l, uint64_t base,
			struct hs_perf_event *ret, struct hs_error *err)
{
	const struct perf_event_header *h = rec;
	struct reader r = {.err = err};
	struct hs_perf_event ev;
	int rc;

	memset(&ev, 0, sizeof(ev));
	ev.sid.pid = ev.sid.tid = UINT32_MAX;
	ev.sid.cpu = UINT32_MAX;
	if (size < sizeof(*h) || h->size != size) {
		hs_error_at(err, base, "record size %zu smaller than its header", size);
		return -EBADMSG;
	}
	hs_cursor_init(&r.c, rec, size);
	r.c.origin = base;
	hs_cursor_skip(&r.c, sizeof(*h));
	ev.type = h->type;
	ev.misc = h->misc;
	if (h->type == PERF_RECORD_SAMPLE) {
		ev.sample.sid = ev.sid;
		ev.sample.misc = h->misc;
		rc = parse_sample(&r, l, &ev.sample);
		if (rc)
			return rc;
		ev.sid = ev.sample.sid;
		*ret = ev;
		return 0;
	}
	if (h->type == HS_RECORD_RT_STACK || h->type == HS_RECORD_RESYNC) {
		/* hotstack's own: the time, pid and tid first */
		const unsigned char *b = getbytes(&r, 16, "record's time and thread");
		if (!b)
			return -EBADMSG;
		memcpy(&ev.sid.time, b, 8);
		memcpy(&ev.sid.pid, b + 8, 4);
		memcpy(&ev.sid.tid, b + 12, 4);
		ev.sid.has_time = h->type == HS_RECORD_RESYNC;
		ev.raw.data = (const unsigned char *)rec + sizeof(*h);
		ev.raw.size = size - sizeof(*h);
		*ret = ev;
		return 0;
	}
	if (h->type < PERF_RECORD_MAX && (rc = parse_trailer(&r, l, &ev.sid)))
		return rc;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct hs_perf_mmap *m = &ev.mmap;
		get32x2(&r, &m->pid, &m->tid, "mmap pid/tid");
		m->start = get64(&r, "mmap address");
		m->len = get64(&r, "mmap length");
		m->pgoff = get64(&r, "mmap offset");
		m->is_mmap2 = h->type == PERF_RECORD_MMAP2;
		m->data = !!(h->misc & PERF_RECORD_MISC_MMAP_DATA);
		if (m->is_mmap2) {
			const unsigned char *b = getbytes(&r, 24, "mmap2 identity");
			if (b && l->build_id && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
				m->build_id_size = b[0] > 20 ? 20 : b[0];
				memcpy(m->build_id, b + 4, 20);
			} else if (b) {
				memcpy(&m->maj, b, 4);
				memcpy(&m->min, b + 4, 4);
				memcpy(&m->ino, b + 8, 8);
				memcpy(&m->ino_generation, b + 16, 8);
			}
			get32x2(&r, &m->prot, &m->flags, "mmap2 prot/flags");
		}
		m->filename = get_string(&r, "mmap file name");
		if (m->len && m->start + m->len < m->start) {
			hs_error_at(err, base, "mapping wraps around the address space");
			return -EBADMSG;
		}
		break;
	}
	case PERF_RECORD_COMM:
		get32x2(&r, &ev.comm.pid, &ev.comm.tid, "comm pid/tid");
		ev.comm.comm = get_string(&r, "comm");
		ev.comm.exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		get32x2(&r, &ev.task.pid, &ev.task.ppid, "task pid");
		get32x2(&r, &ev.task.tid, &ev.task.ptid, "task tid");
		ev.task.time = get64(&r, "task time");
		break;
	case PERF_RECORD_LOST:
		ev.lost.id = get64(&r, "lost id");
		ev.lost.lost = get64(&r, "lost count");
		break;
	case PERF_RECORD_LOST_SAMPLES:
		ev.lost.lost = get64(&r, "lost samples count");
		break;
	default:
		break;
	}
	if (hs_cursor_failed(&r.c))
		return -EBADMSG;
	*ret = ev;
	return 0;
}
