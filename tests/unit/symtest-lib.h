/* A small shared library with known symbols, for test-symbolize: functions that report their
 * own return addresses (so the test holds addresses inside them and at their call sites), a
 * call through the library's own PLT, and functions with several names at one address. */
#ifndef SYMTEST_LIB_H
#define SYMTEST_LIB_H

struct symtest_probe {
	int n;
	void *alpha_mid;    /* inside symtest_alpha, just past a call it makes */
	void *alpha_caller; /* where symtest_alpha was called from: just past the caller's call */
	void *beta_mid;     /* inside symtest_beta */
	void *beta_caller;  /* where symtest_beta was called from */
};

/* Fills alpha_mid and alpha_caller. */
int symtest_alpha(struct symtest_probe *p);
/* Fills beta_mid and beta_caller, then calls symtest_alpha through this library's PLT (a default-visibility
 * function of a shared object can be interposed, so the call is not direct). */
int symtest_beta(struct symtest_probe *p);

/* Aliases: one function each, under the names listed (the test looks them up with dlsym).
 * 1. __symtest_global_alias (global), symtest_weak_alias (weak), symtest_local_body (local)
 * 2. __symtest_wl_weak (weak), symtest_wl_local (local)
 * 3. __symtest_under_two and symtest_under_none (both global)
 * 4. symtest_ifunc (a global ifunc: its value is its resolver's address) and
 *    symtest_ifunc_resolver (local), at the address symtest_ifunc_resolver_addr() returns */
int __symtest_global_alias(int x);
int symtest_weak_alias(int x);
int __symtest_wl_weak(int x);
int __symtest_under_two(int x);
int symtest_under_none(int x);
int symtest_ifunc(int x);
void *symtest_ifunc_resolver_addr(void);

#endif
