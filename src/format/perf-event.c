/* Parsers for perf_event records. Layouts follow linux/perf_event.h and the order in which
 * kernel/events/core.c (perf_output_sample) writes sample fields, which differs from the
 * header's comment for CGROUP, the page sizes and AUX. */
#include "perf-event.h"

#include <errno.h>
#include <string.h>

struct cursor {
	const unsigned char *p;
	size_t off, size;
	uint64_t base;
	struct hs_error *err;
	bool bad;
};

static bool need(struct cursor *c, size_t n, const char *what)
{
	if (c->bad)
		return false;
	if (n > c->size - c->off) {
		hs_error_at(c->err, c->base + c->off, "%s runs past the end of a %zu-byte record", what,
				   c->size);
		c->bad = true;
		return false;
	}
	return true;
}

static uint64_t get64(struct cursor *c, const char *what)
{
	uint64_t v = 0;
	if (need(c, 8, what)) {
		memcpy(&v, c->p + c->off, 8);
		c->off += 8;
	}
	return v;
}

static void get32x2(struct cursor *c, uint32_t *a, uint32_t *b, const char *what)
{
	if (need(c, 8, what)) {
		memcpy(a, c->p + c->off, 4);
		memcpy(b, c->p + c->off + 4, 4);
		c->off += 8;
	}
}

static const void *getbytes(struct cursor *c, uint64_t n, const char *what)
{
	const void *r;
	if (n > c->size || !need(c, (size_t)n, what))
		return NULL;
	r = c->p + c->off;
	c->off += (size_t)n;
	return r;
}

static uint32_t popcount64(uint64_t v)
{
	return (uint32_t)__builtin_popcountll(v);
}

static size_t read_format_size(uint64_t rf, const struct cursor *c, bool *ok)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t fixed = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr;

	*ok = true;
	if (!(rf & PERF_FORMAT_GROUP))
		return (per + fixed) * 8;
	if (c->size - c->off < 8) {
		*ok = false;
		return 0;
	}
	memcpy(&nr, c->p + c->off, 8);
	if (nr > 4096) {
		*ok = false;
		return 0;
	}
	return (1 + fixed + (size_t)nr * per) * 8;
}

static void parse_sid(struct cursor *c, uint64_t st, struct hs_perf_sample_id *sid)
{
	if (st & PERF_SAMPLE_TID)
		get32x2(c, &sid->pid, &sid->tid, "pid/tid");
	if (st & PERF_SAMPLE_TIME) {
		sid->time = get64(c, "time");
		sid->has_time = !c->bad;
	}
	if (st & PERF_SAMPLE_ID)
		sid->id = get64(c, "id");
	if (st & PERF_SAMPLE_STREAM_ID)
		sid->stream_id = get64(c, "stream id");
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;
		get32x2(c, &sid->cpu, &res, "cpu");
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		sid->id = get64(c, "identifier");
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

static void parse_regs(struct cursor *c, uint64_t mask, uint64_t *abi, uint32_t *nr, const void **regs,
		       const char *what)
{
	*abi = get64(c, what);
	if (*abi) {
		*nr = popcount64(mask);
		*regs = getbytes(c, (uint64_t)*nr * 8, what);
	}
}

static int parse_sample(struct cursor *c, const struct hs_perf_layout *l, struct hs_perf_sample *s)
{
	uint64_t st = l->sample_type;

	if (st & ~HS_PERF_SAMPLE_KNOWN) {
		hs_error_at(c->err, c->base, "unsupported sample_type bits 0x%llx",
				   (unsigned long long)(st & ~HS_PERF_SAMPLE_KNOWN));
		return -EOPNOTSUPP;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->sid.id = get64(c, "identifier");
	if (st & PERF_SAMPLE_IP)
		s->ip = get64(c, "ip");
	if (st & PERF_SAMPLE_TID)
		get32x2(c, &s->sid.pid, &s->sid.tid, "pid/tid");
	if (st & PERF_SAMPLE_TIME) {
		s->sid.time = get64(c, "time");
		s->sid.has_time = !c->bad;
	}
	if (st & PERF_SAMPLE_ADDR)
		s->addr = get64(c, "addr");
	if (st & PERF_SAMPLE_ID)
		s->sid.id = get64(c, "id");
	if (st & PERF_SAMPLE_STREAM_ID)
		s->sid.stream_id = get64(c, "stream id");
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;
		get32x2(c, &s->sid.cpu, &res, "cpu");
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = get64(c, "period");
	if (st & PERF_SAMPLE_READ) {
		bool ok;
		size_t n = read_format_size(l->read_format, c, &ok);
		if (!ok) {
			hs_error_at(c->err, c->base + c->off, "bad read_format group size");
			c->bad = true;
		}
		s->read = getbytes(c, n, "read values");
		s->read_size = n;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		s->nr_callchain = get64(c, "callchain size");
		if (s->nr_callchain > c->size / 8) {
			hs_error_at(c->err, c->base + c->off - 8, "callchain of %llu entries in a %zu-byte record",
					   (unsigned long long)s->nr_callchain, c->size);
			c->bad = true;
		}
		s->callchain = getbytes(c, s->nr_callchain * 8, "callchain");
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t pad;
		if (need(c, 4, "raw size")) {
			memcpy(&s->raw_size, c->p + c->off, 4);
			c->off += 4;
		}
		s->raw = getbytes(c, s->raw_size, "raw data");
		/* the u32 size plus the data are padded to a multiple of 8 */
		pad = (uint32_t)((8 - ((4 + (uint64_t)s->raw_size) & 7)) & 7);
		getbytes(c, pad, "raw padding");
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		s->nr_branches = get64(c, "branch stack size");
		s->branch_sample_type = l->branch_sample_type;
		if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = get64(c, "branch hw index");
		if (s->nr_branches > c->size / 24) {
			hs_error_at(c->err, c->base + c->off, "branch stack of %llu entries in a %zu-byte record",
					   (unsigned long long)s->nr_branches, c->size);
			c->bad = true;
		}
		s->branches = getbytes(c, s->nr_branches * 24, "branch stack");
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		parse_regs(c, l->sample_regs_user, &s->user_abi, &s->nr_user_regs, &s->user_regs, "user registers");
		s->user_regs_mask = l->sample_regs_user;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		s->stack_size = get64(c, "user stack size");
		if (s->stack_size) {
			s->stack = getbytes(c, s->stack_size, "user stack");
			s->stack_dyn_size = get64(c, "user stack dynamic size");
			if (s->stack_dyn_size > s->stack_size) {
				hs_error_at(c->err, c->base + c->off - 8, "user stack dynamic size %llu over its copy of %llu",
						   (unsigned long long)s->stack_dyn_size, (unsigned long long)s->stack_size);
				c->bad = true;
			}
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = get64(c, "weight");
		if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
			s->weight = (uint32_t)w;
			s->weight_var2 = (uint16_t)(w >> 32);
			s->weight_var3 = (uint16_t)(w >> 48);
		} else {
			s->weight = w;
		}
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = get64(c, "data source");
	if (st & PERF_SAMPLE_TRANSACTION)
		s->transaction = get64(c, "transaction");
	if (st & PERF_SAMPLE_REGS_INTR)
		parse_regs(c, l->sample_regs_intr, &s->intr_abi, &s->nr_intr_regs, &s->intr_regs, "interrupt registers");
	if (st & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = get64(c, "physical address");
	if (st & PERF_SAMPLE_CGROUP)
		s->cgroup = get64(c, "cgroup");
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = get64(c, "data page size");
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = get64(c, "code page size");
	if (st & PERF_SAMPLE_AUX) {
		s->aux_size = get64(c, "aux size");
		s->aux = getbytes(c, s->aux_size, "aux data");
	}
	return c->bad ? -EBADMSG : 0;
}

/* Non-sample records end with the sample_id trailer; parse it from its fixed size at the end. */
static int parse_trailer(struct cursor *c, const struct hs_perf_layout *l, struct hs_perf_sample_id *sid)
{
	size_t n = hs_perf_sample_id_size(l);
	struct cursor t;

	if (!n)
		return 0;
	if (n > c->size - 8) {
		hs_error_at(c->err, c->base, "record of %zu bytes too small for its sample_id", c->size);
		return -EBADMSG;
	}
	t = *c;
	t.off = c->size - n;
	parse_sid(&t, l->sample_type, sid);
	c->size -= n; /* the record's own fields end where the trailer starts */
	return t.bad ? -EBADMSG : 0;
}

static const char *get_string(struct cursor *c, const char *what)
{
	const char *s = (const char *)c->p + c->off;
	size_t room = c->size - c->off;

	if (c->bad)
		return NULL;
	if (!memchr(s, '\0', room)) {
		hs_error_at(c->err, c->base + c->off, "%s is not NUL-terminated", what);
		c->bad = true;
		return NULL;
	}
	return s;
}

int hs_perf_event_parse(const void *rec, size_t size, const struct hs_perf_layout *l, uint64_t base,
			struct hs_perf_event *ret, struct hs_error *err)
{
	const struct perf_event_header *h = rec;
	struct cursor c = {rec, sizeof(*h), size, base, err, false};
	struct hs_perf_event ev;
	int rc;

	memset(&ev, 0, sizeof(ev));
	ev.sid.pid = ev.sid.tid = UINT32_MAX;
	ev.sid.cpu = UINT32_MAX;
	if (size < sizeof(*h) || h->size != size) {
		hs_error_at(err, base, "record size %zu smaller than its header", size);
		return -EBADMSG;
	}
	ev.type = h->type;
	ev.misc = h->misc;
	if (h->type == PERF_RECORD_SAMPLE) {
		ev.sample.sid = ev.sid;
		ev.sample.misc = h->misc;
		rc = parse_sample(&c, l, &ev.sample);
		if (rc)
			return rc;
		ev.sid = ev.sample.sid;
		*ret = ev;
		return 0;
	}
	if (h->type < PERF_RECORD_MAX && (rc = parse_trailer(&c, l, &ev.sid)))
		return rc;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct hs_perf_mmap *m = &ev.mmap;
		get32x2(&c, &m->pid, &m->tid, "mmap pid/tid");
		m->start = get64(&c, "mmap address");
		m->len = get64(&c, "mmap length");
		m->pgoff = get64(&c, "mmap offset");
		m->is_mmap2 = h->type == PERF_RECORD_MMAP2;
		m->data = !!(h->misc & PERF_RECORD_MISC_MMAP_DATA);
		if (m->is_mmap2) {
			const unsigned char *b = getbytes(&c, 24, "mmap2 identity");
			if (b && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
				m->build_id_size = b[0] > 20 ? 20 : b[0];
				memcpy(m->build_id, b + 4, 20);
			} else if (b) {
				memcpy(&m->maj, b, 4);
				memcpy(&m->min, b + 4, 4);
				memcpy(&m->ino, b + 8, 8);
				memcpy(&m->ino_generation, b + 16, 8);
			}
			get32x2(&c, &m->prot, &m->flags, "mmap2 prot/flags");
		}
		m->filename = get_string(&c, "mmap file name");
		if (m->len && m->start + m->len < m->start) {
			hs_error_at(err, base, "mapping wraps around the address space");
			return -EBADMSG;
		}
		break;
	}
	case PERF_RECORD_COMM:
		get32x2(&c, &ev.comm.pid, &ev.comm.tid, "comm pid/tid");
		ev.comm.comm = get_string(&c, "comm");
		ev.comm.exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		get32x2(&c, &ev.task.pid, &ev.task.ppid, "task pid");
		get32x2(&c, &ev.task.tid, &ev.task.ptid, "task tid");
		ev.task.time = get64(&c, "task time");
		break;
	case PERF_RECORD_LOST:
		ev.lost.id = get64(&c, "lost id");
		ev.lost.lost = get64(&c, "lost count");
		break;
	case PERF_RECORD_LOST_SAMPLES:
		ev.lost.lost = get64(&c, "lost samples count");
		break;
	default:
		break;
	}
	if (c.bad)
		return -EBADMSG;
	*ret = ev;
	return 0;
}
