/* The shared library test-symbolize looks symbols up in; see symtest-lib.h. */
#include "symtest-lib.h"

/* The caller's return address: an address inside the caller, past the call instruction. */
__attribute__((noinline)) static void note_return(void **ret)
{
	*ret = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

int symtest_alpha(struct symtest_probe *p)
{
	note_return(&p->alpha_mid);
	p->alpha_caller = __builtin_return_address(0);
	return p->n + 1;
}

int symtest_beta(struct symtest_probe *p)
{
	int r;

	note_return(&p->beta_mid);
	p->beta_caller = __builtin_return_address(0);
	r = symtest_alpha(p);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

/* Distinct bodies, so that no pass folds them into one another. */
__attribute__((noinline, used)) static int symtest_local_body(int x)
{
	return x * 3 + 1;
}
int __symtest_global_alias(int x) __attribute__((alias("symtest_local_body")));
int symtest_weak_alias(int x) __attribute__((weak, alias("symtest_local_body")));

__attribute__((noinline, used)) static int symtest_wl_local(int x)
{
	return x * 5 + 2;
}
int __symtest_wl_weak(int x) __attribute__((weak, alias("symtest_wl_local")));

int __symtest_under_two(int x)
{
	return x * 7 + 3;
}
int symtest_under_none(int x) __attribute__((alias("__symtest_under_two")));

__attribute__((noinline, used)) static int symtest_ifunc_impl(int x)
{
	return x * 11 + 4;
}
__attribute__((noinline, used)) static int (*symtest_ifunc_resolver(void))(int)
{
	return symtest_ifunc_impl;
}
int symtest_ifunc(int x) __attribute__((ifunc("symtest_ifunc_resolver")));
void *symtest_ifunc_resolver_addr(void)
{
	return (void *)symtest_ifunc_resolver;
}
