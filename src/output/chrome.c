/* Chrome's trace-event JSON (the object form, {"traceEvents": [...]}), as Perfetto and
 * chrome://tracing draw it: per thread, each run of consecutive samples that share a frame at a
 * depth is one complete ("X") event, so a thread's lane reads as a flame chart in time; off-CPU
 * periods end in an "[off-CPU]" frame above the stack the thread blocked in. Process and thread
 * names are metadata ("M") events; times are microseconds from the first sample. Gzip-compressed
 * where the output's name ends in .gz. */
#include <stdlib.h>
#include <string.h>

#include "otlp.h"
#include "writers.h"

#define OFF_CPU_NAME "[off-CPU]"

struct event {
	uint64_t start, end;
	const char *name, *module, *file; /* borrowed from the profile */
	const char *cat;
};

struct open_frame {
	uint64_t id; /* hash of the frame's name, module and kind */
	size_t event;
};

static void write_meta_event(struct hs_outfile *out, struct hs_strbuf *sb, const char *what, int pid, int tid,
			     const char *key, const char *name, long long num)
{
	hs_strbuf_reset(sb);
	hs_strbuf_addf(sb, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":", what, pid, tid, key);
	if (name)
		hs_json_add(sb, *name ? name : "[unknown]");
	else
		hs_strbuf_addf(sb, "%lld", num);
	hs_strbuf_adds(sb, "}}");
	hs_outfile_write(out, sb->buf, sb->len);
}

static void write_events(struct hs_outfile *out, struct hs_strbuf *sb, const struct event *ev, size_t n, int pid, int tid)
{
	for (size_t i = 0; i < n; i++) {
		hs_strbuf_reset(sb);
		hs_strbuf_adds(sb, ",\n{\"ph\":\"X\",\"name\":");
		hs_json_add(sb, ev[i].name);
		hs_strbuf_addf(sb, ",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":", ev[i].cat, pid, tid);
		hs_tl_add_time(sb, ev[i].start, 1000);
		hs_strbuf_adds(sb, ",\"dur\":");
		hs_tl_add_time(sb, ev[i].end - ev[i].start, 1000);
		hs_strbuf_adds(sb, ",\"args\":{");
		if (*ev[i].module) {
			hs_strbuf_adds(sb, "\"module\":");
			hs_json_add(sb, ev[i].module);
		}
		if (*ev[i].file) {
			hs_strbuf_adds(sb, *ev[i].module ? ",\"file\":" : "\"file\":");
			hs_json_add(sb, ev[i].file);
		}
		hs_strbuf_adds(sb, "}}");
		hs_outfile_write(out, sb->buf, sb->len);
	}
}

static int write_trace(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_timeline tl;
	HS_VEC(struct event) ev = {0};
	HS_VEC(struct open_frame) open = {0};
	struct hs_strbuf sb = {0}, cmd = {0};
	struct hs_frame *fr = NULL;
	size_t fcap = 0;
	const char *title = o->title ? o->title : hs_profile_command(p, &cmd);
	int last_pid = -2;

	hs_timeline_build(&tl, p, o);
	hs_strbuf_adds(&sb, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":");
	hs_strbuf_addf(&sb, "\"hotstack %s\",\"command\":", HOTSTACK_VERSION);
	hs_json_add(&sb, title ? title : "");
	hs_strbuf_adds(&sb, ",\"interval_us\":");
	hs_tl_add_time(&sb, tl.interval, 1000);
	/* the first event carries no comma: every other is written after one */
	hs_strbuf_adds(&sb, "},\n\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
			    "\"args\":{\"name\":\"hotstack\"}}");
	hs_outfile_write(out, sb.buf, sb.len);

	for (size_t ti = 0; ti < tl.threads.n; ti++) {
		const struct hs_tl_thread *th = &tl.threads.v[ti];
		int pid = th->pid >= 0 ? th->pid : 0, tid = th->tid >= 0 ? th->tid : -(int)ti - 1;
		uint64_t prev_end = 0;

		if (pid != last_pid && pid)
			write_meta_event(out, &sb, "process_name", pid, pid, "name", hs_profile_str(p, th->process), 0);
		last_pid = pid;
		write_meta_event(out, &sb, "thread_name", pid, tid, "name", hs_profile_str(p, th->name), 0);
		write_meta_event(out, &sb, "thread_sort_index", pid, tid, "sort_index", NULL, (long long)ti);

		ev.n = open.n = 0;
		for (size_t i = 0; i < th->spans.n; i++) {
			const struct hs_tl_span *sp = &th->spans.v[i];
			size_t nf = hs_stack_frames(p, p->samples.v[sp->sample].stack, &fr, &fcap), keep = 0;

			/* a gap (the thread was not sampled) closes every frame */
			if (sp->start > prev_end)
				open.n = 0;
			if (sp->off_cpu) {
				hs_xgrow((void **)&fr, &fcap, nf + 1, sizeof(*fr));
				fr[nf++] = (struct hs_frame){OFF_CPU_NAME, "", "", 0, HS_KIND_PSEUDO, false};
			}
			for (size_t d = 0; d < nf; d++) {
				const char *cat = sp->off_cpu && d + 1 == nf ? "off-cpu" : hs_otlp_frame_type((enum hs_kind)fr[d].kind);
				uint64_t id = hs_hash_combine(hs_hash_bytes(fr[d].name, strlen(fr[d].name), fr[d].kind),
							      hs_hash_bytes(fr[d].module, strlen(fr[d].module), 0));

				if (d == keep && d < open.n && open.v[d].id == id) {
					ev.v[open.v[d].event].end = sp->end;
					/* a frame merged over samples of different files keeps the first's */
					keep++;
					continue;
				}
				open.n = HS_MIN(open.n, d);
				hs_vec_push(&ev, ((struct event){sp->start, sp->end, fr[d].name, fr[d].module, fr[d].file,
								 cat ? cat : "other"}));
				hs_vec_push(&open, ((struct open_frame){id, ev.n - 1}));
			}
			open.n = HS_MIN(open.n, nf);
			prev_end = sp->end;
		}
		write_events(out, &sb, ev.v, ev.n, pid, tid);
	}
	hs_outfile_puts(out, "]}\n");

	hs_timeline_release(&tl);
	hs_vec_free(&ev);
	hs_vec_free(&open);
	hs_strbuf_release(&sb);
	hs_strbuf_release(&cmd);
	free(fr);
	return out->err ? -out->err : 0;
}

int hs_write_chrome(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_outfile mem;
	uint8_t *buf;
	size_t len;
	int rc;

	if (!hs_tl_gzipped(out))
		return write_trace(p, o, out);
	hs_outfile_open_mem(&mem);
	rc = write_trace(p, o, &mem);
	buf = hs_outfile_take_mem(&mem, &len);
	if (!rc)
		rc = hs_gzip_out(buf, len, out);
	free(buf);
	return rc;
}
