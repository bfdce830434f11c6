/* The self-unwind test: this process captures its own registers and stack the way the kernel
 * does for PERF_SAMPLE_REGS_USER / PERF_SAMPLE_STACK_USER, from inside a qsort callback, and
 * unwinds them with hotstack's unwinder and CFI tables. No privileges needed. Built twice: with
 * frame pointers (test-unwind) and without (test-unwind-nofp), where only CFI can work. A second
 * snapshot is taken in an epilogue whose CFI keeps rbp "saved" after it was popped (V8's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/model.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwinder.h"

#define COPY_MAX (256 * 1024)

struct snapshot {
	uint64_t regs[8]; /* rip rsp rbp rbx r12 r13 r14 r15 */
	uint8_t *stack;
	size_t size;
	int taken;
};

static struct snapshot snap;

/* The end of the stack mapping holding addr, from /proc/self/maps. */
static uint64_t stack_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && addr >= a && addr < b)
			end = b;
	}
	if (f)
		fclose(f);
	return end;
}

/* A raw copy of the stack, as the kernel makes it: under AddressSanitizer it crosses redzones
 * on purpose. */
__attribute__((no_sanitize_address, noinline)) static void copy_raw(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile uint8_t *)dst)[i] = src[i];
}

/* The stack from the captured stack pointer to the end of its mapping (at most COPY_MAX). */
static void copy_stack(struct snapshot *sn)
{
	uint64_t end = stack_end(sn->regs[1]);

	sn->size = end > sn->regs[1] ? end - sn->regs[1] : 0;
	if (sn->size > COPY_MAX)
		sn->size = COPY_MAX;
	sn->stack = malloc(sn->size);
	copy_raw(sn->stack, (const uint8_t *)(uintptr_t)sn->regs[1], sn->size);
	sn->taken++;
}

__attribute__((noinline)) void capture(void);
void capture(void)
{
	/* every register the unwinder may need, read at one instruction */
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 0(%0)\n\t"
			 "mov %%rsp, 8(%0)\n\t"
			 "mov %%rbp, 16(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%r12, 32(%0)\n\t"
			 "mov %%r13, 40(%0)\n\t"
			 "mov %%r14, 48(%0)\n\t"
			 "mov %%r15, 56(%0)\n\t"
			 :
			 : "r"(snap.regs)
			 : "rax", "memory");
	copy_stack(&snap);
}

__attribute__((noinline)) int compare_cb(const void *a, const void *b);
int compare_cb(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!snap.taken)
		capture();
	return (x > y) - (x < y);
}

__attribute__((noinline)) void run_qsort(void);
void run_qsort(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), compare_cb);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* An epilogue as V8's optimized code has it: after "pop %rbp" the CFI still says rbp is saved
 * at CFA-16, a slot now below the stack pointer (dead, and outside a stack copy, which starts at
 * the stack pointer). The registers are captured right there, then the stack is copied. */
struct snapshot epi;
void epilogue_copy(void);
void epilogue_copy(void)
{
	copy_stack(&epi);
}

void epilogue_capture(void);
__asm__(".text\n"
	".globl epilogue_capture\n"
	".type epilogue_capture, @function\n"
	"epilogue_capture:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"mov %rbp, %rsp\n"
	".cfi_def_cfa_register %rsp\n"
	"pop %rbp\n"
	".cfi_def_cfa_offset 8\n" /* and no .cfi_restore %rbp */
	"lea 0(%rip), %rax\n"
	"mov %rax, epi+0(%rip)\n"
	"mov %rsp, epi+8(%rip)\n"
	"mov %rbp, epi+16(%rip)\n"
	"mov %rbx, epi+24(%rip)\n"
	"mov %r12, epi+32(%rip)\n"
	"mov %r13, epi+40(%rip)\n"
	"mov %r14, epi+48(%rip)\n"
	"mov %r15, epi+56(%rip)\n"
	"sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"call epilogue_copy\n"
	"add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"ret\n"
	".cfi_endproc\n"
	".size epilogue_capture, .-epilogue_capture\n");

__attribute__((noinline)) void run_epilogue(void);
void run_epilogue(void)
{
	volatile char pad[40];

	pad[0] = 1;
	epilogue_capture();
	__asm__ volatile("" ::: "memory"); /* no tail call */
	pad[1] = pad[0];
}

/* The shape of glibc's lazy-binding resolver, _dl_runtime_resolve_xsavec: it keeps its CFA in
 * rbx (it realigns the stack), and what it calls (_dl_fixup) saves rbx and uses it. The
 * registers are captured in that callee (the function rbx_cfa_frame is given), then the stack
 * is copied. In clobber_rbx, rbx holds the callee's own value: the caller's rbx, and with it
 * rbx_cfa_frame's CFA, can only come from the callee's save slot. In popped_rbx, rbx was popped
 * already but the CFI still has it saved (as in _dl_fixup's epilogue), in a slot now below the
 * stack pointer, outside the copy: the register holds the caller's value. */
struct snapshot res, res_pop;
void resolver_copy(void);
void resolver_copy(void)
{
	copy_stack(&res);
}

void popped_copy(void);
void popped_copy(void)
{
	copy_stack(&res_pop);
}

void rbx_cfa_frame(void (*callee)(void));
void clobber_rbx(void);
void popped_rbx(void);
__asm__(".text\n"
	".globl rbx_cfa_frame, clobber_rbx, popped_rbx\n"
	".type rbx_cfa_frame, @function\n"
	"rbx_cfa_frame:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbx, -16\n"
	"mov %rsp, %rbx\n"
	".cfi_def_cfa_register %rbx\n"
	"and $-64, %rsp\n"
	"sub $192, %rsp\n"
	"call *%rdi\n"
	"mov %rbx, %rsp\n"
	"pop %rbx\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size rbx_cfa_frame, .-rbx_cfa_frame\n"
	".type clobber_rbx, @function\n"
	"clobber_rbx:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbx, -16\n"
	"mov $0x5a5a5a5a5a5a5a5a, %rbx\n"
	"lea 0(%rip), %rax\n"
	"mov %rax, res+0(%rip)\n"
	"mov %rsp, res+8(%rip)\n"
	"mov %rbp, res+16(%rip)\n"
	"mov %rbx, res+24(%rip)\n"
	"mov %r12, res+32(%rip)\n"
	"mov %r13, res+40(%rip)\n"
	"mov %r14, res+48(%rip)\n"
	"mov %r15, res+56(%rip)\n"
	"call resolver_copy\n"
	"pop %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size clobber_rbx, .-clobber_rbx\n"
	".type popped_rbx, @function\n"
	"popped_rbx:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbx, -16\n"
	"mov $0x5a5a5a5a5a5a5a5a, %rbx\n"
	"pop %rbx\n"
	".cfi_def_cfa_offset 8\n" /* and no .cfi_restore %rbx */
	"lea 0(%rip), %rax\n"
	"mov %rax, res_pop+0(%rip)\n"
	"mov %rsp, res_pop+8(%rip)\n"
	"mov %rbp, res_pop+16(%rip)\n"
	"mov %rbx, res_pop+24(%rip)\n"
	"mov %r12, res_pop+32(%rip)\n"
	"mov %r13, res_pop+40(%rip)\n"
	"mov %r14, res_pop+48(%rip)\n"
	"mov %r15, res_pop+56(%rip)\n"
	"sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"call popped_copy\n"
	"add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"ret\n"
	".cfi_endproc\n"
	".size popped_rbx, .-popped_rbx\n");

__attribute__((noinline)) void run_rbx_cfa(void (*callee)(void));
void run_rbx_cfa(void (*callee)(void))
{
	volatile char pad[24];

	pad[0] = 1;
	rbx_cfa_frame(callee);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	pad[1] = pad[0];
}

static uint64_t last_evicted;
static bool with_detach; /* the walk's stack given a detach hook (a working copy, moved once) */
static int detached;
static uint64_t copy_end; /* the stack copy's end of the thread's stack for the next walk; 0: not known */

/* The detach hook of with_detach: the stack moved to a fresh copy, the old one scribbled over
 * (as the kernel would write over a ring's space given back) and freed. */
static void move_stack(void *ctx, struct hs_stack_copy *c)
{
	uint8_t *moved = malloc(c->size);

	memcpy(moved, c->data, c->size);
	memset(ctx, 0xaa, c->size);
	free(ctx);
	c->data = moved;
	detached++;
}

static void unwind_snapshot(const struct snapshot *sn, const struct hs_unwinder_opts *opts, const char ***names,
			    size_t *n, enum hs_stop *stop)
{
	struct hs_model m;
	struct hs_unwinder u;
	struct hs_symbolizer sym;
	struct hs_unwinder_opts uo = *opts;
	struct hs_regs regs;
	struct hs_stack_copy copy = {0};
	struct hs_callchain cc = {{0}, HS_STOP_END};
	static const int dwarf[8] = {16, 7, 6, 3, 12, 13, 14, 15};
	static char names_buf[128][128];
	static const char *out[128];

	hs_model_init(&m);
	assert_int_equal(hs_model_from_proc(&m, getpid(), NULL, NULL), 0);
	hs_unwinder_init(&u, &m, &uo);
	hs_symbolizer_init(&sym, NULL);
	memset(&regs, 0, sizeof(regs));
	for (int i = 0; i < 8; i++) {
		regs.r[dwarf[i]] = sn->regs[i];
		regs.valid |= 1u << dwarf[i];
	}
	copy.start = sn->regs[1];
	copy.data = sn->stack;
	copy.size = sn->size;
	copy.end = copy_end;
	copy.tid = uo.live ? gettid() : 0;
	if (with_detach) {
		uint8_t *work = malloc(sn->size);
		memcpy(work, sn->stack, sn->size);
		copy.data = work;
		copy.detach = move_stack;
		copy.detach_ctx = work;
		detached = 0;
	}
	hs_unwind_user(&u, getpid(), &regs, &copy, &cc);
	if (with_detach)
		free((void *)copy.data);
	*n = 0;
	for (size_t i = 0; i < cc.frames.n && i < 128; i++) {
		uint64_t a = cc.frames.v[i].addr - cc.frames.v[i].ret;
		struct hs_map *map = hs_model_find_map(&m, getpid(), a);
		struct hs_sym s;
		if (map && hs_symbolize_user(&sym, map->dso, a - map->start + map->pgoff, &s))
			snprintf(names_buf[i], sizeof(names_buf[i]), "%s", s.name);
		else
			snprintf(names_buf[i], sizeof(names_buf[i]), "[%s]", map ? map->dso->path : "unmapped");
		out[(*n)++] = names_buf[i];
	}
	*names = out;
	*stop = cc.stop;
	last_evicted = u.stats.tables_evicted;
	hs_callchain_release(&cc);
	hs_symbolizer_release(&sym, &m);
	hs_unwinder_release(&u);
	hs_model_release(&m);
}

static void unwind_with(const struct hs_unwinder_opts *opts, const char ***names, size_t *n, enum hs_stop *stop)
{
	unwind_snapshot(&snap, opts, names, n, stop);
}

static void unwind_self(bool fp_fallback, const char ***names, size_t *n, enum hs_stop *stop)
{
	struct hs_unwinder_opts uo = {fp_fallback, 0, 0};
	unwind_with(&uo, names, n, stop);
}

static size_t find(const char **names, size_t n, size_t from, const char *want)
{
	for (size_t i = from; i < n; i++)
		if (!strcmp(names[i], want))
			return i;
	return SIZE_MAX;
}

static void check_chain(bool fp_fallback)
{
	const char **names;
	size_t n, i_cap, i_cb, i_run, i_main;
	enum hs_stop stop;

	unwind_self(fp_fallback, &names, &n, &stop);
	for (size_t i = 0; i < n; i++)
		print_message("  #%zu %s\n", i, names[i]);
	/* the chain crosses libc (qsort's internals) between the callback and its caller, and
	 * ends at the real bottom of the stack */
	i_cap = find(names, n, 0, "capture");
	i_cb = find(names, n, 0, "compare_cb");
	i_run = find(names, n, 0, "run_qsort");
	i_main = find(names, n, 0, "main");
	assert_int_equal(i_cap, 0);
	assert_int_equal(i_cb, 1);
	assert_true(i_run != SIZE_MAX && i_run > i_cb + 1);
	for (size_t i = i_cb + 1; i < i_run; i++)
		assert_true(strstr(names[i], "libc") || strstr(names[i], "qsort") || strstr(names[i], "msort"));
	assert_true(i_main != SIZE_MAX && i_main > i_run);
	assert_string_equal(names[n - 1], "_start");
	assert_int_equal(stop, HS_STOP_END);
}

static void test_self_unwind_cfi(void **state)
{
	(void)state;
	check_chain(false);
}

static void test_self_unwind_auto(void **state)
{
	(void)state;
	check_chain(true);
}

/* A stack given back before the unwinder compiles a file's tables (a recording's ring): the
 * walk goes on in the copy the hook made, moved once, with the same chain. */
static void test_self_unwind_detach(void **state)
{
	(void)state;
	with_detach = true;
	check_chain(false);
	with_detach = false;
	assert_int_equal(detached, 1);
}

/* Sampled in an epilogue whose CFI still has rbp saved below the stack pointer: rbp is taken
 * as it is (already restored), and the callers whose CFA is rbp-based are walked on. */
static void test_stale_rbp_rule(void **state)
{
	struct hs_unwinder_opts uo = {false, 0, 0};
	const char **names;
	size_t n;
	enum hs_stop stop;

	(void)state;
	run_epilogue();
	assert_int_equal(epi.taken, 1);
	unwind_snapshot(&epi, &uo, &names, &n, &stop);
	for (size_t i = 0; i < n; i++)
		print_message("  #%zu %s\n", i, names[i]);
	assert_true(n >= 4);
	assert_string_equal(names[0], "epilogue_capture");
	assert_string_equal(names[1], "run_epilogue");
	assert_true(find(names, n, 2, "main") != SIZE_MAX);
	assert_string_equal(names[n - 1], "_start");
	assert_int_equal(stop, HS_STOP_END);
}

/* A CFA on rbx, which the callee saved and replaced: rbx is restored from the callee's save
 * slot, and the walk goes on through the frame whose CFA it gives, to the bottom. */
static void check_rbx_cfa(const struct snapshot *sn, const char *leaf)
{
	struct hs_unwinder_opts uo = {false, 0, 0};
	const char **names;
	size_t n;
	enum hs_stop stop;

	assert_int_equal(sn->taken, 1);
	unwind_snapshot(sn, &uo, &names, &n, &stop);
	for (size_t i = 0; i < n; i++)
		print_message("  #%zu %s\n", i, names[i]);
	assert_true(n >= 5);
	assert_string_equal(names[0], leaf);
	assert_string_equal(names[1], "rbx_cfa_frame");
	assert_string_equal(names[2], "run_rbx_cfa");
	assert_true(find(names, n, 3, "main") != SIZE_MAX);
	assert_string_equal(names[n - 1], "_start");
	assert_int_equal(stop, HS_STOP_END);
}

static void test_cfa_on_saved_rbx(void **state)
{
	(void)state;
	run_rbx_cfa(clobber_rbx);
	assert_int_equal(res.regs[3], 0x5a5a5a5a5a5a5a5aULL);
	check_rbx_cfa(&res, "clobber_rbx");
}

/* The same, sampled after the callee popped rbx, its CFI still saying it is saved: rbx is
 * taken as it is. */
static void test_cfa_on_popped_rbx(void **state)
{
	(void)state;
	run_rbx_cfa(popped_rbx);
	assert_int_not_equal(res_pop.regs[3], 0x5a5a5a5a5a5a5a5aULL);
	check_rbx_cfa(&res_pop, "popped_rbx");
}

/* A copy cut short ends with the stack-copy reason, never with made-up frames. */
static void test_short_copy(void **state)
{
	const char **names;
	size_t n, full;
	enum hs_stop stop;
	size_t saved = snap.size;

	(void)state;
	unwind_self(false, &names, &full, &stop);
	snap.size = 256;
	unwind_self(false, &names, &n, &stop);
	snap.size = saved;
	assert_int_equal(stop, HS_STOP_STACK_COPY);
	assert_true(n >= 1 && n < full);
	assert_string_equal(names[0], "capture");
}

/* A copy the kernel ended early: for CFI, a page it could not read rather than the end of the
 * stack; the frames past it are a short copy's. */
static void test_copy_ended_early(void **state)
{
	const char **names;
	size_t n;
	enum hs_stop stop;
	size_t saved = snap.size;

	(void)state;
	snap.size = 256;
	copy_end = snap.regs[1] + 256;
	unwind_self(false, &names, &n, &stop);
	snap.size = saved;
	copy_end = 0;
	assert_int_equal(stop, HS_STOP_STACK_COPY);
	assert_string_equal(names[0], "capture");
}

/* A CFA off the thread's stack (a register that held another value than the CFI says: here
 * the saved rbx that rbx_cfa_frame's CFA is based on, overwritten) is a bad frame, not a short
 * copy, where the stack is known (a recording: its mapping in /proc/PID/maps); where it is not,
 * a short copy it is. Below the stack pointer, it is bad in any case. */
static void test_cfa_off_stack(void **state)
{
	struct hs_unwinder_opts live = {false, 0, 0, true}, file = {false, 0, 0, false};
	const char **names;
	size_t n;
	enum hs_stop stop;
	uint64_t saved, off_stack = stack_end(res.regs[1]) + (1 << 20);

	(void)state;
	if (!res.taken)
		run_rbx_cfa(clobber_rbx);
	memcpy(&saved, res.stack, 8); /* clobber_rbx pushed rbx last: its slot is at the stack pointer */
	memcpy(res.stack, &off_stack, 8);
	unwind_snapshot(&res, &live, &names, &n, &stop);
	assert_int_equal(stop, HS_STOP_BAD_FRAME);
	assert_string_equal(names[1], "rbx_cfa_frame");
	unwind_snapshot(&res, &file, &names, &n, &stop);
	assert_int_equal(stop, HS_STOP_STACK_COPY);
	off_stack = 0x1000;
	memcpy(res.stack, &off_stack, 8);
	unwind_snapshot(&res, &file, &names, &n, &stop);
	assert_int_equal(stop, HS_STOP_BAD_FRAME);
	memcpy(res.stack, &saved, 8);
	unwind_snapshot(&res, &live, &names, &n, &stop);
	assert_int_equal(stop, HS_STOP_END);
}

/* ---- frame-pointer steps through code without unwind information, on made-up stacks ---- */

/* Anonymous executable memory, as JIT code is, with no CFI:
 *   0x00 outer: push %rbp; mov %rsp,%rbp; call inner; pop %rbp; ret  (returns to 0x09)
 *   0x20 call *%rax                                                   (returns to 0x22)
 *   0x30 jmp *%rax, as before a return entry of HotSpot's interpreter ("returns" to 0x32)
 *   0x40 inner: push %rbp; nop ...                                    (sampled at 0x41)
 * and int3 between them. */
static uint8_t *jit;
#define JIT_RET_OUTER 0x09
#define JIT_RET_INDIRECT 0x22
#define JIT_RET_JMP 0x32
#define JIT_INNER 0x40
#define JIT_PC 0x41

static void jit_make(void)
{
	static const uint8_t outer[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0x37, 0, 0, 0, 0x5d, 0xc3};
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0xcc, 4096);
	memcpy(p, outer, sizeof(outer));
	p[0x20] = 0xff, p[0x21] = 0xd0, p[0x22] = 0xc3;
	p[0x30] = 0xff, p[0x31] = 0xe0;
	p[0x40] = 0x55, p[0x41] = 0x90, p[0x42] = 0xc3;
	assert_int_equal(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	jit = p;
}

struct fake_walk {
	uint64_t frames[16];
	size_t n;
	enum hs_stop stop;
	struct hs_unwinder_stats stats;
};

/* Unwinds from jit + JIT_PC with the stack words w (the copy: its addresses are theirs) and the
 * given rsp and rbp, the thread's stack ending at end (0: not known). */
static void fake_walk(const uint64_t *w, size_t nwords, uint64_t rsp, uint64_t rbp, uint64_t end, bool live,
		      struct fake_walk *ret)
{
	struct hs_model m;
	struct hs_unwinder u;
	struct hs_unwinder_opts uo = {true, 0, 0, live};
	struct hs_regs regs;
	struct hs_stack_copy copy = {(uint64_t)(uintptr_t)w, (const uint8_t *)w, nwords * 8, end, 0};
	struct hs_callchain cc = {{0}, HS_STOP_END};

	if (!jit)
		jit_make();
	hs_model_init(&m);
	assert_int_equal(hs_model_from_proc(&m, getpid(), NULL, NULL), 0);
	hs_unwinder_init(&u, &m, &uo);
	memset(&regs, 0, sizeof(regs));
	regs.r[HS_DWARF_RA] = (uint64_t)(uintptr_t)(jit + JIT_PC);
	regs.r[HS_DWARF_RSP] = rsp;
	regs.r[HS_DWARF_RBP] = rbp;
	regs.valid = (1u << HS_DWARF_RA) | (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RBP);
	hs_unwind_user(&u, getpid(), &regs, &copy, &cc);
	ret->n = 0;
	for (size_t i = 0; i < cc.frames.n && i < 16; i++)
		ret->frames[ret->n++] = cc.frames.v[i].addr;
	ret->stop = cc.stop;
	ret->stats = u.stats;
	hs_callchain_release(&cc);
	hs_unwinder_release(&u);
	hs_model_release(&m);
}

#define ADDR(p) ((uint64_t)(uintptr_t)(p))

/* inner saved rbp (its caller's frame pointer) without setting it, as HotSpot's compiled code
 * does without -XX:+PreserveFramePointer: the step through rbp would skip outer, and the
 * frame's own record beside its return address gives outer. With rbp set, the plain step. */
static void test_fp_own_record(void **state)
{
	uint64_t w[16] = {0};
	struct fake_walk r;

	(void)state;
	if (!jit)
		jit_make();
	w[0] = ADDR(&w[8]); /* inner's push %rbp: outer's frame pointer */
	w[1] = ADDR(jit + JIT_RET_OUTER);
	fake_walk(w, 16, ADDR(&w[0]), ADDR(&w[8]), 0, true, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.frames[0], ADDR(jit + JIT_PC));
	assert_int_equal(r.frames[1], ADDR(jit + JIT_RET_OUTER));
	assert_int_equal(r.stop, HS_STOP_END);
	assert_int_equal(r.stats.fp_own_records, 1);

	fake_walk(w, 16, ADDR(&w[0]), ADDR(&w[0]), 0, true, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.frames[1], ADDR(jit + JIT_RET_OUTER));
	assert_int_equal(r.stop, HS_STOP_END);
	assert_int_equal(r.stats.fp_own_records, 0);
}

/* A frame pointer off the thread's stack is a bad one, not a short copy; one on the stack past
 * the copy is a short copy. */
static void test_fp_outside_stack(void **state)
{
	uint64_t w[16] = {0};
	uint64_t base = ADDR(&w[0]);
	struct fake_walk r;

	(void)state;
	/* the stack ends where the copy does */
	fake_walk(w, 16, base, base + 65536, base + sizeof(w), true, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.stop, HS_STOP_BAD_FP);
	assert_int_equal(r.stats.fp_outside_stack, 1);
	/* the stack goes on past the copy, beyond the frame pointer */
	fake_walk(w, 16, base, base + 65536, base + 131072, true, &r);
	assert_int_equal(r.stop, HS_STOP_STACK_COPY);
	/* below the stack pointer, or not aligned */
	fake_walk(w, 16, base + 64, base + 8, 0, true, &r);
	assert_int_equal(r.stop, HS_STOP_BAD_FP);
	fake_walk(w, 16, base, base + 20, 0, true, &r);
	assert_int_equal(r.stop, HS_STOP_BAD_FP);
}

__attribute__((noinline)) uint64_t return_address(void);
uint64_t return_address(void)
{
	uint64_t ra = ADDR(__builtin_return_address(0));

	__asm__ volatile("" ::: "memory");
	return ra;
}

/* The return address the frame pointer gives must be code that follows a call: read from the
 * live process, or from the mapped file; JIT code may also follow an indirect jump. */
static void test_fp_return_address(void **state)
{
	uint64_t w[16] = {0};
	uint64_t base = ADDR(&w[0]), after_call = return_address();
	struct fake_walk r;

	(void)state;
	if (!jit)
		jit_make();
	/* JIT code: after call *%rax, after jmp *%rax (HotSpot's interpreter), after int3 */
	w[1] = ADDR(jit + JIT_RET_INDIRECT);
	fake_walk(w, 16, base, base, 0, true, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.stop, HS_STOP_END);
	w[1] = ADDR(jit + JIT_RET_JMP);
	fake_walk(w, 16, base, base, 0, true, &r);
	assert_int_equal(r.n, 2);
	w[1] = ADDR(jit + JIT_INNER);
	fake_walk(w, 16, base, base, 0, true, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.stop, HS_STOP_BAD_FP);
	assert_int_equal(r.stats.fp_not_after_call, 1);
	/* JIT code of a process that is not running any more: not readable, not refused */
	fake_walk(w, 16, base, base, 0, false, &r);
	assert_int_equal(r.n, 2);

	/* this executable: the start of a function, whether read from memory or from the file */
	for (int live = 0; live < 2; live++) {
		w[1] = ADDR(&test_fp_return_address);
		fake_walk(w, 16, base, base, 0, live, &r);
		assert_int_equal(r.n, 1);
		assert_int_equal(r.stop, HS_STOP_BAD_FP);
		w[1] = after_call;
		fake_walk(w, 16, base, base, 0, live, &r);
		assert_true(r.n >= 2);
		assert_int_equal(r.frames[1], after_call);
	}
	/* no code there */
	w[1] = 0x1000;
	fake_walk(w, 16, base, base, 0, true, &r);
	assert_int_equal(r.stop, HS_STOP_BAD_FP);
	assert_int_equal(r.stats.fp_not_code, 1);
}

/* ---- CPython's perf trampolines: anonymous code without CFI, known by its bytes ---- */

/* A page of them: the trampoline at 0x100, its endbr64 variant at 0x200, the first 8 bytes of
 * it at 0x300 (no whole copy: not one), int3 elsewhere. */
static uint8_t *tramps;
#define TR_PLAIN 0x100
#define TR_CET 0x200
#define TR_PART 0x300

static void tramps_make(void)
{
	static const uint8_t t[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0xcc, 4096);
	memcpy(p + TR_PLAIN, t, sizeof(t));
	memcpy(p + TR_CET, endbr, sizeof(endbr));
	memcpy(p + TR_CET + sizeof(endbr), t, sizeof(t));
	memcpy(p + TR_PART, t, 8);
	assert_int_equal(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	tramps = p;
}

/* Unwinds -g dwarf from pc, sampled there, with the stack words w from the stack pointer on; a
 * perf map line (perfmap, "" for none) tells what the process's perf map would. */
static void tramp_walk(uint64_t pc, const uint64_t *w, size_t nwords, bool live, const char *perfmap,
		       struct fake_walk *ret)
{
	struct hs_model m;
	struct hs_unwinder u;
	struct hs_unwinder_opts uo = {false, 0, 0, live};
	struct hs_regs regs;
	struct hs_stack_copy copy = {ADDR(w), (const uint8_t *)w, nwords * 8, 0, 0};
	struct hs_callchain cc = {{0}, HS_STOP_END};

	hs_model_init(&m);
	assert_int_equal(hs_model_from_proc(&m, getpid(), NULL, NULL), 0);
	hs_jit_perfmap_feed(&m.jit, getpid(), perfmap, strlen(perfmap), true);
	hs_unwinder_init(&u, &m, &uo);
	memset(&regs, 0, sizeof(regs));
	regs.r[HS_DWARF_RA] = pc;
	regs.r[HS_DWARF_RSP] = ADDR(w);
	regs.r[HS_DWARF_RBP] = 0x1234;
	regs.valid = (1u << HS_DWARF_RA) | (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RBP);
	hs_unwind_user(&u, getpid(), &regs, &copy, &cc);
	ret->n = 0;
	for (size_t i = 0; i < cc.frames.n && i < 16; i++)
		ret->frames[ret->n++] = cc.frames.v[i].addr;
	ret->stop = cc.stop;
	ret->stats = u.stats;
	hs_callchain_release(&cc);
	hs_unwinder_release(&u);
	hs_model_release(&m);
}

/* At each of its instructions, the trampoline's frame is found by its offset in the template:
 * the return address at rsp before the sub and at the ret, at rsp+8 between them. */
static void test_tramp_offsets(void **state)
{
	static const struct {
		uint32_t at, ra_word;
	} cases[] = {
		{TR_PLAIN + 0, 0}, {TR_PLAIN + 4, 1}, {TR_PLAIN + 6, 1}, {TR_PLAIN + 10, 0},
		{TR_CET + 0, 0},   {TR_CET + 4, 0},   {TR_CET + 8, 1},   {TR_CET + 14, 0},
	};
	uint64_t w[4] = {0};
	struct fake_walk r;

	(void)state;
	if (!tramps)
		tramps_make();
	w[0] = ADDR(tramps + 0x800);
	w[1] = ADDR(tramps + 0x900);
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		tramp_walk(ADDR(tramps + cases[i].at), w, 4, true, "", &r);
		assert_int_equal(r.n, 2);
		assert_int_equal(r.frames[1], w[cases[i].ra_word]);
		/* the caller, int3s in anonymous memory, has nothing to unwind it by */
		assert_int_equal(r.stop, HS_STOP_NO_INFO);
		assert_int_equal(r.stats.tramp_steps, 1);
	}
	/* not a whole copy: nothing known */
	tramp_walk(ADDR(tramps + TR_PART + 4), w, 4, true, "", &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.stop, HS_STOP_NO_INFO);
	assert_int_equal(r.stats.tramp_steps, 0);
}

/* A trampoline calling through another (a return address at the call's end, looked up one byte
 * before it), down to a zero return address: the real end. */
static void test_tramp_chain(void **state)
{
	uint64_t w[4] = {0};
	struct fake_walk r;

	(void)state;
	if (!tramps)
		tramps_make();
	w[0] = ADDR(tramps + TR_PLAIN + 6);
	w[1] = 0xdead; /* the sub's slot */
	w[2] = 0;
	tramp_walk(ADDR(tramps + TR_PLAIN), w, 4, true, "", &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.frames[1], ADDR(tramps + TR_PLAIN + 6));
	assert_int_equal(r.stop, HS_STOP_END);
	assert_int_equal(r.stats.tramp_steps, 2);
}

/* Code that cannot be read (a recording read from a file) is known by its perf map name. */
static void test_tramp_by_name(void **state)
{
	uint64_t w[4] = {0};
	char line[128];
	struct fake_walk r;

	(void)state;
	if (!tramps)
		tramps_make();
	w[1] = ADDR(tramps + 0x900);
	tramp_walk(ADDR(tramps + TR_PLAIN + 6), w, 4, false, "", &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.stop, HS_STOP_NO_INFO);
	snprintf(line, sizeof(line), "%llx b py::f:prog.py\n", (unsigned long long)ADDR(tramps + TR_PLAIN));
	tramp_walk(ADDR(tramps + TR_PLAIN + 6), w, 4, false, line, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.frames[1], w[1]);
	assert_int_equal(r.stats.tramp_by_name, 1);
	/* another runtime's code: not a trampoline */
	snprintf(line, sizeof(line), "%llx b LazyCompile:f\n", (unsigned long long)ADDR(tramps + TR_PLAIN));
	tramp_walk(ADDR(tramps + TR_PLAIN + 6), w, 4, false, line, &r);
	assert_int_equal(r.n, 1);
}

/* With room for no table at all, each one is dropped as the next is built and built again
 * when needed: the walk is the same, only slower. */
static void test_bounded_cache(void **state)
{
	struct hs_unwinder_opts tiny = {false, 0, 1};
	const char **names;
	char first[128][128];
	size_t n, n2;
	enum hs_stop stop, stop2;

	(void)state;
	unwind_self(false, &names, &n, &stop);
	for (size_t i = 0; i < n; i++)
		snprintf(first[i], sizeof(first[i]), "%s", names[i]);
	unwind_with(&tiny, &names, &n2, &stop2);
	assert_true(last_evicted > 0);
	assert_int_equal(n2, n);
	assert_int_equal(stop2, stop);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], first[i]);
}

static int setup(void **state)
{
	(void)state;
	run_qsort();
	return snap.taken ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_unwind_cfi),
		cmocka_unit_test(test_self_unwind_auto),
		cmocka_unit_test(test_self_unwind_detach),
		cmocka_unit_test(test_short_copy),
		cmocka_unit_test(test_copy_ended_early),
		cmocka_unit_test(test_fp_own_record),
		cmocka_unit_test(test_fp_outside_stack),
		cmocka_unit_test(test_fp_return_address),
		cmocka_unit_test(test_stale_rbp_rule),
		cmocka_unit_test(test_cfa_on_saved_rbx),
		cmocka_unit_test(test_cfa_on_popped_rbx),
		cmocka_unit_test(test_cfa_off_stack),
		cmocka_unit_test(test_bounded_cache),
		cmocka_unit_test(test_tramp_offsets),
		cmocka_unit_test(test_tramp_chain),
		cmocka_unit_test(test_tramp_by_name),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
