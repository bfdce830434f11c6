/* The options that choose which runtimes' frames a recording reads (--no-python, ...) and which
 * keep the interpreter's own frames between them (--python-internals, ...): record's rows. */
#include <getopt.h>

#include "runtime/opts.h"

/* no-X: HS_OPT_RUNTIME + its id; X-internals: 32 further */
#define NO(id) (HS_OPT_RUNTIME + (id))
#define KEEP(id) (HS_OPT_RUNTIME + 32 + (id))

const struct hs_option hs_runtime_options[] = {
	{"no-python", NO(HS_RT_PYTHON), no_argument,
	 "      --no-python         no Python frames: CPython code shows as the interpreter's frames\n"},
	{"no-java", NO(HS_RT_HOTSPOT), no_argument,
	 "      --no-java           no Java frames read from the JVM: its code is named by its perf map\n"},
	{"no-js", NO(HS_RT_V8), no_argument,
	 "      --no-js             no JavaScript frames read from V8: its code is [anon] or a perf map's\n"},
	{"python-internals", KEEP(HS_RT_PYTHON), no_argument,
	 "      --python-internals  keep the interpreter's frames between Python frames (docs/python.md)\n"},
	{"js-internals", KEEP(HS_RT_V8), no_argument,
	 "      --js-internals      keep V8's builtins and entry frames between JavaScript frames\n"},
	{"no-ruby", NO(HS_RT_RUBY), no_argument,
	 "      --no-ruby, --no-php, --no-perl\n"
	 "                          no Ruby (PHP, Perl) frames: their code shows as the interpreter's frames\n"},
	{"no-php", NO(HS_RT_PHP), no_argument, NULL},
	{"no-perl", NO(HS_RT_PERL), no_argument, NULL},
	{"ruby-internals", KEEP(HS_RT_RUBY), no_argument,
	 "      --ruby-internals, --php-internals, --perl-internals\n"
	 "                          keep the interpreter's frames between Ruby (PHP, Perl) frames\n"
	 "                          (docs/interpreters.md)\n"},
	{"php-internals", KEEP(HS_RT_PHP), no_argument, NULL},
	{"perl-internals", KEEP(HS_RT_PERL), no_argument, NULL},
	{0},
};

int hs_runtime_option(struct hs_rt_choice *c, int key)
{
	if (key >= NO(0) && key < NO(HS_RT_SLOTS))
		c->off |= HS_RT_BIT(key - NO(0));
	else if (key >= KEEP(0) && key < KEEP(HS_RT_SLOTS))
		c->internals |= HS_RT_BIT(key - KEEP(0));
	else
		return 0;
	return 1;
}
