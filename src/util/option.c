/* Option tables (util/option.h) into getopt_long's table and into --help text. */
#include "util/option.h"

#include <errno.h>
#include <stdlib.h>

#include "util/strbuf.h"

size_t hs_options_getopt(const struct hs_option *t, struct option *to, size_t n, size_t cap)
{
	for (; t->name || t->help || t->more; t++) {
		if (t->more) {
			n = hs_options_getopt(t->more, to, n, cap);
			continue;
		}
		if (!t->name)
			continue;
		if (n + 1 >= cap)
			abort();
		to[n++] = (struct option){t->name, t->arg, t->flag, t->key};
	}
	to[n] = (struct option){0, 0, 0, 0};
	return n;
}

void hs_options_help(const struct hs_option *t, struct hs_strbuf *sb)
{
	for (; t->name || t->help || t->more; t++) {
		if (t->more)
			hs_options_help(t->more, sb);
		else if (t->help)
			hs_strbuf_adds(sb, t->help);
	}
}

int hs_option_ulong(const char *arg, const char *what, unsigned long lo, unsigned long hi, unsigned long *ret,
		    struct hs_error *err)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi || arg[0] == '-')
		return hs_error_set(err, -EINVAL, "invalid %s '%s' (expected a number from %lu to %lu)", what, arg, lo,
				    hi);
	*ret = v;
	return 0;
}
