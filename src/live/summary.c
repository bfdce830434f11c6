/* What a live recording counted, in words for a person: the details record -v prints at the
 * end, and what --push did. The CLI decides which to print and where; the words are here,
 * beside the counts they read. */
#include "live/live.h"

#include <string.h>
#include <sys/resource.h>

#include "util/strbuf.h"

#define U(x) ((unsigned long long)(x))

static double seconds_of(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The unwinding: frames by CFI and by frame pointer, the tables, the refused steps */
static void unwinding(const struct hs_builder_summary *s, struct hs_strbuf *sb)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	hs_strbuf_addf(sb, "own CPU time %.3f s user, %.3f s system; unwound %llu frames (%llu by CFI, %llu by frame "
			   "pointer); samples of a call chain seen before %llu\n",
		       seconds_of(ru.ru_utime), seconds_of(ru.ru_stime), U(s->frames), U(s->cfi_steps), U(s->fp_steps),
		       U(s->stats.chain_hits));
	if (s->cfi_steps)
		hs_strbuf_addf(sb, "unwinding tables of files: %llu compiled, %llu from the cache\n", U(s->tables_built),
			       U(s->tables_cached));
	if (s->fp_steps)
		hs_strbuf_addf(sb, "frame-pointer steps through a frame's own record %llu; refused: frame pointer off the "
				   "stack %llu, return address not in code %llu, not after a call %llu\n",
			       U(s->fp_own_records), U(s->fp_outside_stack), U(s->fp_not_code), U(s->fp_not_after_call));
}

/* the runtimes', JIT, off-CPU and tracing frames, where the recording had any */
static void others(const struct hs_record *rec, const struct hs_builder_summary *s, struct hs_strbuf *sb)
{
	const struct hs_builder_stats *st = &s->stats;

	for (unsigned id = 1; id < HS_RT_SLOTS; id++) {
		const struct hs_rt_stats *r = &st->rt[id];
		const char *name = hs_runtime(id) ? hs_runtime(id)->name : NULL;
		if (hs_record_runtime_reader(rec, id))
			hs_strbuf_addf(sb, "%s: %s\n", name, hs_record_runtime_reader(rec, id));
		if (hs_record_runtime_active(rec, id))
			hs_strbuf_addf(sb, "%s: %llu samples with %s frames, %llu without their stack; stacks cut %llu, "
					   "unpaired %llu, dropped %llu; frames unnamed %llu\n",
				       name, U(r->samples), name, U(r->unpaired), U(r->cut), U(r->orphans),
				       U(hs_record_runtime_dropped(rec, id)), U(r->unnamed));
		if (id == HS_RT_HOTSPOT && hs_record_runtime_active(rec, id))
			hs_strbuf_addf(sb, "Java: frames interpreted %llu, compiled by C1 %llu, by C2 %llu, native wrappers %llu; "
					   "inlined methods %llu\n",
				       U(st->jvm_frames[0]), U(st->jvm_frames[1]), U(st->jvm_frames[2]), U(st->jvm_frames[3]),
				       U(st->jvm_inlined));
	}
	if (s->jit_files || s->jit_perf_maps)
		hs_strbuf_addf(sb, "JIT: %llu jitdump files (%llu code loads, %llu moves, %llu unwinding tables used), "
				   "%llu perf maps (%llu lines); addresses named from jitdump %llu, perf maps %llu, "
				   "unnamed %llu\n",
			       U(s->jit_files), U(s->jit_code_loads), U(s->jit_code_moves), U(s->jit_tables),
			       U(s->jit_perf_maps), U(s->jit_perf_map_entries), U(s->jit_named_jitdump),
			       U(s->jit_named_perf_map), U(s->jit_unnamed));
	if (st->off_cpu.unmatched)
		hs_strbuf_addf(sb, "off-CPU: %llu switch-ins lost (periods ended at the next sample or switch-out)\n",
			       U(st->off_cpu.unmatched));
	if (st->tracing_frames)
		hs_strbuf_addf(sb, "%llu frames of the tracing machinery left out at the top of kernel stacks\n",
			       U(st->tracing_frames));
	if (s->dwarf_restarts)
		hs_strbuf_addf(sb, "files' DWARF begun again to stay within its memory budget: %llu\n",
			       U(s->dwarf_restarts));
	if (rec->sideband_lost)
		hs_strbuf_addf(sb, "mapping, name and process records the kernel could not write: %llu (every process "
				   "read again from /proc at its next sample)\n",
			       U(__atomic_load_n(&rec->sideband_lost, __ATOMIC_RELAXED)));
	if (rec->left_out)
		hs_strbuf_addf(sb, "mapping and name records over a process's budget left out: %llu (%llu times a process "
				   "was marked to be read again from /proc)\n",
			       U(__atomic_load_n(&rec->left_out, __ATOMIC_RELAXED)),
			       U(__atomic_load_n(&rec->resyncs, __ATOMIC_RELAXED)));
}

void hs_live_details(const struct hs_record *rec, const struct hs_builder_summary *s, bool lbr_repair,
		     struct hs_strbuf *sb)
{
	const struct hs_builder_stats *st = &s->stats;

	hs_strbuf_addf(sb, "%llu records, %.1f MB (%llu copied out of a filling ring); own samples dropped %llu; "
			   "empty %llu; unmapped frames %llu; files loaded %llu, unreadable %llu, replaced %llu\n",
		       U(rec->records), (double)rec->bytes / 1e6, U(rec->spilled), U(st->own_samples),
		       U(st->empty_samples), U(st->unmapped_frames), U(s->files_loaded), U(s->files_unreadable),
		       U(s->files_mismatched));
	unwinding(s, sb);
	if (lbr_repair)
		hs_strbuf_addf(sb, "last-branch records %s; leaf callers put back from them: %llu\n",
			       rec->layout.sample_type & PERF_SAMPLE_BRANCH_STACK ? "sampled" : "not available (no LBR)",
			       U(st->lbr_repaired));
	others(rec, s, sb);
}

void hs_live_off_cpu_summary(const struct hs_builder_summary *s, struct hs_strbuf *sb)
{
	const struct hs_off_cpu_stats *oc = &s->stats.off_cpu;

	hs_strbuf_addf(sb, "off-CPU: %llu blocked periods, %.3f s", U(oc->samples), (double)oc->ns / 1e9);
	if (oc->short_periods)
		hs_strbuf_addf(sb, "; %llu shorter than --off-cpu-min left out (%.3f s)", U(oc->short_periods),
			       (double)oc->short_ns / 1e9);
	if (oc->preempted)
		hs_strbuf_addf(sb, "; waiting for a CPU after %llu preemptions, %.3f s (wall time, not off-CPU)",
			       U(oc->preempted), (double)oc->preempted_ns / 1e9);
}

void hs_live_push_summary(const struct hs_live *lv, struct hs_strbuf *warn, struct hs_strbuf *info)
{
	const struct hs_push_stats *st = &lv->push_stats;
	char *url = hs_push_url_shown(lv->o.push.url); /* never its password */

	if (st->dropped || st->refused)
		hs_strbuf_addf(warn,
			       "%llu profiles not pushed to %s: %llu refused by the store, %llu dropped (no room or "
			       "time left)\n",
			       (unsigned long long)(st->dropped + st->refused), url, (unsigned long long)st->refused,
			       (unsigned long long)st->dropped);
	if (st->spooled)
		hs_strbuf_addf(warn, "%llu profiles wait in %s for the next recording with --push-spool\n",
			       (unsigned long long)st->spooled, lv->o.push.spool_dir);
	hs_strbuf_addf(info, "pushed %llu profiles to %s", (unsigned long long)st->sent, url);
	if (st->from_spool)
		hs_strbuf_addf(info, "; %llu were waiting in %s from an earlier recording", (unsigned long long)st->from_spool,
			       lv->o.push.spool_dir);
	free(url);
}

bool hs_live_lost_words(struct hs_profile *p, const struct hs_builder_stats *st, const struct hs_record *rec,
			bool *samples, struct hs_strbuf *sb)
{
	uint64_t side = hs_record_lost_side(rec);
	/* the counts apart, unless reading them failed where records were lost */
	bool apart = hs_record_counts_lost(rec) && (st->lost || side || !st->lost_records);

	*samples = !apart || st->lost;
	if (apart && st->lost)
		hs_strbuf_adds(sb, hs_profile_str(p, hs_profile_note_lost(p, st->samples, st->lost)));
	if (apart && side) {
		const char *n = hs_profile_str(p, hs_profile_note_lost_records(p, side, true));
		/* after the samples': "lost N samples (P%) and M side-band records (...)" */
		if (sb->len) {
			hs_strbuf_adds(sb, " and");
			n += strlen("lost");
		}
		hs_strbuf_adds(sb, n);
	}
	if (!apart && st->lost_records)
		hs_strbuf_adds(sb, hs_profile_str(p, hs_profile_note_lost_records(p, st->lost_records, false)));
	return sb->len > 0;
}

uint64_t hs_live_lost(const struct hs_live *lv)
{
	return hs_record_counts_lost(lv->rec) ? lv->b.stats.lost : lv->b.stats.lost_records;
}
