/* CRuby as a runtime (runtime/runtime.h): its finding, its reader's process table and BPF
 * object, its records and its names store (the common one of the scripting runtimes). */
#include "runtime/ruby/ruby.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "util/util.h"
#include "ruby.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_rb_proc p;

	switch (hs_rb_find(pid, &p, why, whylen)) {
	case HS_RB_SUPPORTED:
		*proc = hs_xmalloc(sizeof(p));
		memcpy(*proc, &p, sizeof(p));
		return HS_RT_SUPPORTED;
	case HS_RB_UNSUPPORTED:
		return HS_RT_UNSUPPORTED;
	default:
		return HS_RT_ABSENT;
	}
}

static int proc_info(const void *proc, void *ret)
{
	const struct hs_rb_proc *p = proc;

	memcpy(ret, &p->info, sizeof(p->info));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_ruby__elf_bytes(size);
}

HS_IP_STORE_OPS(hs_rb_lang)

const struct hs_runtime hs_ruby_runtime = {
	.id = HS_RT_RUBY,
	.name = "Ruby",
	.versions = "CRuby 3.1",
	.shows = "the interpreter's native frames",
	.fallback = NULL,
	.maybe = hs_rb_maybe,
	.look_ms = 1000,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_rb_proc_info),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
	.ip = &hs_rb_lang,
};
