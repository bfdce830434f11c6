/* libFuzzer target: a JVM's VMStructs tables and what they lead to, read by src/hotspot/ from a
 * memory image as if from a process. The input is memory at BASE whose first 20 words are the
 * values of the tables' symbols (hs_jvm_sym_names, in order); when the tables are accepted, the
 * code cache, the threads, methods and scopes are read from the same image. Seeds:
 * tests/fuzz/hotspot-image.py PID OUT, from a running JVM. Corpus: tests/fuzz/corpus/hotspot-tables/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/hotspot.h"

#define BASE 0x100000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct image {
	const uint8_t *p;
	size_t n;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct image *im = ctx;

	if (addr < BASE || addr - BASE > im->n || n > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->p + (addr - BASE), n);
	return 0;
}

struct walk {
	const struct hs_jvm *jvm;
	const struct hs_rt_mem *mem;
};

static int each_blob(void *arg, const struct hs_jvm_blob *b)
{
	const struct walk *w = arg;
	struct hs_jvm_scope s[8];
	struct hs_jvm_blob back;
	size_t n = 0;

	if (b->size <= 0 || b->code_begin > b->code_end)
		abort();
	hs_jvm_blob_at(w->jvm, w->mem, b->code_begin, &back);
	if (!hs_jvm_scopes(w->jvm, w->mem, b, b->code_begin, s, 8, &n) && n > 8)
		abort();
	return 0;
}

/* every 8-byte-aligned word of the image taken for a Method* */
static void methods(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, size_t size)
{
	for (uint64_t a = BASE; a < BASE + size && a < BASE + 4096; a += 8) {
		struct hs_jvm_method m;
		char buf[256];
		if (hs_jvm_method_read(jvm, mem, a, &m))
			continue;
		if (!m.klass || !m.name || !m.signature || strlen(m.name) > 1024)
			abort();
		hs_jvm_method_format(&m, buf, sizeof(buf));
		for (int32_t bci = -1; bci < 64; bci++)
			if (hs_jvm_method_line(&m, bci) < 0)
				abort();
		hs_jvm_method_release(&m);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im = {data, size};
	struct hs_rt_mem mem = {image_read, &im};
	struct hs_jvm_thread threads[16];
	struct hs_jvm jvm;
	struct hs_jvm_blob b;
	struct walk w = {&jvm, &mem};
	uint64_t syms[HS_JVM_NSYMS], ib, ie;
	char why[256];
	size_t n;

	for (int i = 0; i < HS_JVM_NSYMS; i++)
		syms[i] = BASE + 8 * (uint64_t)i;
	why[0] = 0;
	if (hs_jvm_read_tables(&mem, syms, &jvm, why, sizeof(why))) {
		if (!why[0] || strchr(why, '\n'))
			abort(); /* a refusal is one line */
		return 0;
	}
	hs_jvm_interpreter(&jvm, &mem, &ib, &ie);
	hs_jvm_blobs_each(&jvm, &mem, 64, each_blob, &w);
	for (uint64_t pc = BASE; pc < BASE + size && pc < BASE + 4096; pc += 64)
		hs_jvm_blob_at(&jvm, &mem, pc, &b);
	if (!hs_jvm_threads(&jvm, &mem, threads, 16, &n) && n > 16)
		abort();
	methods(&jvm, &mem, size);
	return 0;
}
