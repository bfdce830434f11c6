/* hotstack collapse's options: stackcollapse-perf.pl's, each setting the engine's struct
 * hs_collapse_opts. */
#include "collapse/collapse.h"

/* each the offset of its flag in struct hs_collapse_opts, from HS_OPT_COLLAPSE */
#define FLAG(f) (HS_OPT_COLLAPSE + (int)offsetof(struct hs_collapse_opts, f))
enum { ALL = HS_OPT_COLLAPSE + 64, EVENT_FILTER };

const struct hs_option hs_collapse_options[] = {
	{"output", 'o', required_argument, "  -o, --output FILE       write FILE instead of standard output\n"},
	{"pid", FLAG(pid), no_argument, "      --pid               root is comm-PID\n"},
	{"tid", FLAG(tid), no_argument, "      --tid               root is comm-PID/TID\n"},
	{"kernel", FLAG(kernel), no_argument, "      --kernel            _[k] after kernel functions\n"},
	{"jit", FLAG(jit), no_argument,
	 "      --jit               _[j] after JIT functions (from /tmp/perf-PID.map)\n"},
	{"all", ALL, no_argument, "      --all               --kernel and --jit\n"},
	{"addrs", FLAG(addrs), no_argument,
	 "      --addrs             [module <address>] for frames without a symbol\n"},
	{"event-filter", EVENT_FILTER, required_argument,
	 "      --event-filter=EVENT  only samples of EVENT (default: the first event in the input)\n"},
	{"inline", FLAG(inline_), no_argument,
	 "      --inline            expand inlined functions with addr2line (binutils)\n"},
	{"context", FLAG(context), no_argument, "      --context           with --inline: function:file:line\n"},
	{"srcline", FLAG(srcline), no_argument,
	 "      --srcline           the input is from perf script -F+srcline: add :file:line to names\n"},
	{"quiet", 'q', no_argument, "  -q, --quiet             no warnings\n"},
	{"help", 'h', no_argument, NULL},
	{0},
};

int hs_collapse_option(struct hs_collapse_opts *o, int key, const char *arg)
{
	if (key == ALL)
		o->kernel = o->jit = true;
	else if (key == EVENT_FILTER)
		o->event_filter = arg;
	else if (key >= FLAG(pid) && key <= FLAG(srcline))
		*(bool *)((char *)o + (key - HS_OPT_COLLAPSE)) = true;
	else
		return 0;
	return 1;
}
