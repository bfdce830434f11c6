/* Inline frames and source lines from DWARF, through libdw: for an address of an ELF file, the
 * chain of functions inlined at it (innermost first) down to the function the code belongs to,
 * each with its file and line. */
#ifndef HS_DWARF_LINES_H
#define HS_DWARF_LINES_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct hs_src_frame {
	const char *name;     /* DW_AT_name (or the linkage name when there is no other); borrowed */
	const char *linkage;  /* DW_AT_linkage_name, mangled, or NULL; borrowed */
	const char *file;     /* source file, or NULL; borrowed */
	int64_t line;         /* 0 when unknown */
};

/* Caps: inline depth per address, and DIE scopes looked through. */
#define HS_DWARF_MAX_INLINE 64

/* Frames for vaddr (an ELF virtual address), innermost first, in out[0..max). Returns how many
 * (0: no debug information covers vaddr). Strings live as long as dw. */
int hs_dwarf_frames(Dwarf *dw, uint64_t vaddr, struct hs_src_frame *out, int max);

#endif
