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

/* A row as the screen follows it from one table to the next: its function and whose it is. */
struct row_ref {
	char *name, *module, *comm; /* NULL: none */
	int32_t pid;
};

struct hs_screen {
	SCREEN *term;
	struct hs_top_opts o;
	char filter[64];
	char comm[256]; /* the thread names shown (--comm, or c), "" for all */
	char input[64]; /* the filter being typed after '/' */
	bool typing;
	bool paused;
	size_t sel;    /* the selected row, an index in the table */
	struct row_ref sel_ref;      /* ... which it follows from one window to the next */
	bool sel_moved;              /* the keys moved it: the next draw names it anew */
	size_t scroll; /* the first line shown */
	struct row_ref open; /* the row whose callers and callees show */
	size_t nfns;   /* in the last table drawn */
	bool open_asked; /* Enter: the selected function opens (or closes) at the next draw */
	int rows;      /* lines of the table on the screen */
	char note[256];
	uint64_t note_until;
};

static void set_ref(struct row_ref *r, const struct hs_top_fn *f)
{
	free(r->name);
	free(r->module);
	free(r->comm);
	*r = f ? (struct row_ref){hs_xstrdup(f->name), hs_xstrdup(f->module), hs_xstrdup(f->comm), f->pid}
	       : (struct row_ref){NULL, NULL, NULL, 0};
}

static bool is_row(const struct hs_top_fn *f, const struct row_ref *r)
{
	return r->name && !strcmp(f->name, r->name) && !strcmp(f->module, r->module) && !strcmp(f->comm, r->comm) &&
	       f->pid == r->pid;
}

/* The row as a struct hs_top_fn (its strings borrowed from r), for hs_top_related_build() */
static struct hs_top_fn ref_fn(const struct row_ref *r)
{
	return (struct hs_top_fn){.name = r->name, .module = r->module, .comm = r->comm, .pid = r->pid};
}

struct hs_screen *hs_screen_open(enum hs_top_sort sort, const char *comm)
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
	s->o.sort = sort;
	snprintf(s->comm, sizeof(s->comm), "%s", comm ? comm : "");
	s->o.comm = s->comm;
	return s;
}

void hs_screen_close(struct hs_screen *s)
{
	if (!s)
		return;
	endwin();
	delscreen(s->term);
	set_ref(&s->open, NULL);
	set_ref(&s->sel_ref, NULL);
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
		s->sel_moved = true;
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
	s->sel_moved = true;
}


/* The selection in a new table: the function it was on, wherever the counts put it now; where
 * that function is gone, or the keys moved it, the function at its place. */
static void follow_sel(struct hs_screen *s, const struct hs_top_table *t)
{
	s->nfns = t->fns.n;
	if (!s->sel_moved)
		for (size_t i = 0; i < t->fns.n; i++)
			if (is_row(&t->fns.v[i], &s->sel_ref))
				s->sel = i;
	if (s->sel >= t->fns.n)
		s->sel = t->fns.n ? t->fns.n - 1 : 0;
	set_ref(&s->sel_ref, t->fns.n ? &t->fns.v[s->sel] : NULL);
	s->sel_moved = false;
}

/* Enter: unfolds a function's callers and callees, or folds them; kept by name, as the tables
 * of the windows to come hold it at other places. */
static void toggle_open(struct hs_screen *s, const struct hs_top_fn *f)
{
	set_ref(&s->open, is_row(f, &s->open) ? NULL : f);
}

/* t and c: the rows of the selected row's process (t) or thread name (c) only, or, when the
 * view shows only one already, every row again. */
static void filter_owner(struct hs_screen *s, int c)
{
	const struct row_ref *r = &s->sel_ref;

	if (c == 't' && s->o.by_pid)
		s->o.by_pid = false;
	else if (c == 't' && r->name)
		s->o.by_pid = true, s->o.pid = r->pid;
	else if (c == 'c' && *s->comm)
		*s->comm = 0;
	else if (c == 'c' && r->name && !strchr(r->comm, ',')) /* with a comma, a list: not one name */
		snprintf(s->comm, sizeof(s->comm), "%s", r->comm);
	s->scroll = 0;
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
		move_sel(s, -(long)s->nfns);
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
	case 'S': /* s the next column, S the one before */
		s->o.sort = (s->o.sort + (c == 's' ? 1 : HS_TOP_SORT_N - 1)) % HS_TOP_SORT_N;
		break;
	case 't':
	case 'c':
		filter_owner(s, c);
		break;
	case '/':
		s->typing = true;
		s->input[0] = 0;
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

/* n in at most 5 characters: 99999, 219k, 2.19M */
static const char *short_count(uint64_t n, char *buf, size_t cap)
{
	if (n < 100000)
		snprintf(buf, cap, "%llu", (unsigned long long)n);
	else if (n < 1000000)
		snprintf(buf, cap, "%.0fk", (double)n / 1e3);
	else
		snprintf(buf, cap, "%.2fM", (double)n / 1e6);
	return buf;
}

/* What the view is first (paused, the sort, kernel frames), so that 80 columns always show it;
 * the counts after. */
static void status_line(const struct hs_screen *s, const struct hs_top_table *t, const struct hs_screen_status *st)
{
	char buf[1024], cut[64] = "", n[16], lost[16], pid[24] = "", comm[300] = "", filter[80] = "";

	if (t->cut_reason && pct(t->cut, t->sum) >= 0.5)
		snprintf(cut, sizeof(cut), " | cut %.0f%% %s", pct(t->cut, t->sum), t->cut_reason);
	if (s->o.by_pid)
		snprintf(pid, sizeof(pid), " | pid %d", (int)s->o.pid);
	if (*s->filter)
		snprintf(filter, sizeof(filter), " | filter '%s'", s->filter);
	if (*s->comm)
		snprintf(comm, sizeof(comm), " | comm %s", s->comm);
	snprintf(buf, sizeof(buf), "%ssort %s | kernel %s%s%s%s | last %.1f s | %.0f/s | %s samples, lost %s%s",
		 s->paused ? "PAUSED | " : "", hs_top_sort_name(s->o.sort),
		 st->no_kernel ? "not recorded" : s->o.hide_kernel ? "hidden" : "shown", filter, pid, comm, st->span, st->rate,
		 short_count(st->samples, n, sizeof(n)), short_count(st->lost, lost, sizeof(lost)), cut);
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
		snprintf(buf, sizeof(buf), "q quit  Enter callers  k kernel  s sort  / filter  t/c process  p pause  z zero");
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
		if (!is_row(f, &s->open))
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

/* The widths of the process's, the function's and the module's columns, after the
 * percentages; the mark between the process and the function. */
static void widths(int *procw, int *namew, int *modw)
{
	int w = COLS > 40 ? COLS : 40;

	*procw = HS_MIN(22, w / 5);
	*modw = HS_MIN(24, w / 4);
	*namew = w - 17 - *procw - 1 - 5 - 1 - *modw;
}

static void format_line(const struct line *l, int64_t sum, char *buf, size_t cap)
{
	const struct hs_top_fn *f = l->fn;
	int procw, namew, modw;
	char owner[64];

	widths(&procw, &namew, &modw);
	if (l->kind == LINE_HEAD || l->kind == LINE_NONE) {
		snprintf(buf, cap, "%17s%s%s", "", l->kind == LINE_NONE ? "  " : "", l->text);
		return;
	}
	if (l->kind == LINE_FN)
		snprintf(buf, cap, "%6.2f%% %6.2f%%  %-*.*s %-4s %-*.*s %.*s", pct(f->self, sum), pct(f->total, sum),
			 procw, procw, hs_top_owner(f, owner, sizeof(owner)), hs_top_kind_mark(f->kind), namew, namew,
			 f->name, modw, hs_top_module_name(f->module));
	else /* the callers and callees of a row are of its process */
		snprintf(buf, cap, "%7s %6.2f%%  %*s   %-4s %-*.*s %.*s", "", pct(f->total, sum), procw, "",
			 hs_top_kind_mark(f->kind), namew - 2, namew - 2, f->name, modw, hs_top_module_name(f->module));
}

/* Scrolls so that the selected function shows, and as much of what is open under it, with the
 * screen full where there are lines enough (a table that shrank is not left with one row). */
static void scroll_to(struct hs_screen *s, size_t at, size_t end, size_t n)
{
	size_t rows = s->rows > 0 ? (size_t)s->rows : 1;

	if (s->scroll + rows > n)
		s->scroll = n > rows ? n - rows : 0;
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
	scroll_to(s, at, end, lines.n);
	for (int y = 0; y < s->rows && s->scroll + (size_t)y < lines.n; y++) {
		const struct line *l = &lines.v[s->scroll + (size_t)y];
		bool selected = l->kind == LINE_FN && l->index == s->sel;

		format_line(l, t->sum, buf, sizeof(buf));
		put_line(2 + y, buf, selected ? A_REVERSE : A_NORMAL);
	}
	if (!t->fns.n)
		put_line(2, *s->filter || *s->comm || s->o.by_pid ? "  (no row matches the filters)" : "  (no samples yet)",
			 A_NORMAL);
	hs_vec_free(&lines);
}

void hs_screen_draw(struct hs_screen *s, const struct hs_profile *p, const struct hs_screen_status *st)
{
	struct hs_top_table t = {0};
	struct hs_top_related r = {0};
	char head[1024];
	int procw, namew, modw;

	erase();
	s->rows = LINES - 3;
	if (p) {
		s->o.vi = hs_top_value_index(p);
		hs_top_table_build(p, &s->o, &t);
	}
	follow_sel(s, &t);
	if (s->open_asked && t.fns.n)
		toggle_open(s, &t.fns.v[s->sel]);
	s->open_asked = false;
	if (p && s->open.name) {
		struct hs_top_fn open = ref_fn(&s->open);

		hs_top_related_build(p, &s->o, &open, &r);
	}
	if (LINES < 4 || COLS < 30) {
		put_line(0, "hotstack top: the terminal is too small", A_NORMAL);
	} else {
		status_line(s, &t, st);
		widths(&procw, &namew, &modw);
		hs_top_header(s->o.sort, procw, namew, head, sizeof(head));
		put_line(1, head, A_BOLD);
		draw_table(s, &t, &r);
		key_line(s);
	}
	refresh();
	hs_top_related_release(&r);
	hs_top_table_release(&t);
}
