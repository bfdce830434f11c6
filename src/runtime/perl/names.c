/* Naming Perl frames from the process's memory (perl.h): a sub's name HEK and its package's
 * stash, an eval's or a required file's name; and what perl's native functions are to the
 * merge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/perl/perl.h"
#include "util/util.h"

#define NAME_MAX_BYTES 1024
#define FILE_MAX_BYTES 4096

/* The bytes of the HEK at hek into buf (NUL-ended, cut to size - 1), and its hash in *hash:
 * its length, or -1 when it cannot be read. */
static int hek_read(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, uint64_t hek, char *buf, size_t size,
		    uint32_t *hash)
{
	const struct hs_pl_offsets *o = &in->info.off;
	int32_t len;
	size_t n;

	if (!hek || mem->read(mem->ctx, hek, hash, sizeof(*hash)) ||
	    mem->read(mem->ctx, hek + o->hek_len, &len, sizeof(len)) || len < 0 || len > NAME_MAX_BYTES)
		return -1;
	n = HS_MIN((size_t)len, size - 1);
	if (n && mem->read(mem->ctx, hek + o->hek_key, buf, n))
		return -1;
	buf[n] = 0;
	if (strlen(buf) != n)
		return -1; /* a name with a NUL in it: not one perl makes */
	return (int)n;
}

int hs_pl_stash_name(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, uint64_t hv, char *buf, size_t size)
{
	const struct hs_pl_offsets *o = &in->info.off;
	uint64_t body, name;
	uint32_t flags, hash;
	int32_t count;

	if (!hv || mem->read(mem->ctx, hv + o->sv_flags, &flags, sizeof(flags)) ||
	    (flags & HS_PL_SVT_MASK) != HS_PL_SVT_PVHV || !(flags & HS_PL_SVF_OOK) ||
	    mem->read(mem->ctx, hv, &body, sizeof(body)) || !body ||
	    mem->read(mem->ctx, body + o->hv_aux + o->aux_name, &name, sizeof(name)) ||
	    mem->read(mem->ctx, body + o->hv_aux + o->aux_name_count, &count, sizeof(count)) || !name)
		return -1;
	/* a stash renamed or aliased keeps its names in an array: its first the effective one,
	 * with a count below 0 when that is not a name of its own (hv.h's HvENAME) */
	if (count && mem->read(mem->ctx, name + (count < 0 ? 8 : 0), &name, sizeof(name)))
		return -1;
	return hek_read(in, mem, name, buf, size, &hash) < 0 ? -1 : 0;
}

/* The C string at addr, or NULL. */
static char *cstr_read(const struct hs_rt_mem *mem, uint64_t addr)
{
	char buf[FILE_MAX_BYTES];
	size_t got = 0;

	if (!addr)
		return NULL;
	/* a page at a time: the string may end just before an unmapped one */
	while (got < sizeof(buf) - 1) {
		size_t chunk = HS_MIN(4096 - ((addr + got) & 4095), sizeof(buf) - 1 - got);
		if (mem->read(mem->ctx, addr + got, buf + got, chunk))
			break;
		if (memchr(buf + got, 0, chunk))
			return hs_xstrdup(buf);
		got += chunk;
	}
	if (!got)
		return NULL;
	buf[got] = 0;
	return hs_xstrdup(buf);
}

int hs_pl_code_read(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f, struct hs_ip_code *c)
{
	const struct hs_pl_interp *in = proc;
	char name[NAME_MAX_BYTES + 1], pkg[NAME_MAX_BYTES + 1];
	uint64_t stash = f->aux & 0xffffffffffffULL;
	uint32_t hash;
	char *file = NULL;

	switch (HS_PL_FN_KIND(f->fn)) {
	case HS_PL_FN_SUB:
		if (hek_read(in, mem, HS_PL_FN_ADDR(f->fn), name, sizeof(name), &hash) < 0 ||
		    (hash & 0xffff) != f->aux >> 48)
			return -1;
		/* a sub of a package gone has no package name left (Perl_gv_fullname4) */
		if (hs_pl_stash_name(in, mem, stash, pkg, sizeof(pkg)))
			snprintf(pkg, sizeof(pkg), "__ANON__");
		memset(c, 0, sizeof(*c));
		c->name = hs_xmalloc(strlen(pkg) + strlen(name) + 3);
		sprintf(c->name, "%s::%s", pkg, name);
		break;
	case HS_PL_FN_EVAL:
	case HS_PL_FN_REQUIRE:
	case HS_PL_FN_MAIN:
		file = cstr_read(mem, f->extra);
		if (HS_PL_FN_KIND(f->fn) != HS_PL_FN_MAIN) {
			/* the file the reader saw: the same string (cut as bpf_probe_read_user_str()
			 * cuts), not another at its address. An eval's goes with it: one that ended
			 * before its frame was named (one further out than the innermost few is read
			 * when the profile is made) is an eval of no file */
			uint64_t w[HS_PL_FILE_HASH_BYTES / 8] = {0};
			if (file)
				memcpy(w, file, HS_MIN(strlen(file), sizeof(w) - 1));
			if (hs_pl_file_hash(w) != f->aux) {
				free(file);
				file = NULL;
			}
		}
		memset(c, 0, sizeof(*c));
		c->name = hs_xstrdup(HS_PL_FN_KIND(f->fn) == HS_PL_FN_EVAL      ? "(eval)"
				     : HS_PL_FN_KIND(f->fn) == HS_PL_FN_REQUIRE ? "(require)"
										: "main");
		c->file = file;
		return 0;
	default:
		return -1;
	}
	c->file = cstr_read(mem, f->extra);
	return 0;
}

/* perl's machinery between one Perl frame and the next, or between the program's start and its
 * first: the ops (pp_entersub calls a sub, pp_sort runs a sort block, the others are the
 * statement the innermost frame is at) and the C API that calls back into Perl. Functions they
 * call that do work of their own (the regex engine, hashes, I/O, an extension's XS code) stay. */
/* clang-format off */
static const char *const plumbing_exact[] = {
	"Perl_call_sv", "Perl_call_method", "Perl_call_pv", "Perl_call_argv", "Perl_call_list",
	"Perl_eval_sv", "Perl_eval_pv", "Perl_require_pv", "Perl_sortsv", "Perl_sortsv_flags",
	"Perl_amagic_call", "Perl_magic_methcall", "Perl_sighandler", "Perl_sighandler1",
	"Perl_sighandler3", "Perl_despatch_signals", "Perl_call_atexit", "Perl_runops_wrap",
};
/* clang-format on */

enum hs_ip_native hs_pl_native_class(const char *name)
{
	size_t n;

	if (!name)
		return HS_IP_NATIVE_OTHER;
	n = strcspn(name, "."); /* a compiler's suffix: ".constprop.0", ".cold" */
	if ((n == 20 && !strncmp(name, "Perl_runops_standard", n)) ||
	    (n == 17 && !strncmp(name, "Perl_runops_debug", n)))
		return HS_IP_NATIVE_LOOP;
	if (!strncmp(name, "Perl_pp_", 8))
		return HS_IP_NATIVE_PLUMBING;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing_exact); i++)
		if (strlen(plumbing_exact[i]) == n && !strncmp(name, plumbing_exact[i], n))
			return HS_IP_NATIVE_PLUMBING;
	return HS_IP_NATIVE_OTHER;
}
