/* Perl as a runtime (runtime/runtime.h): its finding, its reader's process table and BPF
 * object, and its language for the common parts of the scripting runtimes (interp.h). */
#include "runtime/perl/perl.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "util/util.h"
#include "perl.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_pl_interp in;
	int found = hs_pl_find(pid, &in, why, whylen);

	if (found == HS_RT_SUPPORTED) {
		*proc = hs_xmalloc(sizeof(in));
		memcpy(*proc, &in, sizeof(in));
	}
	return (enum hs_rt_found)found;
}

static int proc_info(const void *proc, void *ret)
{
	const struct hs_pl_interp *in = proc;

	memcpy(ret, &in->info, sizeof(in->info));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_perl__elf_bytes(size);
}

const struct hs_ip_lang hs_perl_lang = {
	.id = HS_RT_PERL,
	.tag = "perl",
	.name = "Perl",
	.native_class = hs_pl_native_class,
	.maybe = hs_pl_maybe_runtime,
	.code_read = hs_pl_code_read,
	.line = NULL, /* read at sample time */
	.proc_size = sizeof(struct hs_pl_interp),
};

HS_IP_STORE_OPS(hs_perl_lang)

const struct hs_runtime hs_perl_runtime = {
	.id = HS_RT_PERL,
	.name = "Perl",
	.versions = "5.36 with ithreads on x86_64",
	.shows = "the interpreter's native frames",
	.fallback = NULL,
	.maybe = hs_pl_maybe_runtime,
	/* an embedder sets its interpreter up after loading libperl and its modules: on a busy
	 * machine that took over a second (the recording then never read its frames) */
	.look_ms = 5000,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_pl_proc_info),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
	.ip = &hs_perl_lang,
};
