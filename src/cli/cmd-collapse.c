/* hotstack collapse: perf script text to folded stacks, line for line what FlameGraph's
 * stackcollapse-perf.pl prints for the same input and options (the engine is in
 * src/collapse/); here are its options and its messages. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "collapse/collapse.h"
#include "util/outfile.h"

static const char collapse_usage[] =
	"usage: hotstack collapse [FILE|-] [options]\n"
	"Folds `perf script` text (FILE, gzipped or not; standard input by default) into one line\n"
	"per distinct stack, \"comm;root;...;leaf count\", as stackcollapse-perf.pl does.\n"
	"\n"
	"  -o, --output FILE       write FILE instead of standard output\n"
	"      --pid               root is comm-PID\n"
	"      --tid               root is comm-PID/TID\n"
	"      --kernel            _[k] after kernel functions\n"
	"      --jit               _[j] after JIT functions (from /tmp/perf-PID.map)\n"
	"      --all               --kernel and --jit\n"
	"      --addrs             [module <address>] for frames without a symbol\n"
	"      --event-filter=EVENT  only samples of EVENT (default: the first event in the input)\n"
	"      --inline            expand inlined functions with addr2line (binutils)\n"
	"      --context           with --inline: function:file:line\n"
	"      --srcline           the input is from perf script -F+srcline: add :file:line to names\n"
	"  -q, --quiet             no warnings\n";

enum { OPT_EVENT_FILTER = OPT_CMD_BASE };

/* The flags, set by getopt_long itself (the options' flag pointers) */
static int pid_root, tid_root, kernel, jit, all, addrs, inline_, context, srcline;

static void print_warning(void *ctx, const char *msg)
{
	cli_warn("%s", msg);
}

static void collapse_error(const struct hs_error *err, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	if (err->cause == HS_COLLAPSE_CANNOT_READ)
		cli_error("cannot read '%s': %s", path, strerror(-err->code));
	else if (err->line)
		cli_error("%s: line %llu: %s%s", name, (unsigned long long)err->line, err->detail,
			  err->code == -EMEDIUMTYPE ? ": run 'perf script' on it" : "");
	else
		cli_error("%s: %s", name, err->detail);
}

int cmd_collapse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"pid", no_argument, &pid_root, 1},
		{"tid", no_argument, &tid_root, 1},
		{"kernel", no_argument, &kernel, 1},
		{"jit", no_argument, &jit, 1},
		{"all", no_argument, &all, 1},
		{"addrs", no_argument, &addrs, 1},
		{"event-filter", required_argument, NULL, OPT_EVENT_FILTER},
		{"inline", no_argument, &inline_, 1},
		{"context", no_argument, &context, 1},
		{"srcline", no_argument, &srcline, 1},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct hs_collapse_opts co = {.warn = print_warning};
	struct hs_collapse *c;
	struct hs_error err = {0};
	struct hs_outfile of;
	const char *path = "-", *out = "-";
	int ch, rc;

	while ((ch = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 0: /* a flag */
			break;
		case OPT_EVENT_FILTER:
			co.event_filter = optarg;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'h':
			fputs(collapse_usage, stdout);
			return 0;
		default:
			return cli_option_error(argv[0], ch, argv, longopts);
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	co.pid = pid_root, co.tid = tid_root, co.kernel = kernel || all, co.jit = jit || all, co.addrs = addrs;
	co.inline_ = inline_, co.context = context, co.srcline = srcline;
	rc = hs_outfile_open(&of, out);
	if (rc) {
		cli_error("cannot write '%s': %s", out, strerror(-rc));
		hs_outfile_abort(&of);
		return 1;
	}
	c = hs_collapse_new(&co);
	rc = hs_collapse_read(c, path, &err);
	if (rc) {
		collapse_error(&err, path);
		hs_outfile_abort(&of);
	} else {
		hs_collapse_write(c, &of);
		rc = hs_outfile_commit(&of);
		if (rc)
			cli_error("cannot write '%s': %s", out, strerror(-rc));
	}
	hs_collapse_free(c);
	return rc ? 1 : 0;
}
