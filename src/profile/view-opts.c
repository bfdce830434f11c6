/* The filter and perf.data options of the commands that read a profile: rows and values. */
#include "profile/view-opts.h"

#include <errno.h>

enum { PID = HS_OPT_FILTER, TID, COMM, INCLUDE, EXCLUDE, TIME, MIN_PERCENT };

const struct hs_option hs_filter_options[] = {
	{"pid", PID, required_argument, "      --pid PID[,PID...]  only samples of these processes\n"},
	{"tid", TID, required_argument, "      --tid TID[,TID...]  only samples of these threads\n"},
	{"comm", COMM, required_argument, "      --comm REGEX        only threads whose command name matches\n"},
	{"include", INCLUDE, required_argument,
	 "      --include REGEX     only samples with a frame whose function matches\n"},
	{"exclude", EXCLUDE, required_argument,
	 "      --exclude REGEX     no samples with a frame whose function matches\n"},
	{"time", TIME, required_argument,
	 "      --time START,END    only samples in this window, seconds from the first sample\n"
	 "                          (either may be left out; needs timestamps)\n"},
	{"min-percent", MIN_PERCENT, required_argument,
	 "      --min-percent P     frames under P% of the total (in the call tree) folded into one\n"
	 "                          frame; the report's tree shows lines from P% (default 0.5)\n"},
	{0},
};

int hs_filter_option(struct hs_filter *f, int key, const char *arg, double *tree_min, struct hs_error *err)
{
	struct hs_error re = {0};

	switch (key) {
	case PID:
	case TID:
		if (hs_filter_add_ids(f, key == TID, arg))
			return hs_error_set(err, -EINVAL, "invalid %s list '%s'",
					    key == TID ? "thread id" : "process id", arg);
		return 1;
	case COMM:
	case INCLUDE:
	case EXCLUDE:
		if (hs_filter_add_regex(f,
					key == COMM      ? HS_FILTER_COMM
					: key == INCLUDE ? HS_FILTER_INCLUDE
							 : HS_FILTER_EXCLUDE,
					arg, &re))
			return hs_error_set(err, -EINVAL, "invalid regular expression '%s': %s", arg, re.detail);
		return 1;
	case TIME:
		if (hs_filter_set_time(f, arg))
			return hs_error_set(err, -EINVAL,
					    "invalid --time '%s' (START,END in seconds from the first sample, or with "
					    "units: 1.5s,2m; START < END; either may be left out)",
					    arg);
		return 1;
	case MIN_PERCENT:
		if (hs_filter_set_min_percent(f, arg))
			return hs_error_set(err, -EINVAL, "invalid --min-percent '%s' (a percentage from 0 to 100)",
					    arg);
		*tree_min = f->min_percent > 0 ? f->min_percent : -1;
		return 1;
	}
	return 0;
}

const struct hs_option hs_load_symbol_options[] = {
	{"symfs", HS_LOAD_SYMFS, required_argument,
	 "      --symfs DIR         perf.data: look the recording's files up under DIR first (DIR/PATH,\n"
	 "                          and their debug files under DIR/usr/lib/debug): another machine's\n"
	 "                          or an image's files\n"},
	{"no-demangle", HS_LOAD_NO_DEMANGLE, no_argument,
	 "      --no-demangle       perf.data: C++ and Rust symbols as they are in the symbol table\n"},
	{"no-inline", HS_LOAD_NO_INLINE, no_argument,
	 "      --no-inline         perf.data: no DWARF debug information: no inline frames, no\n"
	 "                          source lines (faster where debug information is large)\n"},
	{0},
};

int hs_load_symbol_option(struct hs_load_opts *o, int key, const char *arg)
{
	switch (key) {
	case HS_LOAD_NO_DEMANGLE:
	case HS_LOAD_NO_INLINE:
		*(key == HS_LOAD_NO_INLINE ? &o->no_inline : &o->no_demangle) = true;
		return 1;
	case HS_LOAD_SYMFS:
		o->symfs = arg;
		return 1;
	}
	return 0;
}
