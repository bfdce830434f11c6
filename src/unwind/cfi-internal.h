/* What the two halves of the CFI table compiler share: unwind/cfi.c finds the sections, then
 * sorts, merges and looks up the table; unwind/cfi-program.c reads CIEs and FDEs and runs their
 * programs into its rows. Not for use outside them. */
#ifndef HS_CFI_INTERNAL_H
#define HS_CFI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"
#include "util/hashmap.h"
#include "util/util.h"

/* Bytes of call frame information (borrowed from the ELF file or the caller) and how to read them. */
struct hs_cfi_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;  /* address of data[0] */
	bool eh;         /* .eh_frame conventions (else .debug_frame) */
	uint64_t datarel; /* base for DW_EH_PE_datarel */
	uint8_t addr_size;
};

/* A row as an FDE's program emits it (seq: the order of emission), before the table is sorted. */
struct hs_cfi_pending_row {
	uint64_t pc;
	uint32_t seq;
	struct hs_cfi_row row;
};

/* The functions FDEs describe (hs_cfi_functions()): an HS_VEC that the builder can point to. */
struct hs_cfi_function_vec {
	struct hs_cfi_function *v;
	size_t n, cap;
};

/* A table being built (unwind/cfi.c): the rows FDEs emitted, the register rules they share. */
struct hs_cfi_builder {
	HS_VEC(struct hs_cfi_pending_row) rows;
	uint32_t seq;
	struct hs_cfi_stats *stats;
	int err;
	HS_VEC(struct hs_cfi_regs) regs; /* the table's register rules, each once */
	struct hs_index regs_ix;
	/* when set, the FDEs' functions are listed here and their programs not run */
	struct hs_cfi_function_vec *functions;
};

/* A builder holding the two register sets every table has: none, and callee-saved registers
 * lost (the rows of an unsupported rule). */
void hs_cfi_builder_init(struct hs_cfi_builder *b, struct hs_cfi_stats *stats);
/* The index of a set of register rules in the table, added when new (HS_CFI_REGS_LOST once the
 * table holds HS_CFI_MAX_REGS of them). */
uint16_t hs_cfi_builder_intern_regs(struct hs_cfi_builder *b, const struct hs_cfi_regs *e);
/* Adds the row that holds from pc on; over HS_CFI_MAX_ROWS, sets b->err to -EOVERFLOW instead. */
void hs_cfi_builder_push_row(struct hs_cfi_builder *b, uint64_t pc, const struct hs_cfi_row *row);

/* Compiles the FDEs of .eh_frame into b: those that .eh_frame_hdr's table lists when hdr is given
 * and usable, else every one from the start of the section. Malformed entries are skipped and
 * counted in b->stats. */
void hs_cfi_walk_eh_frame(struct hs_cfi_builder *b, const struct hs_cfi_section *eh, const struct hs_cfi_section *hdr);
/* The same for every FDE of .debug_frame. */
void hs_cfi_walk_debug_frame(struct hs_cfi_builder *b, const struct hs_cfi_section *df);
/* The address of .eh_frame that .eh_frame_hdr holds (eh_frame_ptr); false when it cannot be read. */
bool hs_cfi_eh_frame_hdr_ptr(const struct hs_cfi_section *hdr, uint64_t *ret);

#endif
