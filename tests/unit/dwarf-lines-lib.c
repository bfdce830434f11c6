/* For test-dwarf-lines: a function with another inlined into it, built twice (DWARF 4 and
 * DWARF 5, DWARF_V naming which) from build/, so that its DWARF names this file relatively. The
 * outer function records the return address of a call made from the inlined code. */
#include <stdint.h>

#define CAT2(a, b, c) a##b##c
#define CAT(a, b, c) CAT2(a, b, c)
#define NAME(x) CAT(dwarf, DWARF_V, x)

extern uintptr_t NAME(_pc);
void NAME(_outer)(void);

uintptr_t NAME(_pc);

static __attribute__((noinline)) void NAME(_probe)(void)
{
	NAME(_pc) = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("");
}

static inline __attribute__((always_inline)) void NAME(_inner)(void)
{
	NAME(_probe)();
}

__attribute__((noinline)) void NAME(_outer)(void)
{
	NAME(_inner)();
	__asm__ volatile("");
}
