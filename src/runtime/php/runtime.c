/* PHP as a runtime (runtime/runtime.h) and as a scripting language read as Python is
 * (runtime/interp/interp.h): its finding, its reader's process table and BPF object, and how
 * its frames are named and merged. */
#include "runtime/php/php.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "util/util.h"
#include "php.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_php_proc p;

	switch (hs_php_find(pid, &p, why, whylen)) {
	case HS_PHP_SUPPORTED:
		*proc = hs_xmalloc(sizeof(p));
		memcpy(*proc, &p, sizeof(p));
		return HS_RT_SUPPORTED;
	case HS_PHP_UNSUPPORTED:
		return HS_RT_UNSUPPORTED;
	default:
		return HS_RT_ABSENT;
	}
}

static int proc_info(const void *proc, void *ret)
{
	const struct hs_php_proc *p = proc;
	const struct hs_php_offsets *o = &p->info.off;

	/* the program reads at most 64 bytes of a frame and 256 of a function, its fields aligned */
	if (o->ex_read > 64 || o->fn_read > 256 || o->op_read > 256 || o->ex_read < o->ex_prev + 8 ||
	    o->op_read < o->op_line_start + 4 || (o->ex_func & 7) || (o->ex_prev & 7) || (o->ex_opline & 7) ||
	    (o->fn_name & 7) || (o->op_filename & 7) || (o->op_opcodes & 7) || !o->op_size)
		return -EINVAL;
	memcpy(ret, &p->info, sizeof(p->info));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_php_reader__elf_bytes(size);
}

const struct hs_ip_lang hs_php_lang = {
	.id = HS_RT_PHP,
	.tag = "php",
	.name = "PHP",
	.native_class = hs_php_native_class,
	.maybe = hs_php_maybe,
	.unnamed_class = hs_php_unnamed_class,
	.code_read = hs_php_code_read,
	.line = NULL, /* read at sample time */
	.proc_size = sizeof(struct hs_php_proc),
	.by_aux = true,
};

HS_IP_STORE_OPS(hs_php_lang)

const struct hs_runtime hs_php_runtime = {
	.id = HS_RT_PHP,
	.name = "PHP",
	.versions = "8.2 (non-thread-safe, x86_64)",
	.shows = "execute_ex and the engine's unnamed handlers",
	.fallback = NULL,
	.maybe = hs_php_maybe,
	.look_ms = 200,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_php_proc_info),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
	.ip = &hs_php_lang,
};
