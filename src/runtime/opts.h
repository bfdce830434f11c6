/* record's options that choose which runtimes' frames a recording reads (src/runtime/opts.c). */
#ifndef HS_RUNTIME_OPTS_H
#define HS_RUNTIME_OPTS_H

#include "runtime/runtime.h"
#include "util/option.h"

/* What they chose: HS_RT_BIT()s of the runtimes whose frames are not read, and of those whose
 * interpreter frames are kept between theirs. */
struct hs_rt_choice {
	unsigned off, internals;
};
/* Their rows (--no-python, --python-internals, ...), with record's help. */
extern const struct hs_option hs_runtime_options[];
/* Takes option key into c: 1, or 0 when it is none of those. */
int hs_runtime_option(struct hs_rt_choice *c, int key);

#endif
