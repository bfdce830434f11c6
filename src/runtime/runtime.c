/* The table of runtimes, and the names stores of a recording. */
#include "runtime/runtime.h"

#include <stdlib.h>

#include "runtime/hotspot/hotspot.h"
#include "runtime/interp/interp.h"
#include "runtime/perl/perl.h"
#include "runtime/php/php.h"
#include "runtime/python/python.h"
#include "runtime/ruby/ruby.h"
#include "runtime/v8/v8.h"
#include "util/util.h"

const struct hs_runtime *hs_runtime(unsigned id)
{
	static const struct hs_runtime *const all[HS_RT_SLOTS] = {
		[HS_RT_PYTHON] = &hs_python_runtime,
		[HS_RT_HOTSPOT] = &hs_hotspot_runtime,
		[HS_RT_V8] = &hs_v8_runtime,
		[HS_RT_RUBY] = &hs_ruby_runtime,
		[HS_RT_PHP] = &hs_php_runtime,
		[HS_RT_PERL] = &hs_perl_runtime,
	};

	return id < HS_RT_SLOTS ? all[id] : NULL;
}

/* Here, not in interp/store.c, which the languages' files call: the table calls them. */
const struct hs_ip_lang *hs_ip_lang(unsigned id)
{
	const struct hs_runtime *rt = hs_runtime(id);

	return rt ? rt->ip : NULL;
}

struct hs_rt_names *hs_rt_names_new(unsigned mask)
{
	struct hs_rt_names *n = hs_xcalloc(1, sizeof(*n));

	for (unsigned id = 1; id < HS_RT_SLOTS; id++)
		if (mask & HS_RT_BIT(id) && hs_runtime(id))
			n->store[id] = hs_runtime(id)->names_new();
	return n;
}

void hs_rt_names_free(struct hs_rt_names *n)
{
	if (!n)
		return;
	for (unsigned id = 1; id < HS_RT_SLOTS; id++)
		if (n->store[id])
			hs_runtime(id)->names_free(n->store[id]);
	free(n);
}

unsigned hs_rt_names_mask(const struct hs_rt_names *n)
{
	unsigned mask = 0;

	for (unsigned id = 1; n && id < HS_RT_SLOTS; id++)
		if (n->store[id])
			mask |= HS_RT_BIT(id);
	return mask;
}

void hs_rt_names_forget(struct hs_rt_names *n, const struct hs_u64map *gone)
{
	for (unsigned id = 1; n && id < HS_RT_SLOTS; id++)
		if (n->store[id])
			hs_runtime(id)->names_forget(n->store[id], gone);
}
