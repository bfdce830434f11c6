/* Small readers of ELF metadata shared by the stages that open ELF files (through libelf). */
#ifndef HS_FORMAT_ELF_H
#define HS_FORMAT_ELF_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads the GNU build-id note of an ELF (section headers first, then program headers); returns
 * its size, 0 when there is none. */
size_t hs_elf_build_id(Elf *elf, uint8_t *buf, size_t cap);

/* The first section of that name holding data (not SHT_NOBITS, as a debug file's copies of
 * code sections are), or NULL; and whether there is one. */
Elf_Scn *hs_elf_section(Elf *elf, const char *name);
bool hs_elf_has_section(Elf *elf, const char *name);

#endif
