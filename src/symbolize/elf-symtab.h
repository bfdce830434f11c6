/* Function symbols of one ELF object (.symtab, else .dynsym, plus synthesized name@plt
 * entries), with its loadable segments, so that a file offset seen in a process can be turned
 * into a symbol. Self-contained once loaded: it keeps no reference to the Elf handle. */
#ifndef HS_ELF_SYMTAB_H
#define HS_ELF_SYMTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/elf.h"

struct hs_elf_sym {
	uint64_t addr, size; /* ELF virtual address; size 0 is resolved to the next symbol */
	uint32_t name;       /* offset in names */
};

struct hs_elf_segment {
	uint64_t offset, vaddr, filesz, memsz; /* a PT_LOAD program header */
};

struct hs_elf_symtab {
	struct hs_elf_sym *syms;   /* sorted by addr, one per address */
	size_t nsyms;
	struct hs_elf_segment *segs;
	size_t nsegs;
	char *names;
	size_t names_len;
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool from_symtab;          /* .symtab was present (not only .dynsym) */
};

/* Caps on what a file can make us allocate. */
#define HS_ELF_MAX_SYMBOLS (16u << 20)
#define HS_ELF_MAX_NAME 4096

/* Loads symbols from an open Elf. Returns 0, -EBADMSG (not a usable ELF), -EOVERFLOW (over a
 * cap). *ret must be freed with hs_elf_symtab_free(). */
int hs_elf_symtab_load(Elf *elf, struct hs_elf_symtab **ret);
/* The same, plus the .symtab of extra, an image whose addresses are elf's (MiniDebugInfo);
 * from_symtab tells whether extra had one. extra may be NULL. */
int hs_elf_symtab_load_extra(Elf *elf, Elf *extra, struct hs_elf_symtab **ret);
void hs_elf_symtab_free(struct hs_elf_symtab *st);

/* The ELF virtual address that a file offset is loaded at; false when no PT_LOAD covers it. */
bool hs_elf_symtab_offset_to_vaddr(const struct hs_elf_symtab *st, uint64_t off, uint64_t *ret);
/* The symbol containing vaddr, or NULL. */
const struct hs_elf_sym *hs_elf_symtab_lookup(const struct hs_elf_symtab *st, uint64_t vaddr);
static inline const char *hs_elf_sym_name(const struct hs_elf_symtab *st, const struct hs_elf_sym *s)
{
	return st->names + s->name;
}


#endif
