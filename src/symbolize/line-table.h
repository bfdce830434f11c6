/* A compile unit's line table (DWARF 5 section 6.2, and versions 2 to 4) read from .debug_line
 * into what a source line needs: rows of (address, file, line), sorted by address, with the
 * unit's file names. libdw keeps every register of every row (over 60 bytes a row in all), and
 * keeps them for as long as the file is open: tens of megabytes for a program built with -g
 * (a Python). These rows take 16 bytes, and a row that says what the row before it in its
 * sequence says is not kept. Lookups answer as libdw's dwarf_getsrc_die() does. */
#ifndef HS_LINE_TABLE_H
#define HS_LINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections a line table is read from (bytes as libdw leaves them, uncompressed); a section
 * that is not there has size 0. */
struct hs_line_sections {
	const unsigned char *line, *line_str, *str;
	uint64_t line_size, line_str_size, str_size;
};

struct hs_line_row {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* HS_LINE_END: the end of a sequence, after its last address */
};
#define HS_LINE_END UINT32_MAX

struct hs_line_table {
	struct hs_line_row *rows; /* sorted by address */
	size_t n;
	char **files; /* each file's name as libdw's dwarf_linesrc() makes it */
	size_t nfiles;
	size_t bytes; /* what the table holds in all */
};

/* Rows read at most from one unit's line program, and files named by one header: caps on what
 * a file makes us allocate. */
#define HS_LINE_MAX_ROWS (64u << 20)
#define HS_LINE_MAX_FILES (1u << 20)

/* Reads the line program at offset off of s->line, of a unit whose DW_AT_comp_dir is comp_dir
 * (NULL when it has none). Returns 0 with *ret set (free with hs_line_table_free()); -EBADMSG
 * for a program that does not parse; -EOPNOTSUPP for one this reader leaves to libdw (a version
 * or a form it does not read, DW_LNE_define_file). */
int hs_line_table_read(const struct hs_line_sections *s, uint64_t off, const char *comp_dir,
		       struct hs_line_table **ret);
void hs_line_table_free(struct hs_line_table *t);

/* The file (borrowed from t) and line of addr; false when no sequence holds it. */
bool hs_line_table_find(const struct hs_line_table *t, uint64_t addr, const char **file, int64_t *line);
/* File idx of the unit's file table (as DW_AT_call_file names it), or NULL. */
const char *hs_line_table_file(const struct hs_line_table *t, uint64_t idx);

#endif
