/* hotstack top's terminal screen: the keys, and the table drawn from each window's profile.
 * The table is counted again at every draw (top-data.c), so that sorting, filtering and kernel
 * frames apply at once, to the profile shown, paused or not. */
#include "screen.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top-data.h"
#include "util/util.h"

#define RELATED_MAX 8            /* callers, and callees, shown under a function */
#define NOTE_NS 3000000000ULL    /* how long a note stays on the key line */

enum line_kind { LINE_FN, LINE_HEAD, LINE_CALLER, LINE_CALLEE, LINE_NONE };

struct line {
	enum line_kind kind;
	const struct hs_top_fn *fn; /* LINE_FN, LINE_CALLER, LINE_CALLEE */
	size_t index;               /* LINE_FN: in the table */
	const char *text;           /* LINE_HEAD, LINE_NONE */
};

struct lines {
	struct line *v;
	size_t n, cap;
};

struct hs_screen {
	SCREEN *term;
	struct hs_top_opts o;
	char filter[64];
	char input[64]; /* the filter being typed after '/' */
	bool typing;
	bool paused;
	size_t sel;    /* the selected function, an index in the table */
	size_t scroll; /* the first line shown */
	char *open_name, *open_module; /* the function whose callers and callees show */
	size_t nfns;   /* in the last table drawn */
	bool open_asked; /* Enter: the selected function opens (or closes) at the next draw */
	int rows;      /* lines of the table on the screen */
	char note[256];
	uint64_t note_until;
};

struct hs_screen *hs_screen_open(void)
{
	struct hs_screen *s = hs_xcalloc(1, sizeof(*s));

	s->term = newterm(NULL, stdout, stdin);
	if (!s->term) {
		free(s);
		return NULL;
	}
	cbreak(); /* Ctrl-C stays a signal: the recording ends as on SIGINT */
	noecho();
	nonl();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	set_escdelay(25); /* Esc alone, not the start of a key's sequence, after 25 ms */
	curs_set(0);
	s->o.filter = s->filter;
	return s;
}

void hs_screen_close(struct hs_screen *s)
{
	if (!s)
		return;
	endwin();
	delscreen(s->term);
	free(s->open_name);
	free(s->open_module);
	free(s);
}

bool hs_screen_paused(const struct hs_screen *s)
{
	return s->paused;
}

void hs_screen_note(struct hs_screen *s, const char *msg)
{
	snprintf(s->note, sizeof(s->note), "%s", msg);
	s->note_until = hs_now_ns() + NOTE_NS;
}

/* A key typed into the filter: Enter applies it (empty: no filter), Esc forgets it. */
static void filter_key(struct hs_screen *s, int c)
{
	size_t n = strlen(s->input);

	if (c == '\r' || c == '\n' || c == KEY_ENTER) {
		memcpy(s->filter, s->input, sizeof(s->filter));
		s->typing = false;
		s->sel = s->scroll = 0;
	} else if (c == 27) {
		s->typing = false;
	} else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
		if (n)
			s->input[n - 1] = 0;
	} else if (c >= 32 && c < 127 && n + 1 < sizeof(s->input)) {
		s->input[n] = (char)c;
		s->input[n + 1] = 0;
	}
}

static void move_sel(struct hs_screen *s, long by)
{
	long to = (long)s->sel + by;

	if (to >= (long)s->nfns)
		to = (long)s->nfns - 1;
	s->sel = to < 0 ? 0 : (size_t)to;
}

/* Enter: unfolds a function's callers and callees, or folds them; kept by name, as the tables
 * of the windows to come hold it at other places. */
static void toggle_open(struct hs_screen *s, const char *name, const char *module)
{
	bool same = s->open_name && !strcmp(s->open_name, name) && !strcmp(s->open_module, module);

	free(s->open_name);
	free(s->open_module);
	s->open_name = s->open_module = NULL;
	if (!same) {
		s->open_name = hs_xstrdup(name);
		s->open_module = hs_xstrdup(module);
	}
}

static int key(struct hs_screen *s, int c)
{
	long page = s->rows > 1 ? s->rows - 1 : 1;

	switch (c) {
	case 'q':
	case 'Q':
		return HS_SCREEN_QUIT;
	case 'z':
		hs_screen_note(s, "counts zeroed");
		return HS_SCREEN_ZERO | HS_SCREEN_CHANGED;
	case KEY_UP:
		move_sel(s, -1);
		break;
	case KEY_DOWN:
		move_sel(s, 1);
		break;
	case KEY_PPAGE:
		move_sel(s, -page);
		break;
	case KEY_NPAGE:
		move_sel(s, page);
		break;
	case KEY_HOME:
		s->sel = 0;
		break;
	case KEY_END:
		move_sel(s, (long)s->nfns);
		break;
	case '\r':
	case '\n':
	case KEY_ENTER:
		s->open_asked = true; /* on the table the keys moved in: the next draw's */
		break;
	case 'k':
		s->o.hide_kernel = !s->o.hide_kernel;
		break;
	case 's':
		s->o.by_total = !s->o.by_total;
		break;
	case '/':
		s->typing = true;
		memcpy(s->input, s->filter, sizeof(s->input));
		break;
	case 'p':
		s->paused = !s->paused;
		break;
	case KEY_RESIZE:
		break;
	default:
		return 0;
	}
	return HS_SCREEN_CHANGED;
}

int hs_screen_keys(struct hs_screen *s)
{
	int c, asked = 0;

	while ((c = getch()) != ERR) {
		if (s->typing) {
			filter_key(s, c);
			asked |= HS_SCREEN_CHANGED;
			continue;
		}
		asked |= key(s, c);
		if (asked & HS_SCREEN_QUIT)
			break;
	}
	return asked;
}

/* ---- drawing ---- */

static void put_line(int y, const char *text, attr_t attr)
{
	attrset(attr);
	mvaddnstr(y, 0, text, COLS);
	if (attr & A_REVERSE) /* the bar across the screen */
		for (int x = (int)strlen(text); x < COLS; x++)
			mvaddch(y, x, ' ');
	attrset(A_NORMAL);
}

static double pct(int64_t v, int64_t sum)
{
	return sum > 0 ? 100.0 * (double)v / (double)sum : 0.0;
}

static void status_line(const struct hs_screen *s, const struct hs_top_table *t, const struct hs_screen_status *st)
{
	char buf[512], cut[64] = "";

	if (t->cut && t->cut_reason)
		snprintf(cut, sizeof(cut), ", cut %.0f%% (%s)", pct(t->cut, t->sum), t->cut_reason);
	snprintf(buf, sizeof(buf), "%.0f samples/s, %llu samples, lost %llu%s, last %.1f s, sort %s, kernel %s%s",
		 st->rate, (unsigned long long)st->samples, (unsigned long long)st->lost, cut, st->span,
		 s->o.by_total ? "total" : "self", st->no_kernel ? "not recorded" : s->o.hide_kernel ? "hidden" : "shown",
		 s->paused ? ", PAUSED" : "");
	put_line(0, buf, A_REVERSE);
}

static void key_line(struct hs_screen *s)
{
	char buf[512];

	if (s->typing) {
		snprintf(buf, sizeof(buf), "filter: %s_   (Enter: apply, empty: all; Esc: cancel)", s->input);
	} else if (*s->note && hs_now_ns() < s->note_until) {
		snprintf(buf, sizeof(buf), "%s", s->note);
	} else {
		snprintf(buf, sizeof(buf), "q quit  Enter callers  k kernel  s sort  / filter%s%s  p pause  z zero",
			 *s->filter ? " '" : "", *s->filter ? s->filter : "");
		if (*s->filter)
			strcat(buf, "'");
	}
	put_line(LINES - 1, buf, A_BOLD);
}

/* The lines of the table: each function, and under the open one its callers and callees. */
static void table_lines(const struct hs_screen *s, const struct hs_top_table *t, const struct hs_top_related *r,
			struct lines *lines)
{
	for (size_t i = 0; i < t->fns.n; i++) {
		const struct hs_top_fn *f = &t->fns.v[i];

		hs_vec_push(lines, ((struct line){LINE_FN, f, i, NULL}));
		if (!s->open_name || strcmp(f->name, s->open_name) || strcmp(f->module, s->open_module))
			continue;
		hs_vec_push(lines, ((struct line){LINE_HEAD, NULL, 0, "callers:"}));
		for (size_t j = 0; j < r->callers.n && j < RELATED_MAX; j++)
			hs_vec_push(lines, ((struct line){LINE_CALLER, &r->callers.v[j], 0, NULL}));
		if (!r->callers.n)
			hs_vec_push(lines, ((struct line){LINE_NONE, NULL, 0, "(none: a root)"}));
		hs_vec_push(lines, ((struct line){LINE_HEAD, NULL, 0, "callees:"}));
		for (size_t j = 0; j < r->callees.n && j < RELATED_MAX; j++)
			hs_vec_push(lines, ((struct line){LINE_CALLEE, &r->callees.v[j], 0, NULL}));
		if (!r->callees.n)
			hs_vec_push(lines, ((struct line){LINE_NONE, NULL, 0, "(none: a leaf)"}));
	}
}

/* The widths of the function's and the module's columns, after the percentages and the mark. */
static void widths(int *namew, int *modw)
{
	int w = COLS > 40 ? COLS : 40;

	*modw = HS_MIN(24, w / 4);
	*namew = w - 17 - 5 - 1 - *modw;
}

static void format_line(const struct line *l, int64_t sum, char *buf, size_t cap)
{
	const struct hs_top_fn *f = l->fn;
	int namew, modw;

	widths(&namew, &modw);
	if (l->kind == LINE_HEAD || l->kind == LINE_NONE) {
		snprintf(buf, cap, "%17s%s%s", "", l->kind == LINE_NONE ? "  " : "", l->text);
		return;
	}
	if (l->kind == LINE_FN)
		snprintf(buf, cap, "%6.2f%% %6.2f%%  %-4s %-*.*s %.*s", pct(f->self, sum), pct(f->total, sum),
			 hs_top_kind_mark(f->kind), namew, namew, f->name, modw, hs_top_module_name(f->module));
	else
		snprintf(buf, cap, "%7s %6.2f%%    %-4s %-*.*s %.*s", "", pct(f->total, sum), hs_top_kind_mark(f->kind),
			 namew - 2, namew - 2, f->name, modw, hs_top_module_name(f->module));
}

/* Scrolls so that the selected function shows, and as much of what is open under it. */
static void scroll_to(struct hs_screen *s, size_t at, size_t end)
{
	size_t rows = s->rows > 0 ? (size_t)s->rows : 1;

	if (at < s->scroll)
		s->scroll = at;
	if (end >= s->scroll + rows)
		s->scroll = HS_MIN(at, end - rows + 1);
}

static void draw_table(struct hs_screen *s, const struct hs_top_table *t, const struct hs_top_related *r)
{
	struct lines lines = {0};
	size_t at = 0, end;
	char buf[1024];

	table_lines(s, t, r, &lines);
	while (at < lines.n && !(lines.v[at].kind == LINE_FN && lines.v[at].index == s->sel))
		at++;
	for (end = at; end + 1 < lines.n && lines.v[end + 1].kind != LINE_FN;)
		end++;
	scroll_to(s, at, end);
	for (int y = 0; y < s->rows && s->scroll + (size_t)y < lines.n; y++) {
		const struct line *l = &lines.v[s->scroll + (size_t)y];
		bool selected = l->kind == LINE_FN && l->index == s->sel;

		format_line(l, t->sum, buf, sizeof(buf));
		put_line(2 + y, buf, selected ? A_REVERSE : A_NORMAL);
	}
	if (!t->fns.n)
		put_line(2, *s->filter ? "  (no function matches the filter)" : "  (no samples yet)", A_NORMAL);
	hs_vec_free(&lines);
}

void hs_screen_draw(struct hs_screen *s, const struct hs_profile *p, const struct hs_screen_status *st)
{
	struct hs_top_table t = {0};
	struct hs_top_related r = {0};
	char head[1024];
	int namew, modw;

	erase();
	s->rows = LINES - 3;
	if (p) {
		s->o.vi = hs_top_value_index(p);
		hs_top_table_build(p, &s->o, &t);
	}
	s->nfns = t.fns.n;
	move_sel(s, 0);
	if (s->open_asked && t.fns.n)
		toggle_open(s, t.fns.v[s->sel].name, t.fns.v[s->sel].module);
	s->open_asked = false;
	if (p && s->open_name)
		hs_top_related_build(p, &s->o, s->open_name, s->open_module, &r);
	if (LINES < 4 || COLS < 30) {
		put_line(0, "hotstack top: the terminal is too small", A_NORMAL);
	} else {
		status_line(s, &t, st);
		widths(&namew, &modw);
		snprintf(head, sizeof(head), "  self%%  total%%  %-4s %-*s %s", "", namew, "function", "module");
		put_line(1, head, A_BOLD);
		draw_table(s, &t, &r);
		key_line(s);
	}
	refresh();
	hs_top_related_release(&r);
	hs_top_table_release(&t);
}
