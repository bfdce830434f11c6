/* hs-jvm-probe PID: what src/hotspot/ finds in a running JVM, one fact a line, for the
 * end-to-end tests (tests/e2e/hotspot-tables.sh): the JVM and its layout, every nmethod of its
 * code cache named (with the lines of its bytecodes, its kind and the blob a lookup of its code
 * finds), the inline chains at its PcDescs, the stubs' names, its Java threads and the Java frames of
 * those out of Java (walked from their anchors). Exit 0 when the
 * tables are accepted, 2 when refused (the reason on stderr, one line), 3 when no JVM is mapped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/hotspot.h"

struct probe {
	const struct hs_jvm *jvm;
	const struct hs_rt_mem *mem;
	size_t nmethods, stubs, inlines;
};

/* "long Hot.fib(int) file=Hot.java lines=12-15" or "?" when the method does not check out */
static void print_method(const struct probe *p, uint64_t method, int32_t bci)
{
	struct hs_jvm_method m;
	char name[512];
	int lo = 0, hi = 0;

	if (hs_jvm_method_read(p->jvm, p->mem, method, &m)) {
		printf(" [unknown java]");
		return;
	}
	hs_jvm_method_format(&m, name, sizeof(name));
	for (int32_t b = 0; b < (int32_t)m.code_size; b++) {
		int l = hs_jvm_method_line(&m, b);
		if (l && (!lo || l < lo))
			lo = l;
		if (l > hi)
			hi = l;
	}
	printf(" %s|%s|%s|%s|%s|lines=%d-%d|line@bci=%d", name, m.klass, m.name, m.signature, m.file ? m.file : "-", lo,
	       hi, bci >= 0 ? hs_jvm_method_line(&m, bci) : 0);
	hs_jvm_method_release(&m);
}

/* the distinct inline chains over the nmethod's code, innermost first */
static void print_inlines(struct probe *p, const struct hs_jvm_blob *b)
{
	struct hs_jvm_scope prev[16] = {{0}};
	size_t nprev = 0;

	for (uint64_t pc = b->code_begin; pc < b->code_end; pc++) {
		struct hs_jvm_scope s[16];
		size_t n = 0;
		if (hs_jvm_scopes(p->jvm, p->mem, b, pc, s, 16, &n) || n < 2)
			continue;
		if (n == nprev && !memcmp(s, prev, n * sizeof(*s)))
			continue;
		memcpy(prev, s, n * sizeof(*s));
		nprev = n;
		printf("inline 0x%" PRIx64 " %zu", b->addr, n);
		for (size_t i = 0; i < n; i++) {
			printf(" ;");
			print_method(p, s[i].method, s[i].bci);
		}
		printf("\n");
		p->inlines++;
	}
}

static int each_blob(void *arg, const struct hs_jvm_blob *b)
{
	struct probe *p = arg;
	struct hs_jvm_blob back;
	const char *lookup;

	/* the segment map walk from the middle of the code must find this very blob */
	lookup = hs_jvm_blob_at(p->jvm, p->mem, b->code_begin + (b->code_end - b->code_begin) / 2, &back) ? "miss"
		 : back.addr == b->addr                                                                   ? "same"
													  : "other";
	if (b->code_begin == b->code_end)
		lookup = "empty";
	if (b->kind != HS_JVM_BLOB_NMETHOD) {
		printf("blob 0x%" PRIx64 " %s frame=%d lookup=%s name=%s\n", b->addr,
		       b->kind == HS_JVM_BLOB_INTERPRETER ? "interpreter" : "stub", b->frame_size, lookup, b->name);
		p->stubs++;
		return 0;
	}
	printf("nmethod 0x%" PRIx64 " %s level=%d id=%d osr=%d frame=%d code=0x%" PRIx64 "+%" PRIx64 " lookup=%s",
	       b->addr, hs_jvm_comp_name(hs_jvm_comp_of_level(b->comp_level)), b->comp_level, b->compile_id,
	       b->entry_bci != -1, b->frame_size, b->code_begin, b->code_end - b->code_begin, lookup);
	print_method(p, b->method, -1);
	printf("\n");
	p->nmethods++;
	print_inlines(p, b);
	return 0;
}

/* " ; KIND NAME @LINE" for one Java method of a walk */
static void print_frame(const struct probe *p, const char *kind, uint64_t method, int32_t bci)
{
	struct hs_jvm_method m;
	char name[512];

	if (hs_jvm_method_read(p->jvm, p->mem, method, &m)) {
		printf(" ; %s [unknown java]", kind);
		return;
	}
	hs_jvm_method_format(&m, name, sizeof(name));
	printf(" ; %s %s @%d", kind, name, bci >= 0 ? hs_jvm_method_line(&m, bci) : 0);
	hs_jvm_method_release(&m);
}

/* the Java frames of a thread out of Java, from its JavaFrameAnchor (the pc there, or else the
 * return address below its sp); a compiled frame's methods from its scopes, inlined first */
static void print_walk(const struct probe *p, const struct hs_jvm_thread *t)
{
	static const char *const ends[] = {"", "entry", "native", "fault", "max"};
	struct hs_jvm_frame f[64];
	enum hs_jvm_walk_end end;
	uint64_t pc = t->last_pc;
	size_t n = 0;

	if (!t->last_sp || (!pc && p->mem->read(p->mem->ctx, t->last_sp - 8, &pc, 8)))
		return;
	hs_jvm_walk(p->jvm, p->mem, t->last_sp, t->last_fp, pc, f, 64, &n, &end);
	printf("walk tid=%d end=%s frames=%zu", t->tid, ends[end], n);
	for (size_t i = 0; i < n; i++) {
		struct hs_jvm_scope sc[16];
		struct hs_jvm_blob b;
		size_t ns = 0;

		if ((f[i].comp == HS_JVM_C1 || f[i].comp == HS_JVM_C2) &&
		    !hs_jvm_blob_at(p->jvm, p->mem, f[i].pc, &b) && b.compile_id == f[i].compile_id &&
		    !hs_jvm_scopes(p->jvm, p->mem, &b, f[i].pc, sc, 16, &ns) && ns) {
			for (size_t k = 0; k < ns; k++)
				print_frame(p, k + 1 < ns ? "inlined" : hs_jvm_comp_name(f[i].comp), sc[k].method,
					    sc[k].bci);
		} else if (f[i].method) {
			print_frame(p, hs_jvm_comp_name(f[i].comp), f[i].method, f[i].bci);
		} else {
			printf(" ; %s", hs_jvm_comp_name(f[i].comp));
		}
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	struct hs_jvm jvm;
	struct hs_rt_mem mem;
	struct probe p = {&jvm, &mem, 0, 0, 0};
	struct hs_jvm_thread threads[256];
	uint64_t ib, ie;
	size_t n = 0;
	char why[256] = "";
	int32_t pid;

	if (argc != 2 || (pid = (int32_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: hs-jvm-probe PID\n");
		return 1;
	}
	switch (hs_jvm_find(pid, &jvm, why, sizeof(why))) {
	case HS_JVM_NOT_JAVA:
		fprintf(stderr, "no JVM in process %d\n", (int)pid);
		return 3;
	case HS_JVM_UNSUPPORTED:
		fprintf(stderr, "%s\n", why);
		return 2;
	case HS_JVM_SUPPORTED:
		break;
	}
	mem = hs_rt_mem_pid(pid);
	printf("jvm %u.%u.%u+%u release=%s path=%s\n", jvm.major, jvm.minor, jvm.security, jvm.build, jvm.release,
	       jvm.path);
	printf("layout kind_by=%s code_by=%s nm_data=%s heap_block=%u frame_complete_size=%u comp_level_size=%u\n",
	       jvm.info.off.kind_by == HS_JVM_KIND_FIELD ? "field" : "name",
	       jvm.info.off.code_by == HS_JVM_CODE_OFFSET ? "offset" : "addr",
	       jvm.lay.nm_data == HS_JVM_NM_APART ? "apart" : "in-blob", jvm.info.off.block_size,
	       jvm.info.off.blob_frame_complete_size, jvm.info.off.nmethod_comp_level_size);
	if (!hs_jvm_interpreter(&jvm, &mem, &ib, &ie))
		printf("interpreter 0x%" PRIx64 "-0x%" PRIx64 "\n", ib, ie);
	if (hs_jvm_blobs_each(&jvm, &mem, 200000, each_blob, &p))
		printf("code cache unreadable\n");
	if (!hs_jvm_threads(&jvm, &mem, threads, 256, &n))
		for (size_t i = 0; i < n; i++) {
			printf("thread tid=%d state=%d last_sp=0x%" PRIx64 "\n", threads[i].tid, threads[i].state,
			       threads[i].last_sp);
			print_walk(&p, &threads[i]);
		}
	printf("summary nmethods=%zu stubs=%zu inlines=%zu threads=%zu\n", p.nmethods, p.stubs, p.inlines, n);
	return 0;
}
