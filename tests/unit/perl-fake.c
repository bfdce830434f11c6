/* A program that is no perl but exports perl's symbols, with an interpreter of its own making,
 * for test-perl's hostile cases. Usage: perl-fake MODE; MODE says what its interpreter holds:
 *   empty    none yet (PL_curinterp NULL)
 *   runops   a loop of ops that is not Perl_runops_standard
 *   unrelocated  PL_runops_std still 0, as before the dynamic loader relocates libperl.so
 *   relative PL_runops_std still Perl_runops_standard's link-time address, as in a perl
 *            executable before its relative relocations
 *   stash    a main package of another name
 *   hostile  what passes the checks, with stacks that do not end and subs whose names are junk;
 *            a second interpreter whose stackinfos are a cycle
 * It prints "ready ADDR" (the second interpreter's address) and waits to be killed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const unsigned char PL_revision = 5, PL_version = 36, PL_subversion = 0;
const unsigned short PL_interp_size = 3768, PL_interp_size_5_18_0 = 2880;
unsigned PL_thr_key;
void *PL_curinterp;
__thread void *PL_current_context;
extern const char __executable_start[];

void Perl_runops_standard(void);
void Perl_runops_standard(void)
{
}
static void other_runops(void)
{
}
void (*PL_runops_std)(void) = Perl_runops_standard;

struct sv {
	void *any;
	uint32_t refcnt, flags;
	void *u;
};

#define NCX 2000
static uint8_t interp[3768], interp2[3768];
static uint8_t si_main[0x38], si_top[0x38], si_a[0x38], si_b[0x38];
static uint8_t cx_main[0x68], cxs[NCX * 0x68];
static uint8_t cop[0x58];
static struct sv stash, cv;
static uint8_t hv_body[0x60], cv_body[0x68];
static uint8_t hek_main[16], hek_junk[16];

static void put(uint8_t *p, size_t off, const void *v, size_t n)
{
	memcpy(p + off, v, n);
}

static void put_ptr(uint8_t *p, size_t off, const void *v)
{
	put(p, off, &v, sizeof(v));
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	put(p, off, &v, sizeof(v));
}

static void si(uint8_t *s, void *cxstack, void *prev, int32_t cxix, int32_t type)
{
	put_ptr(s, 0x08, cxstack);
	put_ptr(s, 0x10, prev);
	put32(s, 0x20, (uint32_t)cxix);
	put32(s, 0x2c, (uint32_t)type);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	void (*runops)(void) = strcmp(mode, "runops") ? Perl_runops_standard : other_runops;

	/* the main package: an HV with a name */
	put32(hek_main, 4, 4);
	memcpy(hek_main + 8, strcmp(mode, "stash") ? "main" : "evil", 4);
	put_ptr(hv_body, 0x20, hek_main);
	stash = (struct sv){hv_body, 1, 12 | 0x2000000, NULL};
	/* a named sub whose name's HEK says it is 2 GiB long */
	put32(hek_junk, 4, 0x7fffffff);
	put_ptr(cv_body, 0x20, &stash);
	put_ptr(cv_body, 0x38, hek_junk);
	put32(cv_body, 0x5c, 0x8000);
	cv = (struct sv){cv_body, 1, 13, NULL};
	/* contexts: the first stackinfo's block; NCX subs (entered from Perl) above */
	cx_main[0] = 2;
	put_ptr(cx_main, 0x10, cop);
	for (size_t i = 0; i < NCX; i++) {
		cxs[i * 0x68] = 9;
		put_ptr(cxs + i * 0x68, 0x10, cop);
		put_ptr(cxs + i * 0x68, 0x30, cop);
		put_ptr(cxs + i * 0x68, 0x48, &cv);
	}
	put32(cop, 0x24, 7);
	si(si_main, cx_main, NULL, 0, 1);
	si(si_top, cxs, si_main, NCX - 1, 3);
	put_ptr(interp, 0xc0, &stash);
	put_ptr(interp, 0xd0, cop);
	put_ptr(interp, 0xe0, si_top);
	put_ptr(interp, 0x8f0, (void *)runops);
	/* the second interpreter: two stackinfos, each the other's outer one */
	si(si_a, cxs, si_b, -1, 3);
	si(si_b, cxs, si_a, -1, 3);
	memcpy(interp2, interp, sizeof(interp2));
	put_ptr(interp2, 0xe0, si_a);
	if (strcmp(mode, "empty"))
		PL_curinterp = interp;
	if (!strcmp(mode, "unrelocated"))
		PL_runops_std = NULL;
	if (!strcmp(mode, "relative")) /* (a position-independent executable is linked at 0) */
		PL_runops_std = (void (*)(void))((uintptr_t)Perl_runops_standard - (uintptr_t)&__executable_start);
	PL_current_context = PL_curinterp;
	printf("ready %p\n", (void *)interp2);
	fflush(stdout);
	for (;;)
		pause();
}
