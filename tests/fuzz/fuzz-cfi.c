/* libFuzzer target: the CFI table compiler on an ELF image (elf_memory, then
 * hs_cfi_table_build), then lookups at every row's start, around it and at addresses the input
 * names, checking the table's contract. Corpus: tests/fuzz/corpus/cfi/ (small real ELF files). */
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_error err = {0};
	struct hs_cfi_table *t = NULL;
	/* libelf reads the image in place: give it an aligned copy, as a mapped file is */
	char *img = malloc(size ? size : 1);
	Elf *elf;

	memcpy(img, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(img, size);
	if (elf && hs_cfi_table_build(elf, NULL, &t, &err) == 0) {
		uint64_t extra[2] = {0, UINT64_MAX};

		for (size_t i = 0; i < t->n; i++) {
			const struct hs_cfi_row *r = hs_cfi_table_find(t, t->base + t->rows[i].pc);
			/* sorted by pc; the row found for a row's start starts there */
			if ((i && t->rows[i - 1].pc > t->rows[i].pc) || !r || r->pc != t->rows[i].pc)
				abort();
			if (t->rows[i].pc)
				hs_cfi_table_find(t, t->base + t->rows[i].pc - 1);
		}
		if (size >= 16)
			memcpy(extra, data + size - 16, 16);
		hs_cfi_table_find(t, extra[0]);
		hs_cfi_table_find(t, extra[1]);
		hs_cfi_table_find(t, t->base + (extra[0] & 0xffff));
		hs_cfi_table_bytes(t);
		hs_cfi_table_free(t);
	}
	elf_end(elf);
	free(img);
	return 0;
}
