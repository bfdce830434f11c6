/* hotstack top driven from the recording's tick: the window the view made last, shown on the
 * screen or written as a report, and the keys' requests (quit, zero) passed on to the
 * recording. Everything here runs on the recording's main thread, the builder's own. */
#include "top.h"

#include <errno.h>
#include <time.h>

#include "screen.h"
#include "top-data.h"

#define KEY_POLL_NS 50000000ULL    /* how soon a key shows: 50 ms */
#define STDIO_POLL_NS 100000000ULL /* how soon a new window is written */

static void draw(struct hs_top *t);

int hs_top_start(struct hs_top *t, struct hs_live *lv, const struct hs_top_config *c)
{
	memset(t, 0, sizeof(*t));
	t->c = *c;
	t->lv = lv;
	if (c->stdio)
		return 0;
	if (!(t->screen = hs_screen_open(c->sort, c->comm)))
		return -ENOTTY;
	draw(t);
	return 0;
}

void hs_top_end(struct hs_top *t)
{
	hs_screen_close(t->screen);
	t->screen = NULL;
	hs_snapshot_put(t->shown);
	t->shown = NULL;
}

bool hs_top_say(struct hs_top *t, const char *msg)
{
	if (!t->screen)
		return false;
	hs_screen_note(t->screen, msg);
	return true;
}

/* The window's length and samples a second. */
static void window_rate(const struct hs_snapshot *s, double *span, double *rate)
{
	const struct hs_profile *p = s ? s->p : NULL;

	*span = s && s->end_wall > s->start_wall ? (double)(s->end_wall - s->start_wall) / 1e9 : 0;
	*rate = p && p->types.n && *span > 0 ? (double)hs_profile_total(p, hs_top_value_index(p)) / *span : 0;
}

static void draw(struct hs_top *t)
{
	struct hs_screen_status st = {0};
	const struct hs_builder_stats *bs = &t->lv->b.stats;

	window_rate(t->shown, &st.span, &st.rate);
	st.samples = bs->samples - t->zero_samples;
	st.lost = hs_live_lost(t->lv) - t->zero_lost;
	st.no_kernel = t->c.no_kernel;
	hs_screen_draw(t->screen, t->shown ? t->shown->p : NULL, &st);
}

/* The window as text, perf top --stdio's way: a header, then the rows by the sort column. */
static int report(struct hs_top *t)
{
	const struct hs_profile *p = t->shown->p;
	struct hs_top_opts o = {.vi = hs_top_value_index(p), .sort = t->c.sort, .comm = t->c.comm};
	struct hs_top_table tb;
	unsigned rows = t->c.rows ? t->c.rows : 20;
	FILE *f = t->c.out;
	time_t now = time(NULL);
	char when[16], head[256], owner[64];
	double span, rate;

	hs_top_table_build(p, &o, &tb);
	window_rate(t->shown, &span, &rate);
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	fprintf(f, "hotstack top %s: %lld samples in the last %.1f s (%.0f/s), lost %llu\n", when, (long long)tb.sum,
		span, rate, (unsigned long long)(hs_live_lost(t->lv) - t->zero_lost));
	hs_top_header(o.sort, 22, 40, head, sizeof(head));
	fprintf(f, "%s\n", head);
	for (size_t i = 0; i < tb.fns.n && i < rows; i++) {
		const struct hs_top_fn *fn = &tb.fns.v[i];

		fprintf(f, "%6.2f%% %6.2f%%  %-22s %-4s %-40s %s\n",
			tb.sum ? 100.0 * (double)fn->self / (double)tb.sum : 0.0,
			tb.sum ? 100.0 * (double)fn->total / (double)tb.sum : 0.0, hs_top_owner(fn, owner, sizeof(owner)),
			hs_top_kind_mark(fn->kind),
			fn->name, hs_top_module_name(fn->module));
	}
	fputc('\n', f);
	hs_top_table_release(&tb);
	errno = 0;
	if (fflush(f) || ferror(f))
		return errno ? errno : EIO;
	return 0;
}

/* Takes the view's latest window when there is a new one; returns whether it did. */
static bool take_window(struct hs_top *t)
{
	uint64_t steps = hs_view_steps(t->lv->view);
	struct hs_snapshot *s;

	if (steps == t->steps || !(s = hs_view_window(t->lv->view)))
		return false;
	t->steps = steps;
	hs_snapshot_put(t->shown);
	t->shown = s;
	return true;
}

void hs_top_last(struct hs_top *t)
{
	if (t->c.stdio && !t->write_error && take_window(t))
		t->write_error = report(t);
	hs_snapshot_put(t->shown);
	t->shown = NULL;
}

static uint64_t tick_stdio(struct hs_top *t)
{
	if (take_window(t) && (t->write_error = report(t)))
		hs_live_stop(t->lv);
	return STDIO_POLL_NS;
}

uint64_t hs_top_tick(void *ctx)
{
	struct hs_top *t = ctx;
	int asked;

	if (t->c.stdio)
		return tick_stdio(t);
	asked = hs_screen_keys(t->screen);
	if (asked & HS_SCREEN_QUIT) {
		hs_live_stop(t->lv);
		return KEY_POLL_NS;
	}
	if (asked & HS_SCREEN_ZERO) {
		hs_view_zero(t->lv->view, &t->lv->b);
		t->zero_samples = t->lv->b.stats.samples;
		t->zero_lost = hs_live_lost(t->lv);
	}
	/* paused: the window shown stays, the keys still work on it */
	if ((!hs_screen_paused(t->screen) && take_window(t)) || asked & HS_SCREEN_CHANGED)
		draw(t);
	return KEY_POLL_NS;
}
