/* Demangling through libiberty's cplus_demangle: its "auto" style recognises the Itanium C++
 * ABI (_Z...) and Rust's legacy scheme (_ZN...17h<hash>E, shown without the hash); Rust's v0
 * scheme (_R...) needs its style asked for. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#define HS_DEMANGLE_MAX_INPUT 8192

char *hs_demangle(const char *name)
{
	int style;

	if (!name || name[0] != '_' || strlen(name) > HS_DEMANGLE_MAX_INPUT)
		return NULL;
	if (name[1] == 'R')
		style = DMGL_RUST;
	else if (name[1] == 'Z')
		style = DMGL_AUTO;
	else
		return NULL;
	/* a PLT entry's name (elf-symtab.c): the function it calls, demangled, with "@plt" kept */
	size_t n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, "@plt")) {
		char *base = strndup(name, n - 4), *d = base ? cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI | style) : NULL;
		char *full = d ? malloc(strlen(d) + 5) : NULL;

		if (full) {
			memcpy(full, d, strlen(d));
			memcpy(full + strlen(d), "@plt", 5);
		}
		free(base);
		free(d);
		return full;
	}
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | style);
}
