/* Call-graph policy: the modes of record -g, the stack copy and the ring size it needs. */
#include "callgraph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RING_PAGES 128
/* A sample's bytes besides its stack copy, at most: its fields, a chain of the kernel's
 * maximum depth (127 frames), the user registers */
#define SAMPLE_OVERHEAD 2048

int hs_callgraph_stack_bytes(const char *arg, uint32_t *ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < HS_MIN_STACK_BYTES || v > HS_MAX_STACK_BYTES || arg[0] == '-')
		return -ERANGE;
	*ret = (uint32_t)((v + 7) & ~7UL);
	return 0;
}

int hs_callgraph_parse(const char *mode, struct hs_callgraph_opts *ret)
{
	struct hs_callgraph_opts cg = {HS_CG_NONE, HS_CG_UNWIND_KERNEL, false, 0};

	if (!strcmp(mode, "auto")) {
		cg.callgraph = HS_CG_STACK;
		cg.unwind = HS_CG_UNWIND_AUTO;
		cg.lbr_repair = true;
	} else if (!strcmp(mode, "fp")) {
		cg.callgraph = HS_CG_FP;
		cg.lbr_repair = true;
	} else if (!strcmp(mode, "none")) {
		cg.callgraph = HS_CG_NONE;
	} else if (!strcmp(mode, "dwarf") || !strncmp(mode, "dwarf,", 6)) {
		cg.callgraph = HS_CG_STACK;
		cg.unwind = HS_CG_UNWIND_CFI;
		if (mode[5] == ',' && hs_callgraph_stack_bytes(mode + 6, &cg.stack_bytes))
			return -ERANGE;
	} else if (!strcmp(mode, "lbr")) {
		cg.callgraph = HS_CG_LBR;
	} else {
		return -EINVAL;
	}
	*ret = cg;
	return 0;
}

bool hs_callgraph_is_mode(const char *word)
{
	struct hs_callgraph_opts cg;

	return hs_callgraph_parse(word, &cg) != -EINVAL;
}

const char *hs_callgraph_getopt(char **argv, int *optind, char *arg)
{
	const char *word = argv[*optind - 1];

	if (!arg) /* -g at the end of its word: the next word is its mode only if it names one */
		return argv[*optind] && hs_callgraph_is_mode(argv[*optind]) ? argv[(*optind)++] : NULL;
	if (arg == word || word[1] == '-' || hs_callgraph_is_mode(arg)) /* --call-graph [=]MODE, -gMODE */
		return arg;
	/* -gXY: more options after -g alone; "-XY" read again in place of the cluster */
	arg[-1] = '-';
	argv[--*optind] = arg - 1;
	return NULL;
}

bool hs_callgraph_lbr_repair(const struct hs_callgraph_opts *cg, const struct hs_event_desc *event)
{
	return cg->lbr_repair && event->hardware;
}

bool hs_callgraph_off_cpu_ok(const struct hs_callgraph_opts *cg)
{
	return cg->callgraph != HS_CG_LBR;
}

size_t hs_callgraph_min_ring_pages(enum hs_callgraph cg, uint32_t stack_bytes, size_t page_size)
{
	/* the kernel keeps a sample within 64 KiB, shortening the stack copy where it must */
	size_t sample = cg == HS_CG_STACK ? (size_t)stack_bytes + SAMPLE_OVERHEAD : SAMPLE_OVERHEAD, pages = 1;

	sample = sample < 65535 ? sample : 65535;
	while (pages * page_size < 2 * sample)
		pages *= 2;
	return pages;
}

size_t hs_callgraph_ring_pages(enum hs_callgraph cg, uint32_t stack_bytes, size_t page_size)
{
	size_t want, pages = 16;

	if (cg != HS_CG_STACK)
		return DEFAULT_RING_PAGES;
	/* room for about 256 samples per CPU: a quarter second at 999 Hz */
	want = (size_t)stack_bytes * 256 / page_size;
	while (pages < want && pages < 8192)
		pages *= 2;
	return pages;
}

const char *hs_callgraph_off_cpu_conflict(const struct hs_callgraph_opts *cg, const struct hs_event_desc *event,
					  bool off_cpu, bool min_given, char *buf, size_t cap)
{
	if (min_given && !off_cpu)
		snprintf(buf, cap, "--off-cpu-min goes with --off-cpu");
	else if (off_cpu && !hs_callgraph_off_cpu_ok(cg))
		snprintf(buf, cap, "--off-cpu (and --wall) does not go with -g lbr (the CPU records no branches for a "
				   "thread switched out); use -g auto");
	else if (off_cpu && !hs_event_off_cpu_ok(event))
		snprintf(buf, cap, "--off-cpu (and --wall) goes with a CPU-time event (cpu-clock, task-clock), so that on- "
				   "and off-CPU time add up to wall-clock time; '%s' counts events", event->name);
	else
		return NULL;
	return buf;
}
