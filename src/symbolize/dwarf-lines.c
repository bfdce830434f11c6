/* Inline chains from DWARF (DWARF 5 section 3.3.8: DW_TAG_inlined_subroutine with its call site,
 * DW_AT_call_file / DW_AT_call_line): the scopes around an address, innermost first, are the
 * inlined functions down to the subprogram; each inlined function's position is the line table's
 * line for the innermost, and the call site of the function inlined into it for the others. */
#include "dwarf-lines.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

static const char *die_linkage(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	/* through DW_AT_abstract_origin and DW_AT_specification, as the name of an inlined
	 * instance lives on its abstract origin */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	return s;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

/* The file a DW_AT_call_file index names, in the CU's file table. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr(die, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int64_t call_line(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!dwarf_attr(die, DW_AT_call_line, &a) || dwarf_formudata(&a, &v))
		return 0;
	return (int64_t)v;
}

int hs_dwarf_frames(Dwarf *dw, uint64_t vaddr, struct hs_src_frame *out, int max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *ln;
	const char *file = NULL;
	int64_t line = 0;
	int n, k = 0;

	if (!dw || max <= 0 || !dwarf_addrdie(dw, vaddr, &cu))
		return 0;
	ln = dwarf_getsrc_die(&cu, vaddr);
	if (ln) {
		int l = 0;
		file = dwarf_linesrc(ln, NULL, NULL);
		if (dwarf_lineno(ln, &l) == 0)
			line = l;
	}
	/* dwarf_getscopes continues from an inlined instance into its abstract origin's scopes;
	 * the innermost function's own containing scopes, in the concrete tree, come from
	 * dwarf_getscopes_die (as eu-addr2line -i does) */
	n = dwarf_getscopes(&cu, vaddr, &scopes);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			Dwarf_Die die = scopes[i];
			free(scopes);
			scopes = NULL;
			n = dwarf_getscopes_die(&die, &scopes);
			break;
		}
	}
	for (int i = 0; i < n && k < max && k < HS_DWARF_MAX_INLINE; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *linkage, *name;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		linkage = die_linkage(&scopes[i]);
		name = die_name(&scopes[i]);
		out[k].name = name ? name : linkage;
		out[k].linkage = linkage;
		out[k].file = file;
		out[k].line = line;
		if (out[k].name)
			k++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the next function out holds the call site of this one */
		file = call_file(&cu, &scopes[i]);
		line = call_line(&scopes[i]);
	}
	free(scopes);
	if (k == 0 && file && max > 0) {
		/* a line without a function scope (assembly): the line alone */
		out[0].name = NULL;
		out[0].linkage = NULL;
		out[0].file = file;
		out[0].line = line;
		return 0;
	}
	return k;
}
