/* speedscope's JSON format (https://www.speedscope.app/file-format-schema.json): named after
 * the recorded command, weighed in time where the samples have it; one "sampled" profile per
 * thread, its samples in time order where the profile kept timestamps (in the
 * profile's order otherwise), each a list of indices into one shared frame table, root first,
 * with its value as the weight. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

struct frame_key {
	const struct hs_strbuf *keys; /* the frames' identities, in one buffer */
	const size_t *offs;
	const char *want;
	size_t len;
};

static bool frame_eq(const void *ctx, uint32_t id)
{
	const struct frame_key *k = ctx;
	return k->offs[id + 1] - k->offs[id] == k->len && !memcmp(k->keys->buf + k->offs[id], k->want, k->len);
}

struct thread {
	int32_t pid, tid;
	uint32_t comm;
	uint64_t first; /* time of its first sample (or its first sample's index) */
	int64_t total;
	HS_VEC(uint32_t) samples;
};

static int thread_cmp(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* speedscope's units; values in anything else are plain numbers. */
static const char *unit_of(const struct hs_profile *p, uint32_t vi)
{
	static const char *const units[] = {"nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"};
	const char *u = p->types.n ? hs_profile_str(p, p->types.v[vi].unit) : "";

	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i]))
			return units[i];
	return "none";
}

int hs_write_speedscope(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	/* weighed in time where samples have it: what speedscope's time axis is for (the default
	 * of counting samples would show "none") */
	uint32_t vi = o->value_index > 0 ? hs_output_value_index(p, o) : hs_profile_time_value(p, 0);
	bool timed = hs_profile_has_time(p);
	HS_VEC(struct hs_time_order) order = {0};
	HS_VEC(struct thread) threads = {0};
	HS_VEC(size_t) offs = {0};       /* frame i's identity is keys[offs[i] .. offs[i + 1]] */
	HS_VEC(uint32_t) frame_of = {0}; /* per stack frame of the sample being written */
	struct hs_strbuf keys = {0}, sb = {0}, label = {0};
	struct hs_u64map thread_ix = {0}; /* pid << 32 | tid, or the comm for threads without ids */
	struct hs_index frame_ix = {0};
	struct hs_thread_names names;
	struct hs_frame *frames = NULL;
	size_t fcap = 0, heaviest = 0;
	const char *title;

	/* samples in time order, grouped by thread */
	hs_thread_names_init(&names, p);
	for (size_t i = 0; i < p->samples.n; i++)
		if (p->types.n && hs_profile_sample_values(p, (uint32_t)i)[vi] > 0)
			hs_vec_push(&order, ((struct hs_time_order){timed ? p->samples.v[i].time : i, (uint32_t)i}));
	if (order.n)
		qsort(order.v, order.n, sizeof(*order.v), hs_time_order_cmp);
	for (size_t i = 0; i < order.n; i++) {
		const struct hs_sample *s = &p->samples.v[order.v[i].sample];
		uint64_t key = s->tid >= 0 ? (uint64_t)(uint32_t)s->pid << 32 | (uint32_t)s->tid : (uint64_t)1 << 63 | s->comm;
		uint64_t t;

		if (!hs_u64map_get(&thread_ix, key, &t)) {
			struct thread th = {s->pid, s->tid, hs_thread_name(&names, p, s), order.v[i].time, 0, {0}};
			t = threads.n;
			hs_vec_push(&threads, th);
			hs_u64map_put(&thread_ix, key, t);
		}
		hs_vec_push(&threads.v[t].samples, order.v[i].sample);
		threads.v[t].total = hs_add_sat(threads.v[t].total, hs_profile_sample_values(p, order.v[i].sample)[vi]);
	}
	if (threads.n)
		qsort(threads.v, threads.n, sizeof(*threads.v), thread_cmp);

	hs_vec_push(&offs, 0);
	hs_outfile_puts(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"profiles\":[");
	for (size_t ti = 0; ti < threads.n; ti++) {
		const struct thread *th = &threads.v[ti];
		const char *comm = hs_profile_str(p, th->comm);

		if (th->total > threads.v[heaviest].total)
			heaviest = ti;
		hs_strbuf_reset(&sb);
		hs_strbuf_adds(&sb, ti ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":");
		hs_strbuf_reset(&label);
		hs_strbuf_adds(&label, *comm ? comm : "[unknown]");
		if (th->tid >= 0)
			hs_strbuf_addf(&label, " (%d/%d)", (int)th->pid, (int)th->tid);
		hs_json_add(&sb, hs_strbuf_str(&label));
		hs_strbuf_addf(&sb, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%lld,\"samples\":[", unit_of(p, vi),
			       (long long)th->total);
		hs_outfile_write(out, sb.buf, sb.len);
		for (size_t k = 0; k < th->samples.n; k++) {
			size_t nf = hs_stack_frames(p, p->samples.v[th->samples.v[k]].stack, &frames, &fcap);

			frame_of.n = 0;
			for (size_t f = 0; f < nf; f++) {
				struct frame_key fk;
				size_t start = keys.len;
				uint64_t h;
				uint32_t id;

				/* a frame is its name, source file and line: what speedscope shows */
				hs_strbuf_adds(&keys, frames[f].name);
				hs_strbuf_addc(&keys, '\0');
				hs_strbuf_adds(&keys, *frames[f].file ? frames[f].file : frames[f].module);
				hs_strbuf_addf(&keys, "%c%lld", '\0', (long long)frames[f].line);
				fk.keys = &keys;
				fk.offs = offs.v;
				fk.want = keys.buf + start;
				fk.len = keys.len - start;
				h = hs_hash_bytes(fk.want, fk.len, 0);
				id = hs_index_find(&frame_ix, h, frame_eq, &fk);
				if (id == UINT32_MAX) {
					id = (uint32_t)offs.n - 1;
					hs_vec_push(&offs, keys.len);
					hs_index_insert(&frame_ix, h, id);
				} else {
					keys.len = start;
				}
				hs_vec_push(&frame_of, id);
			}
			hs_strbuf_reset(&sb);
			hs_strbuf_adds(&sb, k ? ",[" : "[");
			for (size_t f = 0; f < frame_of.n; f++)
				hs_strbuf_addf(&sb, f ? ",%u" : "%u", frame_of.v[f]);
			hs_strbuf_addc(&sb, ']');
			hs_outfile_write(out, sb.buf, sb.len);
		}
		hs_outfile_puts(out, "],\"weights\":[");
		for (size_t k = 0; k < th->samples.n; k++) {
			int64_t v = hs_profile_sample_values(p, th->samples.v[k])[vi];
			hs_outfile_printf(out, k ? ",%lld" : "%lld", (long long)v);
		}
		hs_outfile_puts(out, "]}");
	}

	hs_outfile_puts(out, "],\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i + 1 < offs.n; i++) {
		const char *name = keys.buf + offs.v[i];
		const char *file = name + strlen(name) + 1;
		long long line = atoll(file + strlen(file) + 1);

		hs_strbuf_reset(&sb);
		hs_strbuf_adds(&sb, i ? ",\n{\"name\":" : "\n{\"name\":");
		hs_json_add(&sb, name);
		if (*file) {
			hs_strbuf_adds(&sb, ",\"file\":");
			hs_json_add(&sb, file);
		}
		if (line > 0)
			hs_strbuf_addf(&sb, ",\"line\":%lld", line);
		hs_strbuf_addc(&sb, '}');
		hs_outfile_write(out, sb.buf, sb.len);
	}
	hs_strbuf_reset(&sb);
	hs_strbuf_adds(&sb, "]},\n\"name\":");
	hs_strbuf_reset(&label);
	title = o->title ? o->title : hs_profile_command(p, &label);
	hs_json_add(&sb, title ? title : "hotstack profile");
	hs_strbuf_addf(&sb, ",\"activeProfileIndex\":%zu,\"exporter\":\"hotstack %s\"}\n", heaviest, HOTSTACK_VERSION);
	hs_outfile_write(out, sb.buf, sb.len);

	for (size_t i = 0; i < threads.n; i++)
		hs_vec_free(&threads.v[i].samples);
	hs_vec_free(&threads);
	hs_vec_free(&order);
	hs_vec_free(&offs);
	hs_vec_free(&frame_of);
	hs_strbuf_release(&keys);
	hs_strbuf_release(&sb);
	hs_strbuf_release(&label);
	hs_u64map_release(&thread_ix);
	hs_thread_names_release(&names);
	hs_index_release(&frame_ix);
	free(frames);
	return out->err ? -out->err : 0;
}
