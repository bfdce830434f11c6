/* Per-thread timelines of a profile for the viewers that draw one (the Firefox Profiler, Chrome
 * trace viewers): each thread's samples in time order, each with the span of time it stands
 * for, on-CPU samples apart from off-CPU periods. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"

/* The longest a span is taken to be (a year): what values from a file can ask for stays summable. */
#define MAX_SPAN ((uint64_t)365 * 24 * 3600 * 1000000000)

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

int hs_time_order_cmp(const void *a, const void *b)
{
	const struct hs_time_order *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct hs_tl_thread *x = a, *y = b;
	uint64_t fx = x->spans.n ? x->spans.v[0].start : 0, fy = y->spans.n ? y->spans.v[0].start : 0;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((x->tid == x->pid) != (y->tid == y->pid))
		return x->tid == x->pid ? -1 : 1;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int64_t type_ns(const struct hs_profile *p, size_t i)
{
	return hs_unit_ns(hs_profile_str(p, p->types.v[i].unit));
}

void hs_timeline_build(struct hs_timeline *t, const struct hs_profile *p, const struct hs_output_opts *o)
{
	HS_VEC(struct hs_time_order) order = {0};
	struct hs_u64map ix = {0};
	struct hs_thread_names names;
	int64_t pns = hs_unit_ns(hs_profile_str(p, p->period_type.unit));
	uint64_t tmin = UINT64_MAX;

	*t = (struct hs_timeline){.off_ix = -1, .cpu_ix = -1};
	t->timed = hs_profile_has_time(p);
	t->interval = pns > 0 && p->period > 0 && p->period <= INT64_MAX / pns ? (uint64_t)(p->period * pns) : 1000000;
	t->off_ix = hs_profile_find_type(p, "off-cpu");
	t->vi = hs_output_value_index(p, o);
	if (t->off_ix >= 0 && t->vi == (uint32_t)t->off_ix)
		t->vi = 0;
	/* the CPU time of a sample: "cpu" where recorded, else the wall time of on-CPU samples */
	t->cpu_ix = hs_profile_find_type(p, "cpu");
	if (t->cpu_ix < 0 || type_ns(p, (size_t)t->cpu_ix) <= 0)
		t->cpu_ix = hs_profile_find_type(p, "wall");
	if (t->cpu_ix >= 0 && type_ns(p, (size_t)t->cpu_ix) <= 0)
		t->cpu_ix = -1;

	hs_thread_names_init(&names, p);
	for (size_t i = 0; i < p->samples.n && p->types.n; i++) {
		const int64_t *v = hs_profile_sample_values(p, (uint32_t)i);
		uint64_t tm = p->samples.v[i].time;

		if (v[t->vi] <= 0 && (t->off_ix < 0 || v[t->off_ix] <= 0))
			continue;
		if (t->timed && tm && tm < tmin)
			tmin = tm;
		hs_vec_push(&order, ((struct hs_time_order){t->timed ? tm : i, (uint32_t)i}));
	}
	t->t0 = tmin == UINT64_MAX ? 0 : tmin;
	if (order.n)
		qsort(order.v, order.n, sizeof(*order.v), hs_time_order_cmp);

	for (size_t i = 0; i < order.n; i++) {
		const struct hs_sample *s = &p->samples.v[order.v[i].sample];
		const int64_t *v = hs_profile_sample_values(p, order.v[i].sample);
		uint64_t key = s->tid >= 0 ? (uint64_t)(uint32_t)s->pid << 32 | (uint32_t)s->tid : (uint64_t)1 << 63 | s->comm;
		bool off = t->off_ix >= 0 && v[t->off_ix] > 0;
		struct hs_tl_span sp = {order.v[i].sample, off, 0, 0};
		struct hs_tl_thread *th;
		uint64_t ti, len;

		if (!hs_u64map_get(&ix, key, &ti)) {
			uint32_t name = hs_thread_name(&names, p, s);
			ti = t->threads.n;
			hs_vec_push(&t->threads, ((struct hs_tl_thread){s->pid, s->tid, name, name, 0, {0}}));
			hs_u64map_put(&ix, key, ti);
		}
		th = &t->threads.v[ti];
		if (off)
			len = (uint64_t)v[t->off_ix];
		else if (!t->timed && type_ns(p, t->vi) > 0)
			len = mul_sat((uint64_t)v[t->vi], (uint64_t)type_ns(p, t->vi));
		else
			len = t->timed ? t->interval : mul_sat((uint64_t)v[t->vi], t->interval);
		len = HS_MIN(len, MAX_SPAN);
		if (!off)
			th->weight = hs_add_sat(th->weight, v[t->vi]);
		if (t->timed)
			sp.start = s->time > t->t0 ? s->time - t->t0 : 0;
		else
			sp.start = th->spans.n ? th->spans.v[th->spans.n - 1].end : 0;
		sp.end = sp.start > UINT64_MAX - len ? UINT64_MAX : sp.start + len;
		/* the previous span ends where this one starts, at the latest */
		if (th->spans.n && th->spans.v[th->spans.n - 1].end > sp.start)
			th->spans.v[th->spans.n - 1].end = HS_MAX(sp.start, th->spans.v[th->spans.n - 1].start);
		hs_vec_push(&th->spans, sp);
	}
	for (size_t i = 0; i < t->threads.n; i++) {
		struct hs_tl_thread *th = &t->threads.v[i];
		if (th->spans.n && th->spans.v[th->spans.n - 1].end > t->end)
			t->end = th->spans.v[th->spans.n - 1].end;
	}
	if (t->threads.n)
		qsort(t->threads.v, t->threads.n, sizeof(*t->threads.v), thread_cmp);
	/* a process is named after its main thread (sorted first), else its first thread */
	for (size_t i = 1; i < t->threads.n; i++)
		if (t->threads.v[i].pid >= 0 && t->threads.v[i].pid == t->threads.v[i - 1].pid)
			t->threads.v[i].process = t->threads.v[i - 1].process;
	hs_vec_free(&order);
	hs_u64map_release(&ix);
	hs_thread_names_release(&names);
}

void hs_timeline_release(struct hs_timeline *t)
{
	for (size_t i = 0; i < t->threads.n; i++)
		hs_vec_free(&t->threads.v[i].spans);
	hs_vec_free(&t->threads);
}

void hs_tl_add_time(struct hs_strbuf *sb, uint64_t ns, uint64_t unit_ns)
{
	char frac[24];
	size_t n = 0;
	uint64_t rest = ns % unit_ns;

	hs_strbuf_addf(sb, "%" PRIu64, ns / unit_ns);
	if (!rest)
		return;
	/* the fraction's digits, most significant first, without the trailing zeros */
	for (uint64_t u = unit_ns / 10; u && n < sizeof(frac) - 1; u /= 10) {
		frac[n++] = (char)('0' + rest / u);
		rest %= u;
	}
	while (n && frac[n - 1] == '0')
		n--;
	hs_strbuf_addc(sb, '.');
	hs_strbuf_add(sb, frac, n);
}

bool hs_tl_gzipped(const struct hs_outfile *out)
{
	size_t n = out->path ? strlen(out->path) : 0;
	return n > 3 && !strcmp(out->path + n - 3, ".gz");
}
