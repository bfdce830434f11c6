/* libFuzzer target: ELF symbol loading (hs_elf_symtab_load, and with the image as its own
 * MiniDebugInfo), the build-id reader, then lookups of every symbol and of file offsets,
 * checking the table's contract. Corpus: tests/fuzz/corpus/elf-symtab/ (small real ELF files). */
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/elf.h"
#include "symbolize/elf-symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct hs_elf_symtab *st, const uint8_t *data, size_t size)
{
	uint64_t v, extra = 0;

	for (size_t i = 0; i < st->nsyms; i++) {
		const struct hs_elf_sym *s = &st->syms[i], *l;

		/* sorted, one per address, names inside the table */
		if ((i && st->syms[i - 1].addr >= s->addr) || s->name >= st->names_len)
			abort();
		strlen(hs_elf_sym_name(st, s));
		l = hs_elf_symtab_lookup(st, s->addr);
		if (s->size && l != s)
			abort();
		hs_elf_symtab_lookup(st, s->addr + s->size);
		hs_elf_symtab_lookup(st, s->addr - 1);
	}
	for (size_t i = 0; i < st->nsegs; i++) {
		hs_elf_symtab_offset_to_vaddr(st, st->segs[i].offset, &v);
		hs_elf_symtab_offset_to_vaddr(st, st->segs[i].offset + st->segs[i].filesz, &v);
	}
	if (size >= 8)
		memcpy(&extra, data + size - 8, 8);
	if (hs_elf_symtab_offset_to_vaddr(st, extra & 0xfffff, &v))
		hs_elf_symtab_lookup(st, v);
	hs_elf_symtab_lookup(st, extra);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_elf_symtab *st = NULL;
	uint8_t id[20];
	/* libelf reads the image in place: give it an aligned copy, as a mapped file is */
	char *img = malloc(size ? size : 1);
	Elf *elf;

	memcpy(img, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(img, size);
	if (elf) {
		hs_elf_build_id(elf, id, sizeof(id));
		hs_elf_has_section(elf, ".symtab");
		if (hs_elf_symtab_load(elf, &st) == 0) {
			check(st, data, size);
			hs_elf_symtab_free(st);
		}
		if (hs_elf_symtab_load_extra(elf, elf, &st) == 0) {
			check(st, data, size);
			hs_elf_symtab_free(st);
		}
	}
	elf_end(elf);
	free(img);
	return 0;
}
