/* hotstack's entry point: the command table (git's builtin table, in small). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"record", cmd_record, "record stacks of a command, processes, or the whole system"},
	{"report", cmd_view, "text report: top functions by self and total"},
	{"flame", cmd_view, "interactive flame graph of a profile (SVG, or HTML for large ones)"},
	{"convert", cmd_view, "convert a profile to another format"},
	{"collapse", cmd_collapse, "perf script text to folded stacks (stackcollapse-perf.pl)"},
	{"script", cmd_view, "every sample of a perf.data as perf script text"},
	{"diff", cmd_diff, "what changed between two profiles: differential flame graph, or text"},
	{"annotate", cmd_view, "samples per source line of a function (perf annotate)"},
	{"top", cmd_top, "live view of the functions taking CPU time now (perf top)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hotstack <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < HS_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'hotstack help <command>' (or 'hotstack <command> --help') for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	opterr = 0; /* cli_option_error() says what is wrong, in one line */
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) { /* git's "help CMD" */
		char *av[] = {argv[2], "--help", NULL};
		for (size_t i = 0; i < HS_ARRAY_SIZE(commands) && argc == 3; i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].fn(2, av);
		cli_error(argc > 3 ? "help: one command, no more words: '%s'"
				   : "help: '%s' is not a hotstack command (see 'hotstack --help')",
			  argv[argc > 3 ? 3 : 2]);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hotstack %s\n", HOTSTACK_VERSION);
		return 0;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	const char *names[HS_ARRAY_SIZE(commands)], *near;
	for (size_t i = 0; i < HS_ARRAY_SIZE(commands); i++)
		names[i] = commands[i].name;
	near = hs_closest_word(argv[1], names, HS_ARRAY_SIZE(names));
	if (near)
		cli_error("'%s' is not a hotstack command: did you mean '%s'? (see 'hotstack --help')", argv[1], near);
	else
		cli_error("'%s' is not a hotstack command (see 'hotstack --help')", argv[1]);
	return 2;
}
