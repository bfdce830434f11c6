/* A live recording made into profiles: the events record/ reads from the kernel fed to a
 * profile builder while they come, and a profile handed to the caller to write whenever one is
 * due: each period's (record --switch-output), a checkpoint of the one so far, and the whole
 * recording's at the end. Nothing here prints: what a person is told goes through the hooks. */
#ifndef HS_LIVE_H
#define HS_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "output/periodic.h"
#include "profile/builder.h"
#include "live/view.h"
#include "push/push.h"
#include "push/service.h"
#include "record/callgraph.h"
#include "record/session.h"

struct hs_error;
struct hs_strbuf;

struct hs_live_hooks {
	/* Writes p to the files names (one per output given to hs_live_init()); quiet: a
	 * checkpoint, which says nothing but a failure. Returns 0, or -1 after saying why. */
	int (*write)(void *ctx, struct hs_profile *p, const char *const *names, bool quiet);
	/* About once a second: samples so far, and the recording's progress. */
	void (*progress)(void *ctx, uint64_t samples, const struct hs_record_progress *p);
	/* Something to say: a line without "\n", a warning, or with detail a detail for those who
	 * asked for them (-v). */
	void (*say)(void *ctx, bool detail, const char *msg);
	void *ctx;
	/* When not NULL: called on the main thread at every tick of the recording (at least every
	 * quarter of a second), after the view's; returns the ns until it wants to be called again
	 * (UINT64_MAX: no wish). hotstack top reads its keys and redraws from here. */
	uint64_t (*tick)(void *ctx);
};

struct hs_live_opts {
	int argc; /* the command line, for each profile's comments */
	char **argv;
	const char *const *outputs; /* the files each profile is written to, as given */
	size_t noutputs;
	struct hs_periodic_opts periodic;
	bool jvm_perfmap; /* ask HotSpot JVMs for their perf maps, while recording and at the end */
	/* and not already while recording (record/jvm.h, the asker): for when another reader names
	 * the JVMs' frames; one JVM is left alone with hs_jvm_asker_leave(lv->jvm, pid) */
	bool jvm_perfmap_late;
	uint64_t off_cpu_min; /* with the record's off_cpu: the shortest blocked period kept */
	/* each period's profile sent to a profile store: push.url set (the series, the rate and
	 * whether by service are the recording's, set by hs_live_init()) */
	struct hs_push_opts push;
	const char *labels[32];
	const char *renames[32];
	enum hs_series_by series_by; /* --push-series-by, where series_by_given */
	bool series_by_given;
};

struct hs_live {
	struct hs_builder b;
	struct hs_record *rec;
	struct hs_live_opts o;
	struct hs_live_hooks hooks;
	struct hs_record_sink sink;
	uint32_t off_cpu_ev; /* the builder's event index of off-CPU samples */
	struct hs_periodic pe;
	struct hs_builder_mark mark;
	bool write_failed;
	struct hs_push *push;
	struct hs_push_stats push_stats; /* after hs_live_end() */
	/* with push's by_service (services_on): each process's service, fed every event */
	struct hs_service_cache services;
	bool services_on, folded_said;
	/* The live view (top, --serve): set by the caller after hs_live_init() when it wants one
	 * (the caller makes and frees it); driven from each tick, ended by hs_live_end(). */
	struct hs_view *view;
	uint64_t pages_checked; /* when the resident file pages were last looked at (on_tick) */
	/* the JVMs asked for their perf maps (record/jvm.h): made at the first process with
	 * unnamed JIT code; jvm_fed, when it was last told of them */
	struct hs_jvm_asker *jvm;
	uint64_t jvm_fed;
	struct hs_u64map jvm_maps;    /* pid of JIT code -> the perf maps it wrote that the builder
	                               * was told of */
	struct hs_u64map jvm_unnamed; /* pid -> its unnamed JIT addresses, each looked at when new */
	size_t jvm_looked;            /* the builder's jit_pending looked at so far */
};

/* Adds --push-label LABEL (o keeps it); -1 for one the store would refuse (hs_push_label_ok()),
 * or one too many. */
int hs_live_push_label(struct hs_live_opts *o, const char *label);
/* Adds --push-relabel OLD=NEW (o keeps it); -1 for one hs_relabel_ok() refuses, or too many */
int hs_live_push_relabel(struct hs_live_opts *o, const char *rename);
/* Settles o for its n outputs: --push without --switch-output pushes every 10 s; checkpoints
 * for outputs that are all files. Returns NULL, or what does not go together (a line). */
const char *hs_live_opts_settle(struct hs_live_opts *o, const char *const *outputs, size_t n);
/* What the recording counted, for those who asked for detail (record -v): lines with "\n",
 * appended to sb; s is the builder's summary, lbr_repair whether leaf callers were put back
 * from last-branch records. */
void hs_live_details(const struct hs_record *rec, const struct hs_builder_summary *s, bool lbr_repair,
		     struct hs_strbuf *sb);
/* The off-CPU time recorded (--off-cpu), one line without "\n", appended to sb. */
void hs_live_off_cpu_summary(const struct hs_builder_summary *s, struct hs_strbuf *sb);
/* What the rings of rec lost, in words (appended to sb, which holds nothing yet): "lost N
 * samples (P%) and M side-band records (mappings, names, forks, exits)" where the kernel counts
 * them apart (hs_record_counts_lost()), else "lost N records, samples and side-band ...
 * together"; each part a note in p's comments too. *samples: whether samples were, or may have
 * been, lost. Returns whether anything was. */
bool hs_live_lost_words(struct hs_profile *p, const struct hs_builder_stats *st, const struct hs_record *rec,
			bool *samples, struct hs_strbuf *sb);
/* The samples lost so far, as the kernel counts them apart from side-band records
 * (hs_record_counts_lost()); where it does not, the records lost, of any kind. */
uint64_t hs_live_lost(const struct hs_live *lv);
/* What --push did, at the end, for a person: warnings (profiles dropped or left waiting) to
 * warn, lines with "\n"; what was sent to info, a line without. */
void hs_live_push_summary(const struct hs_live *lv, struct hs_strbuf *warn, struct hs_strbuf *info);

/* Sets the builder options that follow from the open recording rec and its call-graph options
 * cg (how user stacks are unwound, the kernel's frames, hotstack's own samples left out, ...);
 * the caller's own (names, times, symbols) are left as they are. */
void hs_live_builder_opts(const struct hs_record *rec, const struct hs_callgraph_opts *cg, struct hs_builder_opts *bo);
/* Starts the building of rec's profile (opened, not yet run) with bo (see
 * hs_live_builder_opts()), and the pushing with o->push.url. The first period begins now.
 * Returns 0, or a negative errno with err said (the push cannot start: lv is released). */
int hs_live_init(struct hs_live *lv, struct hs_record *rec, const struct hs_builder_opts *bo,
		 const struct hs_live_opts *o, const struct hs_live_hooks *hooks, struct hs_error *err);
/* Records until the end (hs_record_run()), writing periods and checkpoints as they are due. */
int hs_live_run(struct hs_live *lv, struct hs_error *err);
/* Asks the recording to end after the tick it is called from (hotstack top's q). */
void hs_live_stop(struct hs_live *lv);
/* After hs_live_run(): ends the building, writes (and pushes) the last period (when
 * switching), sends what the push queue holds (lv->push_stats), and hands over the whole
 * recording's profile (the caller frees it; it writes it where not switching). *failed is
 * set when a write failed. */
struct hs_profile *hs_live_end(struct hs_live *lv, bool *failed);
void hs_live_release(struct hs_live *lv);

#endif
