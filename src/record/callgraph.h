/* Call-graph policy (record -g MODE): what the kernel is asked to record with each sample, how
 * the user part of the chain is unwound afterwards, and how much user stack is copied. Prints
 * nothing. */
#ifndef HS_CALLGRAPH_H
#define HS_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/events.h"

enum hs_callgraph {
	HS_CG_NONE = 0, /* the sampled instruction only */
	HS_CG_FP,       /* chains walked by the kernel through frame pointers */
	HS_CG_STACK,    /* kernel chain, plus user registers and a copy of the user stack to unwind */
	HS_CG_LBR,      /* kernel chain, plus the CPU's last-branch records in call-stack mode */
};

/* Default user stack copy for HS_CG_STACK (see docs/unwinding.md for the measurement). */
#define HS_DEFAULT_STACK_BYTES 65528
/* The kernel's limit: the whole sample must fit a 64 KiB record. */
#define HS_MAX_STACK_BYTES 65528
/* The smallest copy asked for: one word. */
#define HS_MIN_STACK_BYTES 8

/* How the user part of a chain is unwound from what the kernel recorded. */
enum hs_callgraph_unwind {
	HS_CG_UNWIND_KERNEL = 0, /* none here: the kernel's frame-pointer walk, the branch records,
	                          * or the sampled instruction alone */
	HS_CG_UNWIND_CFI,        /* the copied stack, by CFI only (dwarf) */
	HS_CG_UNWIND_AUTO,       /* the copied stack, by CFI, with a frame-pointer step where no
	                          * CFI covers the code (auto) */
};

struct hs_callgraph_opts {
	enum hs_callgraph callgraph;
	enum hs_callgraph_unwind unwind;
	bool lbr_repair;      /* struct hs_record_opts.lbr_repair */
	uint32_t stack_bytes; /* HS_CG_STACK: bytes of user stack copied per sample; 0 = default */
};

/* -g MODE: "auto" (the default), "fp", "dwarf", "dwarf,BYTES", "lbr" or "none", into ret.
 * Returns 0; -EINVAL for an unknown mode, -ERANGE when BYTES is not a number from
 * HS_MIN_STACK_BYTES to HS_MAX_STACK_BYTES. ret is untouched on failure. */
int hs_callgraph_parse(const char *mode, struct hs_callgraph_opts *ret);
/* Whether word is meant as a mode (a valid one, or dwarf,BYTES with bad BYTES): perf's -g
 * takes no mode, so "record -g -- cmd" and "-g -F 99" are -g alone, while "-g fp" is a mode. */
bool hs_callgraph_is_mode(const char *word);
/* -g as getopt_long() returned it, with "g::" among the short options and a long option
 * that requires its value: arg is its optarg. perf's -g takes no value, so -g is alone (the
 * default mode) unless the word after it (taken, *optind moved past it) or the rest of its
 * cluster (-gfp) names a mode; the rest of a cluster that names none is more options, written
 * over -g's letter as a word of its own ("-ga" read again as "-a", *optind moved back).
 * Returns the mode given, or NULL for -g alone. */
const char *hs_callgraph_getopt(char **argv, int *optind, char *arg);
/* A stack copy size (--stack-size BYTES), rounded up to whole words. Returns 0, or -ERANGE
 * as hs_callgraph_parse(). */
int hs_callgraph_stack_bytes(const char *arg, uint32_t *ret);
/* Whether the branch records repair the leaves of chains walked otherwise: they exist only
 * for hardware events. */
bool hs_callgraph_lbr_repair(const struct hs_callgraph_opts *cg, const struct hs_event_desc *event);
/* Whether off-CPU time (struct hs_record_opts.off_cpu) can be recorded with these chains: not
 * from branch records, which the CPU does not take for a thread switched out. */
bool hs_callgraph_off_cpu_ok(const struct hs_callgraph_opts *cg);
/* What does not go together in recording off-CPU time (off_cpu) with chains cg on event:
 * --off-cpu-min (min_given) without it, branch-record chains, an event that counts rather
 * than measures CPU time. NULL, or a line saying which (in buf). */
const char *hs_callgraph_off_cpu_conflict(const struct hs_callgraph_opts *cg, const struct hs_event_desc *event,
					  bool off_cpu, bool min_given, char *buf, size_t cap);
/* The fewest data pages per ring (a power of two) that hold two of the largest samples these
 * chains make: a ring smaller than one loses every sample. */
size_t hs_callgraph_min_ring_pages(enum hs_callgraph cg, uint32_t stack_bytes, size_t page_size);
/* Data pages per ring (a power of two) when none were asked for: room for about 256 samples
 * of stack_bytes each when copying stacks, else 128. */
size_t hs_callgraph_ring_pages(enum hs_callgraph cg, uint32_t stack_bytes, size_t page_size);

#endif
