/* The folded stacks of hotstack collapse: each distinct line once, with its count kept as
 * stackcollapse-perf.pl's Perl keeps it, written out in the order Perl's sort gives. */
#ifndef HS_COLLAPSE_STACK_TABLE_H
#define HS_COLLAPSE_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"
#include "util/outfile.h"
#include "util/util.h"

/* A count as Perl keeps it: an unsigned integer until a sum overflows, a double after. */
struct hs_perl_count {
	uint64_t u;
	double d;
	bool nv; /* d holds the value */
};

void hs_perl_count_add(struct hs_perl_count *c, const struct hs_perl_count *v);

struct hs_stack_line {
	size_t off, len; /* in keys */
	struct hs_perl_count n;
};

/* All zero is an empty table. */
struct hs_stack_table {
	HS_VEC(struct hs_stack_line) lines;
	char *keys; /* the lines' bytes, one after another */
	size_t keys_len, keys_cap;
	struct hs_index ix;
};

/* Adds v to the count of the line p (n bytes, copied on first sight); returns the line's id,
 * which stays valid as long as the table. */
uint32_t hs_stack_table_add(struct hs_stack_table *t, const char *p, size_t n, const struct hs_perl_count *v);
/* Adds v to the count of the line with this id. */
void hs_stack_table_count(struct hs_stack_table *t, uint32_t id, const struct hs_perl_count *v);
/* Writes "LINE COUNT\n" for each line, sorted as Perl's sort { $a cmp $b } sorts, to of; a
 * failed write is left in of->err (stopping there) for hs_outfile_commit() to return. */
void hs_stack_table_write(const struct hs_stack_table *t, struct hs_outfile *of);
void hs_stack_table_release(struct hs_stack_table *t);

#endif
