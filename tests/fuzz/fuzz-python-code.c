/* libFuzzer target: a Python code object, its strings and line table, and a thread's frames, read
 * by src/python/ from a memory image as if from a process. Byte 0 picks the version (3.8 + n % 6),
 * the rest is memory at BASE with the code object at its start (its own ob_type taken for
 * PyCode_Type, so that the rest is reached); the same bytes are also a line table, and
 * _PyRuntime for a frame walk. Corpus: tests/fuzz/corpus/python-code/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/python/python.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im = {data + 1, size ? size - 1 : 0};
	struct hs_rt_mem mem = {image_read, &im};
	const struct hs_py_interp *l;
	struct hs_py_interp in;
	struct hs_py_code c;
	struct hs_py_frame frames[HS_PY_MAX_FRAMES];
	uint16_t flags;
	uint64_t v;

	if (!size)
		return 0;
	l = hs_py_layout(HS_PY_VERSION(3, 8 + data[0] % 6));
	if (!l)
		abort();
	in = *l;
	if (im.n >= 16)
		memcpy(&in.info.code_type, im.p + 8, 8);
	in.info.runtime = BASE;
	if (hs_py_code_read(&in, &mem, BASE, &c) == 0) {
		if (!c.name || !c.file || strlen(c.name) > 4096 || strlen(c.file) > 16384)
			abort();
		for (uint32_t off = 0; off < 512; off += 2)
			if (hs_py_code_line(&c, off) < 0)
				abort();
		hs_py_code_release(&c);
	}
	/* the bytes as a line table of the version, in a block of their own size */
	c = (struct hs_py_code){.version = in.version, .firstlineno = 1, .linetable_size = im.n};
	c.linetable = malloc(im.n ? im.n : 1);
	memcpy(c.linetable, im.p, im.n);
	for (uint32_t off = 0; off < 2048; off += 14)
		if (hs_py_code_line(&c, off) < 0)
			abort();
	free(c.linetable);
	/* a walk with the thread id at the image's start */
	if (im.n >= 8) {
		memcpy(&v, im.p, 8);
		if (hs_py_walk(&in, &mem, v, frames, HS_PY_MAX_FRAMES, &flags) > HS_PY_MAX_FRAMES)
			abort();
	}
	return 0;
}
