/* Names people can read: C++ (Itanium ABI) and Rust (legacy and v0) symbols demangled through
 * libiberty, the demangler of binutils and GCC. */
#ifndef HS_DEMANGLE_H
#define HS_DEMANGLE_H

/* The demangled form of a symbol name (malloc'd, the caller frees), or NULL when the name is
 * not mangled (or not in a scheme libiberty knows). Function parameters are kept, as perf
 * shows them; a PLT entry's "NAME@plt" is the demangled NAME with "@plt". Thread-safe. */
char *hs_demangle(const char *name);

#endif
