/* Names for the functions of a stripped file that its .dynsym does not name: each function its
 * .eh_frame describes (one FDE each), as FILE+0xADDRESS. */
#ifndef HS_FDE_NAMES_H
#define HS_FDE_NAMES_H

#include <libelf.h>

#include "symbolize/elf-symtab.h"

/* Adds to st (loaded from elf, a file without .symtab) a symbol for each function of elf's
 * .eh_frame whose start no symbol of st covers, named "MODULE+0xADDR": module is the file's base
 * name, ADDR the start's ELF virtual address in lower-case hex (what addr2line -e FILE, nm, and
 * readelf's FDE listing show: the same as the file offset in the first segment of most
 * libraries, not in general). Its size is the FDE's, cut at the next symbol. Returns how many
 * were added, or a negative errno (-EOVERFLOW past a cap: st is then unchanged). */
int hs_elf_symtab_add_fde_functions(struct hs_elf_symtab *st, Elf *elf, const char *module);

#endif
