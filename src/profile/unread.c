/* What a recording could not name: the processes whose samples are mostly in JIT code without
 * names or in an interpreter's loop without one frame of its language, with the runtime they
 * run (told by the files their stacks run in) and what would name their code. */
#include "profile/unread.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/interp/interp.h"
#include "runtime/python/merge.h"
#include "runtime/runtime.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* The slot of code in no runtime hotstack knows: JIT code of a runtime that is none of them. */
#define UNKNOWN_JIT 0

struct proc {
	int32_t pid;
	uint32_t comm;
	int64_t total;
	int64_t unread[HS_RT_SLOTS]; /* by runtime id; [UNKNOWN_JIT]: JIT code of no known runtime */
	unsigned seen;               /* runtimes whose files its stacks run in */
};

/* Which runtime's kind of frame kind is: its id, or 0. */
static unsigned kind_runtime(uint8_t kind)
{
	switch (kind) {
	case HS_KIND_PYTHON: return HS_RT_PYTHON;
	case HS_KIND_JAVA_INTERP:
	case HS_KIND_JAVA_C1:
	case HS_KIND_JAVA_C2: return HS_RT_HOTSPOT;
	case HS_KIND_JS_INTERP:
	case HS_KIND_JS_BASELINE:
	case HS_KIND_JS_OPT:
	case HS_KIND_JS_BUILTIN: return HS_RT_V8;
	case HS_KIND_RUBY: return HS_RT_RUBY;
	case HS_KIND_PHP: return HS_RT_PHP;
	case HS_KIND_PERL: return HS_RT_PERL;
	default: return 0;
	}
}

/* Whether native function name is runtime rt's interpreter loop, where its frames would be. */
static bool is_loop(const struct hs_runtime *rt, const char *name)
{
	if (rt->id == HS_RT_PYTHON)
		return hs_py_native_class(name, false) == HS_PY_NATIVE_EVAL;
	if (rt->ip && rt->ip->native_class)
		return rt->ip->native_class(name) == HS_IP_NATIVE_LOOP;
	/* V8's interpreter runs bytecode in this builtin, which names no JavaScript function */
	return rt->id == HS_RT_V8 && !strcmp(name, "Builtins_InterpreterEntryTrampoline");
}

static bool unnamed(const char *name)
{
	size_t n = strlen(name);
	return !n || (name[0] == '[' && name[n - 1] == ']');
}

/* The runtimes whose files mapping m can be (bits by id), kept in seen_of (mapping -> bits + 1). */
static unsigned runtimes_of(const struct hs_profile *p, uint32_t m, struct hs_u64map *seen_of)
{
	uint64_t bits = 0;
	const char *file;

	if (!m)
		return 0;
	if (hs_u64map_get(seen_of, m, &bits))
		return (unsigned)bits - 1;
	file = hs_profile_str(p, p->mappings.v[m].file);
	for (unsigned id = 1; id < HS_RT_SLOTS; id++) {
		const struct hs_runtime *rt = hs_runtime(id);
		if (rt && rt->maybe && *file && rt->maybe(file))
			bits |= HS_RT_BIT(id);
	}
	hs_u64map_put(seen_of, m, bits + 1);
	return (unsigned)bits;
}

/* One sample of stack st worth v, of process pr: where it is unread, if it is. */
static void add_sample(const struct hs_profile *p, const struct hs_stack *st, int64_t v, struct proc *pr,
		       struct hs_u64map *seen_of)
{
	unsigned seen = 0, framed = 0, loop = 0;
	bool anon_jit = false;

	for (uint32_t k = 0; k < st->nlocs; k++) {
		uint32_t loc = p->stack_locs.v[st->loc0 + k];
		const struct hs_location *l = &p->locations.v[loc];
		const char *name = hs_profile_location_name(p, loc);
		unsigned in = runtimes_of(p, l->mapping, seen_of);

		framed |= HS_RT_BIT(kind_runtime(l->kind));
		if (l->kind == HS_KIND_JIT && unnamed(name))
			anon_jit = true;
		seen |= in;
		for (unsigned id = 1; in && id < HS_RT_SLOTS; id++)
			if ((in & HS_RT_BIT(id)) && is_loop(hs_runtime(id), name))
				loop |= HS_RT_BIT(id);
	}
	framed &= ~HS_RT_BIT(0);
	pr->seen |= seen;
	pr->total = hs_add_sat(pr->total, v);
	if (framed)
		return;
	if (anon_jit)
		pr->unread[UNKNOWN_JIT] = hs_add_sat(pr->unread[UNKNOWN_JIT], v);
	for (unsigned id = 1; id < HS_RT_SLOTS; id++)
		if (loop & HS_RT_BIT(id)) {
			pr->unread[id] = hs_add_sat(pr->unread[id], v);
			break;
		}
}

/* What names runtime rt's code, as a person does it; read: whether its reader was on. */
static void add_remedy(struct hs_strbuf *sb, const struct hs_runtime *rt, bool read)
{
	static const char *const off_flag[HS_RT_SLOTS] = {
		[HS_RT_PYTHON] = "--no-python", [HS_RT_HOTSPOT] = "--no-java", [HS_RT_V8] = "--no-js",
		[HS_RT_RUBY] = "--no-ruby",     [HS_RT_PHP] = "--no-php",      [HS_RT_PERL] = "--no-perl",
	};

	if (!read && off_flag[rt->id])
		hs_strbuf_addf(sb, "its frames were not read (%s): record without it", off_flag[rt->id]);
	else
		hs_strbuf_addf(sb,
			       "hotstack reads %s frames of %s: another version or build is refused (said above), "
			       "and a process it found too late or could not read shows as %s",
			       rt->name, rt->versions, rt->shows);
	if (rt->fallback)
		hs_strbuf_addf(sb, "; %s", rt->fallback);
	else if (rt->id == HS_RT_HOTSPOT)
		hs_strbuf_adds(sb, "; a perf map still names its methods (-XX:+UnlockDiagnosticVMOptions "
				   "-XX:+DumpPerfMapAtExit, or jcmd PID Compiler.perfmap)");
}

void hs_profile_unread_note(const struct hs_profile *p, unsigned read_mask, struct hs_strbuf *sb)
{
	struct hs_u64map by_pid = {0}, seen_of = {0};
	HS_VEC(struct proc) procs = {0};
	int64_t all = 0;

	if (!p->types.n)
		return;
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		int64_t v = p->values.v[i * p->types.n];
		uint64_t ix;

		if (v <= 0 || s->pid <= 0)
			continue;
		all = hs_add_sat(all, v);
		if (!hs_u64map_get(&by_pid, (uint64_t)s->pid, &ix)) {
			ix = procs.n;
			hs_vec_push(&procs, ((struct proc){.pid = s->pid, .comm = s->comm}));
			hs_u64map_put(&by_pid, (uint64_t)s->pid, ix);
		}
		add_sample(p, &p->stacks.v[s->stack], v, &procs.v[ix], &seen_of);
	}
	for (size_t i = 0; i < procs.n; i++) {
		const struct proc *pr = &procs.v[i];
		const struct hs_runtime *rt = NULL;
		int64_t un = 0;
		unsigned id;

		for (id = 0; id < HS_RT_SLOTS; id++)
			un = hs_add_sat(un, pr->unread[id]);
		/* mostly unnamed, and a good part of the recording: a side process says nothing */
		if (un * 2 <= pr->total || un * 5 < all)
			continue;
		for (id = 1; id < HS_RT_SLOTS && !rt; id++)
			if (pr->unread[id] * 2 > un)
				rt = hs_runtime(id);
		/* JIT code without names in a process running a JIT runtime hotstack knows is its */
		if (!rt && (pr->seen & (HS_RT_BIT(HS_RT_HOTSPOT) | HS_RT_BIT(HS_RT_V8))))
			rt = hs_runtime(pr->seen & HS_RT_BIT(HS_RT_HOTSPOT) ? HS_RT_HOTSPOT : HS_RT_V8);
		hs_strbuf_addf(sb, "%.0f%% of the samples of %s (pid %d) are in ", 100.0 * (double)un / (double)all,
			       pr->comm ? hs_profile_str(p, pr->comm) : "?", (int)pr->pid);
		if (rt) {
			hs_strbuf_addf(sb, "%s code that has no names here: ", rt->name);
			add_remedy(sb, rt, read_mask & HS_RT_BIT(rt->id));
		} else {
			hs_strbuf_adds(sb, "JIT code without names of a runtime hotstack does not read (it reads Python, "
					   "Java, JavaScript, Ruby, PHP and Perl): where the runtime can write a perf map "
					   "(/tmp/perf-PID.map) or a jitdump, hotstack names the code from it (.NET: "
					   "DOTNET_PerfMapEnabled=1)");
		}
		hs_strbuf_addc(sb, '\n');
	}
	hs_u64map_release(&by_pid);
	hs_u64map_release(&seen_of);
	hs_vec_free(&procs);
}
