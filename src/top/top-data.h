/* What hotstack top shows of a profile: its functions with their self and total values, and the
 * callers and callees of one of them. Reads a profile, prints nothing. */
#ifndef HS_TOP_DATA_H
#define HS_TOP_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* The columns a table sorts by, perf's sort keys: numbers largest first, names A to Z, pids
 * smallest first; ties by self, total, then name. */
enum hs_top_sort {
	HS_TOP_SORT_SELF,  /* perf's overhead */
	HS_TOP_SORT_TOTAL, /* perf's children */
	HS_TOP_SORT_PID,
	HS_TOP_SORT_COMM,
	HS_TOP_SORT_SYM,
	HS_TOP_SORT_DSO,
	HS_TOP_SORT_N,
};

struct hs_top_opts {
	/* a sample's kernel frames are left out, so that its self value goes to the user frame
	 * that entered the kernel (samples with no other frame are left out) */
	bool hide_kernel;
	enum hs_top_sort sort;
	const char *filter; /* only functions whose name holds this, in any case; NULL or "": all */
	/* only rows of threads with one of these names (comma-separated, as perf top --comm);
	 * NULL or "": all */
	const char *comm;
	bool by_pid;        /* only rows of process pid */
	int32_t pid;
	uint32_t vi;        /* the value index counted */
};

/* A row of top: a function as it ran in the threads of one name of one process (perf top
 * --sort comm,pid,sym), with its module and kind of code. A function inlined into another is a
 * function of its own, as in the reports. */
struct hs_top_fn {
	const char *name;   /* "[unknown]" for a location without one; borrowed from the profile */
	const char *module; /* hs_profile_location_module(), "" when none; borrowed */
	const char *comm;   /* the threads' name; borrowed */
	int32_t pid;        /* -1 when unknown */
	uint8_t kind;       /* enum hs_kind */
	int64_t self;       /* samples it is the innermost frame of */
	int64_t total;      /* samples it is in, once each however often it recurs */
	size_t seen;        /* private: the sample that last added to total, plus one */
};

struct hs_top_fns {
	struct hs_top_fn *v;
	size_t n, cap;
};

struct hs_top_table {
	struct hs_top_fns fns; /* filtered and sorted */
	int64_t sum;           /* of the samples with a frame left: what percentages are of */
	/* stacks the unwinder could not finish (they end in a stop reason's pseudo-frame) */
	int64_t cut;
	const char *cut_reason; /* the most common reason, in a word or two; NULL for none */
};

/* Fills t (zeroed or released before) from p. Borrowed strings live as long as p. */
void hs_top_table_build(const struct hs_profile *p, const struct hs_top_opts *o, struct hs_top_table *t);
void hs_top_table_release(struct hs_top_table *t);

/* Who calls the function of row fn (its name, module, comm and pid; copies will do), and whom
 * it calls: the frame next to it towards the root (callers) and towards the leaf (callees) of
 * each sample of that process and thread name it is in, each counted once a sample (in total,
 * self unused), largest first. o's filters are not applied. */
struct hs_top_related {
	struct hs_top_fns callers, callees;
	int64_t total; /* of the function itself */
};

void hs_top_related_build(const struct hs_profile *p, const struct hs_top_opts *o, const struct hs_top_fn *fn,
			  struct hs_top_related *ret);
void hs_top_related_release(struct hs_top_related *r);

/* How a row marks its kind of code, perf's way: "[.]" user, "[k]" kernel, "[j]" JIT, "[py]"
 * Python, "[?]" a pseudo-frame. */
const char *hs_top_kind_mark(uint8_t kind);
/* A module as a row shows it: a file's base name, "[kernel.kallsyms]" as it is. */
const char *hs_top_module_name(const char *module);
/* The value index top counts in p: the "samples" type where there is one, else the first. */
uint32_t hs_top_value_index(const struct hs_profile *p);
/* The sort column named name, perf's way (overhead or self, children or total, pid, comm,
 * sym or symbol, dso or module); -EINVAL for another. */
int hs_top_sort_parse(const char *name, enum hs_top_sort *ret);
/* The name of sort column s: "self", "total", "pid", "comm", "sym", "dso". */
const char *hs_top_sort_name(enum hs_top_sort s);
/* A row's process in buf, as perf's pid sort key shows it: "PID:comm" ("comm" when no pid is
 * known); returns buf. */
const char *hs_top_owner(const struct hs_top_fn *f, char *buf, size_t cap);
/* The line above the rows: the columns' names, the sort column's in capitals; procw and namew
 * the widths of the process's and the function's. */
void hs_top_header(enum hs_top_sort sort, int procw, int namew, char *buf, size_t cap);
/* Whether comm is one of list's names (comma-separated); NULL or "" holds every name. */
bool hs_top_comm_in(const char *list, const char *comm);

#endif
