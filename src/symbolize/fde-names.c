/* Stripped code named per function, not per file: where neither .symtab nor a debug file names
 * a function, the unwinder's own reading of .eh_frame (unwind/cfi.c) tells where each starts. */
#include "fde-names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
#include "util/util.h"

int hs_elf_symtab_add_fde_functions(struct hs_elf_symtab *st, Elf *elf, const char *module)
{
	struct hs_cfi_function *fns = NULL;
	struct hs_elf_sym *syms;
	HS_VEC(char) names = {0};
	size_t nfns = 0, n = 0, i = 0, j = 0, added = 0, mlen;
	const char *slash = strrchr(module, '/');
	int rc = hs_cfi_functions(elf, &fns, &nfns);

	if (rc || !nfns) {
		free(fns);
		return rc;
	}
	module = slash ? slash + 1 : module;
	mlen = strnlen(module, HS_ELF_MAX_NAME - 20);
	if (st->nsyms + nfns > HS_ELF_MAX_SYMBOLS) {
		free(fns);
		return -EOVERFLOW;
	}
	syms = hs_xcalloc(st->nsyms + nfns, sizeof(*syms));
	hs_vec_reserve(&names, st->names_len + nfns * (mlen + 20));
	memcpy(names.v, st->names, st->names_len);
	names.n = st->names_len;
	/* a merge of two sorted lists: the table's symbols as they are, and the functions that
	 * start where none of them does */
	while (i < st->nsyms || j < nfns) {
		const struct hs_cfi_function *f = j < nfns ? &fns[j] : NULL;
		uint64_t size;
		int len;

		if (!f || (i < st->nsyms && st->syms[i].addr <= f->start)) {
			syms[n++] = st->syms[i++];
			continue;
		}
		j++;
		if (hs_elf_symtab_lookup(st, f->start))
			continue; /* inside a named function (or its own start): named already */
		size = f->size;
		if (i < st->nsyms && st->syms[i].addr - f->start < size)
			size = st->syms[i].addr - f->start;
		if (names.n + mlen + 20 > UINT32_MAX) {
			rc = -EOVERFLOW;
			break;
		}
		hs_vec_reserve(&names, names.n + mlen + 20);
		len = snprintf(names.v + names.n, mlen + 20, "%.*s+0x%" PRIx64, (int)mlen, module, f->start);
		syms[n++] = (struct hs_elf_sym){f->start, size, (uint32_t)names.n};
		names.n += (size_t)len + 1;
		added++;
	}
	free(fns);
	if (rc) {
		free(syms);
		hs_vec_free(&names);
		return rc;
	}
	free(st->syms);
	free(st->names);
	st->syms = syms;
	st->nsyms = n;
	st->names = names.v;
	st->names_len = names.n;
	return (int)HS_MIN(added, (size_t)INT32_MAX);
}
