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
#include "record/callgraph.h"
#include "record/session.h"

struct hs_error;

struct hs_live_hooks {
	/* Writes p to the files names (one per output given to hs_live_init()); quiet: a
	 * checkpoint, which says nothing but a failure. Returns 0, or -1 after saying why. */
	int (*write)(void *ctx, struct hs_profile *p, const char *const *names, bool quiet);
	/* About once a second: samples so far, and the recording's progress. */
	void (*progress)(void *ctx, uint64_t samples, const struct hs_record_progress *p);
	/* A JVM asked for its perf map at the end answered: rc 0, or a negative errno with err. */
	void (*jvm_answer)(void *ctx, int32_t pid, int rc, const struct hs_error *err);
	/* Something to warn about, once: a line without "\n". */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

struct hs_live_opts {
	int argc; /* the command line, for each profile's comments */
	char **argv;
	const char *const *outputs; /* the files each profile is written to, as given */
	size_t noutputs;
	struct hs_periodic_opts periodic;
	bool jvm_perfmap;     /* ask HotSpot JVMs for their perf maps at the end */
	uint64_t off_cpu_min; /* with the record's off_cpu: the shortest blocked period kept */
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
};

/* Sets the builder options that follow from the open recording rec and its call-graph options
 * cg (how user stacks are unwound, the kernel's frames, hotstack's own samples left out, ...);
 * the caller's own (names, times, symbols) are left as they are. */
void hs_live_builder_opts(const struct hs_record *rec, const struct hs_callgraph_opts *cg, struct hs_builder_opts *bo);
/* Starts the building of rec's profile (opened, not yet run) with bo (see
 * hs_live_builder_opts()). The first period begins now. */
void hs_live_init(struct hs_live *lv, struct hs_record *rec, const struct hs_builder_opts *bo,
		  const struct hs_live_opts *o, const struct hs_live_hooks *hooks);
/* Records until the end (hs_record_run()), writing periods and checkpoints as they are due. */
int hs_live_run(struct hs_live *lv, struct hs_error *err);
/* After hs_live_run(): ends the building, writes the last period (when switching), and hands
 * over the whole recording's profile (the caller frees it; it writes it where not switching).
 * *failed is set when a write failed. */
struct hs_profile *hs_live_end(struct hs_live *lv, bool *failed);
void hs_live_release(struct hs_live *lv);

#endif
