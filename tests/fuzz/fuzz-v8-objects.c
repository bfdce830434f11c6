/* libFuzzer target: V8's objects read by src/runtime/v8/ from a memory image as if from a
 * process, with node 20's layout (from tests/fuzz/v8-syms.h): every 8-byte word of the image's
 * first 4 KiB taken for a tagged pointer to a SharedFunctionInfo, a string, a Script (its line
 * ends), a source position table (at several offsets) and a Code (its inlined functions). Seeds:
 * tests/fuzz/v8-image.py OUT. Corpus: tests/fuzz/corpus/v8-objects/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/v8/v8.h"
#include "v8-syms.h"

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

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct hs_v8_sym *)a)->name, ((const struct hs_v8_sym *)b)->name);
}

static const struct hs_v8_layout *layout(void)
{
	static struct hs_v8_layout l;
	static struct hs_v8_sym v[sizeof(fuzz_v8_syms) / sizeof(*fuzz_v8_syms)];
	static int done;
	struct hs_v8_syms s = {v, sizeof(v) / sizeof(*v), {11, 3, 244, 8}, 0, 0, 0, 0, 0, NULL, 0};
	char why[256];

	if (done)
		return &l;
	for (size_t i = 0; i < s.n; i++)
		v[i] = (struct hs_v8_sym){(char *)fuzz_v8_syms[i].name, fuzz_v8_syms[i].value};
	qsort(v, s.n, sizeof(*v), by_name);
	if (hs_v8_layout_read(&s, &l, why, sizeof(why)))
		abort(); /* node 20's own values must be accepted */
	done = 1;
	return &l;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct hs_v8_layout *l = layout();
	struct image im = {data, size};
	struct hs_rt_mem mem = {image_read, &im};

	for (uint64_t a = BASE; a + 8 <= BASE + size && a < BASE + 4096; a += 8) {
		struct hs_v8_function f;
		struct hs_v8_scope sc[8];
		struct hs_v8_pos pos;
		uint32_t *ends;
		uint64_t p;
		size_t n;
		char buf[64];
		int line, col;

		memcpy(&p, data + (a - BASE), 8);
		if (!hs_v8_sfi_read(l, &mem, p, &f) && (strlen(f.name) >= sizeof(f.name) || strlen(f.file) >= sizeof(f.file)))
			abort();
		if (!hs_v8_string(l, &mem, p, buf, sizeof(buf)) && strlen(buf) >= sizeof(buf))
			abort();
		if (!hs_v8_line_ends(l, &mem, p, &ends, &n)) {
			for (size_t i = 1; i < n; i++)
				if (ends[i] < ends[i - 1] && n > (1u << 24))
					abort();
			hs_v8_line_of(ends, n, 5, &line, &col);
			if (line < 0 || col < 0)
				abort();
			free(ends);
		}
		for (int64_t off = -1; off < 64; off += 13)
			if (!hs_v8_position(l, &mem, p, off, &pos) && pos.offset < 0)
				abort();
		pos = (struct hs_v8_pos){3, 2};
		if (!hs_v8_inlined(l, &mem, p, pos, sc, 8, &n) && n > 8)
			abort();
	}
	return 0;
}
