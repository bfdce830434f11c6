/* Kernel symbols from /proc/kallsyms (or a file in its format), modules included. */
#ifndef HS_KALLSYMS_H
#define HS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_ksym {
	uint64_t addr;
	uint32_t name;   /* offset in names */
	uint32_t module; /* offset in names of the module name, 0 for the kernel itself */
	bool global;     /* T or W: shown in preference to a local alias */
};

struct hs_kallsyms {
	struct hs_ksym *syms; /* sorted by addr */
	size_t n;
	char *names;          /* names[0] is "" */
	size_t names_len;
	uint64_t text_end;    /* end of the last symbol's page range, as far as kallsyms tells */
};

/* Loads the text symbols of path. Returns 0, -errno, or -ENODATA when every address reads as
 * zero (kptr_restrict hides them). */
int hs_kallsyms_load(const char *path, struct hs_kallsyms **ret);
void hs_kallsyms_free(struct hs_kallsyms *k);
/* The symbol at or below addr, or NULL (below the first symbol or past the end of text). */
const struct hs_ksym *hs_kallsyms_lookup(const struct hs_kallsyms *k, uint64_t addr);

#endif
