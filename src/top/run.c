/* hotstack top from start to end: the recording opened, its view made (and served with
 * --serve), the screen or the --stdio reports driven from its ticks, and everything closed in
 * the order the readers need: the view ended (its waiting readers answered) before the server
 * stops, the server stopped before the view is freed. */
#include "top.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"
#include "serve/serve.h"

struct run {
	struct hs_top t; /* first: the tick's ctx is the run */
	const struct hs_top_run_opts *o;
};

/* On the screen's last line while it is up, else through the caller's say */
static void say(void *ctx, bool detail, const char *msg)
{
	struct run *r = ctx;

	if (!hs_top_say(&r->t, msg))
		r->o->say(r->o->ctx, detail, msg);
}

/* The live recording, its view served and shown until its end */
static enum hs_top_failure show(struct run *r, struct hs_record *rec, struct hs_builder_opts *bo, int *status,
				struct hs_error *err)
{
	const struct hs_top_run_opts *o = r->o;
	struct hs_top_config tc = o->top;
	struct hs_live_hooks hooks = {NULL, NULL, say, r, hs_top_tick};
	struct hs_live_opts lo = {0};
	struct hs_serve_opts so = {o->serve, NULL, o->oo, (unsigned)((o->view.step_ns + 999999999) / 1000000000)};
	struct hs_serve *srv = NULL;
	enum hs_top_failure fail = HS_TOP_OK;
	struct hs_live lv;
	char msg[128];
	bool failed;

	tc.no_kernel |= rec->user_only;
	hs_live_builder_opts(rec, o->cgo, bo);
	if (hs_live_init(&lv, rec, bo, &lo, &hooks, err))
		return HS_TOP_RECORDING;
	lv.view = so.view = hs_view_new(&o->view);
	if (o->serve && hs_serve_start(&srv, &so, err))
		fail = HS_TOP_SERVING;
	else if (hs_top_start(&r->t, &lv, &tc))
		fail = HS_TOP_TERMINAL;
	if (!fail && srv) {
		snprintf(msg, sizeof(msg), "serving on http://%s/", hs_serve_address(srv));
		if (!hs_top_say(&r->t, msg))
			o->info(o->ctx, msg);
	}
	if (!fail && hs_live_run(&lv, err))
		fail = HS_TOP_RECORDING;
	/* q and Ctrl-C end top as top ends; a command that ended says how */
	if (!fail && rec->cause == HS_CAUSE_COMMAND_EXITED)
		*status = hs_record_command_status(rec);
	hs_top_end(&r->t); /* the terminal as it was, before anything more is said */
	hs_profile_free(hs_live_end(&lv, &failed));
	if (!fail)
		hs_top_last(&r->t);
	if (!fail && r->t.write_error) {
		hs_error_set(err, -r->t.write_error, "cannot write the report: %s", strerror(r->t.write_error));
		fail = HS_TOP_WRITING;
	}
	hs_serve_stop(srv);
	hs_view_free(lv.view);
	hs_live_release(&lv);
	return fail;
}

enum hs_top_failure hs_top_run(const struct hs_top_run_opts *o, int *status, struct hs_error *err)
{
	struct run r = {.o = o};
	struct hs_builder_opts bo = {0};
	enum hs_top_failure fail;
	struct hs_record rec;

	*status = 0;
	hs_record_block_signals(false);
	o->ro->rt_names = bo.rt_names = hs_rt_names_new(HS_RT_ALL);
	if (hs_record_open(&rec, o->ro, err)) {
		fail = HS_TOP_RECORDING;
	} else {
		if (rec.user_only)
			o->say(o->ctx, false, "no permission for kernel samples (kernel.perf_event_paranoid > 1): user space only");
		fail = show(&r, &rec, &bo, status, err);
	}
	hs_record_close(&rec);
	hs_rt_names_free(bo.rt_names);
	return fail;
}
