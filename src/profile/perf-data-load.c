/* perf.data to profile. */
#include "perf-data-load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "format/perf-data.h"
#include "model/dso-file.h"
#include "profile/builder.h"
#include "format/queue.h"
#include "util/strbuf.h"

void hs_perf_data_load_info_release(struct hs_perf_data_load_info *info)
{
	if (!info)
		return;
	for (size_t i = 0; i < info->mismatched.n; i++)
		free(info->mismatched.v[i]);
	hs_vec_free(&info->mismatched);
	for (size_t i = 0; i < info->jit_warnings.n; i++)
		free(info->jit_warnings.v[i]);
	hs_vec_free(&info->jit_warnings);
	free(info->kernel_note);
	free(info->cmdline);
	memset(info, 0, sizeof(*info));
}

struct loader {
	struct hs_perf_data d;
	struct hs_builder b;
	struct hs_queue q;
	struct hs_error perr;
	uint64_t bad_records;
	uint64_t queue_flushes;
	HS_VEC(uint32_t) evmap; /* attr index -> builder event index */
};

/* The build-id the recording's header gives for a file path (the latest entry wins). */
static size_t header_build_id(void *ctx, const char *path, uint8_t *buf)
{
	const struct hs_perf_data *d = ctx;

	for (size_t i = d->build_ids.n; i-- > 0;) {
		const struct hs_perf_build_id *b = &d->build_ids.v[i];
		if (!b->kernel && !strcmp(b->filename, path)) {
			memcpy(buf, b->build_id, b->size);
			return b->size;
		}
	}
	return 0;
}

static void hex(char *out, const uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = '\0';
}

/* Kernel symbols of the kernel that was recorded: the running one's if it is the same kernel,
 * else a copy perf kept in its build-id cache, else none (frames show [kernel.kallsyms]). */
static char *choose_kallsyms(const struct hs_perf_data *d, char **note, bool *is_running)
{
	const struct hs_perf_build_id *kb = NULL;
	uint8_t running[20];
	size_t rn = hs_running_kernel_build_id(running, sizeof(running));
	struct utsname u;
	char idhex[41], path[4096];
	const char *home = getenv("HOME");

	for (size_t i = 0; i < d->build_ids.n; i++)
		if (d->build_ids.v[i].kernel && !strcmp(d->build_ids.v[i].filename, "[kernel.kallsyms]"))
			kb = &d->build_ids.v[i];
	if (kb) {
		/* perf record keeps a copy of kallsyms as they were during the recording (module
		 * addresses included) in its build-id cache: the best source, and a file reads in a
		 * few milliseconds where /proc/kallsyms costs the kernel tens */
		hex(idhex, kb->build_id, kb->size);
		if (home) {
			snprintf(path, sizeof(path), "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, idhex);
			/* of this kernel: perf keeps the copy it made first, without the BPF programs
			 * loaded since, which the kernel's own can name */
			*is_running = rn && rn == kb->size && !memcmp(running, kb->build_id, rn);
			if (access(path, R_OK) == 0)
				return hs_xstrdup(path);
		}
		if (rn && rn == kb->size && !memcmp(running, kb->build_id, rn))
			return NULL; /* this kernel: /proc/kallsyms */
		*note = hs_xstrdup("recorded on another kernel (build-id differs) and perf's build-id cache has no "
				   "copy of its symbols");
		return hs_xstrdup("");
	}
	if (d->osrelease && uname(&u) == 0 && strcmp(u.release, d->osrelease)) {
		struct hs_strbuf sb = {0};
		hs_strbuf_addf(&sb, "recorded on kernel %s, this is %s", d->osrelease, u.release);
		*note = hs_strbuf_detach(&sb);
		return hs_xstrdup("");
	}
	return NULL;
}

static bool is_time_event(const struct hs_perf_data_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK || a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* perf names events with modifiers ("cpu-clock:pppH"): the profile uses the bare name. */
static char *bare_name(const char *name)
{
	size_t n = strcspn(name, ":");
	return hs_xstrndup(name, n ? n : strlen(name));
}

static void hand_on(struct loader *l, const struct perf_event_header *h)
{
	struct hs_perf_event ev;
	int attr;
	/* the queue keeps only the bytes: the event is found again from its id */
	const struct hs_perf_layout *layout = hs_perf_data_record_layout(&l->d, h, &attr);

	if (attr < 0)
		return;
	if (hs_perf_event_parse(h, h->size, layout, 0, &ev, &l->perr)) {
		l->bad_records++;
		return;
	}
	/* samples of events added after the start (pipe mode) find their builder event here */
	while (l->evmap.n < l->d.attrs.n) {
		const struct hs_perf_data_attr *a = &l->d.attrs.v[l->evmap.n];
		char *name = bare_name(a->name ? a->name : "events");
		hs_vec_push(&l->evmap, hs_builder_add_event(&l->b, name, is_time_event(a)));
		free(name);
	}
	hs_builder_event_of(&l->b, &ev, l->evmap.v[attr]);
}

static void flush(struct loader *l, uint64_t limit)
{
	struct hs_queue_item it;

	while (hs_queue_pop(&l->q, limit, &it)) {
		hand_on(l, it.rec);
		hs_queue_item_release(&it);
	}
}

/* The time of a record, from its event's layout. */
static bool record_time(struct loader *l, const struct hs_perf_data_rec *r, uint64_t *ret)
{
	struct hs_perf_event ev;
	struct hs_error e = {0};

	if (r->attr < 0 || hs_perf_event_parse(r->h, r->h->size, hs_perf_data_layout(&l->d, r->attr), 0, &ev, &e) ||
	    !ev.sid.has_time)
		return false;
	*ret = ev.sid.time;
	return true;
}

int hs_perf_data_load(const void *buf, size_t len, const struct hs_perf_data_load_opts *opts, struct hs_profile **ret,
		      struct hs_perf_data_load_info *info, struct hs_error *err)
{
	struct loader *l = hs_xcalloc(1, sizeof(*l));
	struct hs_builder_opts bo = {0};
	struct hs_perf_data_rec r;
	char *kallsyms, *note = NULL;
	uint64_t last_time = 0, records = 0;
	int rc;

	rc = hs_perf_data_open(&l->d, buf, len, err);
	if (rc) {
		hs_perf_data_close(&l->d);
		free(l);
		return rc;
	}
	kallsyms = choose_kallsyms(&l->d, &note, &bo.kallsyms_running);
	bo.unwind = HS_UNWIND_AUTO;
	bo.kernel = !(opts && opts->no_kernel);
	bo.user = true;
	bo.keep_time = opts && opts->keep_time;
	bo.no_demangle = opts && opts->no_demangle;
	bo.no_inline = opts && opts->no_inline;
	bo.prefetch_dwarf = !bo.no_inline;
	bo.symfs = opts ? opts->symfs : NULL;
	bo.kallsyms = kallsyms;
	bo.build_id = header_build_id;
	bo.build_id_ctx = &l->d;
	bo.max_stack = 127;
	/* JIT code: jitdump files read whole when their mapping is seen, perf maps at the end;
	 * jitdump times match samples' when perf recorded with -k CLOCK_MONOTONIC */
	bo.jit_timed = l->d.attrs.n > 0;
	for (size_t i = 0; i < l->d.attrs.n; i++)
		if (!l->d.attrs.v[i].attr.use_clockid || l->d.attrs.v[i].attr.clockid != CLOCK_MONOTONIC)
			bo.jit_timed = false;
	hs_builder_init(&l->b, &bo);
	/* compressed records, DWARF unwinding and inline frames make many frames of few bytes */
	hs_profile_bound_frames(l->b.p, len);

	hs_queue_init(&l->q);
	while ((rc = hs_perf_data_next(&l->d, &r, err)) == 1) {
		uint64_t t;
		records++;
		if (r.h->type == HS_PERF_RECORD_FINISHED_ROUND) {
			flush(l, hs_queue_round(&l->q));
			continue;
		}
		if (r.h->type >= 64)
			continue; /* perf's own records: the reader took what they say */
		if (record_time(l, &r, &t))
			last_time = t;
		/* a sample in the kernel: kernel symbols will be needed; read them meanwhile */
		if (r.h->type == PERF_RECORD_SAMPLE && bo.kernel &&
		    (r.h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			hs_symbolizer_prefetch_kernel(&l->b.sym);
		/* records in the mapped file stay where they are; decompressed ones are copied */
		if ((const uint8_t *)r.h >= (const uint8_t *)buf && (const uint8_t *)r.h < (const uint8_t *)buf + len)
			hs_queue_push_borrowed(&l->q, r.h, last_time);
		else
			hs_queue_push(&l->q, r.h, last_time);
		if (l->q.heap.n > HS_PERF_DATA_LOAD_MAX_QUEUED || l->q.bytes > HS_PERF_DATA_LOAD_MAX_QUEUED_BYTES) {
			/* as perf's ordered events do past report.queue-size: the oldest half goes on */
			struct hs_queue_item it;
			size_t half = l->q.heap.n / 2;

			while (half-- && hs_queue_pop(&l->q, UINT64_MAX, &it)) {
				hand_on(l, it.rec);
				hs_queue_item_release(&it);
			}
			l->queue_flushes++;
		}
	}
	flush(l, UINT64_MAX);
	if (rc < 0)
		goto out;
	if (!l->evmap.n) {
		/* no sample at all: still a profile with the events' values */
		for (size_t i = 0; i < l->d.attrs.n; i++) {
			char *name = bare_name(l->d.attrs.v[i].name ? l->d.attrs.v[i].name : "events");
			hs_builder_add_event(&l->b, name, is_time_event(&l->d.attrs.v[i]));
			free(name);
		}
	}
	*ret = hs_builder_take(&l->b);
	if (l->d.cmdline)
		hs_vec_push(&(*ret)->comments, hs_profile_intern_str(*ret, l->d.cmdline));
	/* perf writes both: LOST as its rings overflowed, of any kind, and LOST_SAMPLES at the
	 * end, the samples of each event its kernel counted (PERF_FORMAT_LOST) */
	if (l->b.stats.lost)
		hs_profile_note_lost(*ret, l->b.stats.samples, l->b.stats.lost);
	if (l->b.stats.lost_records)
		hs_profile_note_lost_records(*ret, l->b.stats.lost_records, false);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->records = records;
		info->samples = l->b.stats.samples;
		info->lost = l->b.stats.lost;
		info->lost_records = l->b.stats.lost_records;
		info->unknown_records = l->d.unknown_records;
		info->bad_records = l->bad_records;
		info->compressed_records = l->d.compressed_records;
		info->truncated = l->d.truncated;
		info->truncated_at = l->d.truncated_at;
		info->decompress_cut = l->d.decompress_cut;
		info->decompress_cut_at = l->d.decompress_cut_at;
		info->decompressed = l->d.zout_total;
		info->queue_flushes = l->queue_flushes;
		info->kernel_symbols = l->b.sym.kallsyms != NULL;
		info->kernel_note = note;
		note = NULL;
		for (size_t i = 0; i < l->b.sym.mismatched.n; i++)
			hs_vec_push(&info->mismatched, hs_xstrdup(l->b.sym.mismatched.v[i]));
		for (size_t i = 0; i < l->b.model.jit.warnings.n; i++)
			hs_vec_push(&info->jit_warnings, hs_xstrdup(l->b.model.jit.warnings.v[i]));
		info->cmdline = l->d.cmdline ? hs_xstrdup(l->d.cmdline) : NULL;
	}
	rc = 0;
out:
	hs_queue_release(&l->q);
	hs_builder_release(&l->b);
	hs_perf_data_close(&l->d);
	hs_vec_free(&l->evmap);
	free(kallsyms);
	free(note);
	free(l);
	return rc;
}
