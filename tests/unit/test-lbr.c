/* LBR call stacks, from synthetic samples: the chain made of the records (kernel part, the
 * sampled user instruction, the call sites innermost first; kernel sources and empty records
 * left out), and the repair of a walked chain that lost the leaf's caller, with the cases it
 * must leave alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unwind/lbr.h"

#define K1 0xffffffff81000100ULL
#define K2 0xffffffff81000200ULL
#define K3 0xffffffff81000300ULL

/* One record: perf's struct perf_branch_entry. */
struct branch {
	uint64_t from, to, flags;
};

static void sample_init(struct hs_perf_sample *s, uint64_t ip, const struct branch *br, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->ip = ip;
	s->branches = br;
	s->nr_branches = n;
	s->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK;
}

static void assert_frame(const struct hs_callchain *cc, size_t i, uint64_t addr, bool kernel, bool ret)
{
	assert_true(i < cc->frames.n);
	assert_int_equal(cc->frames.v[i].addr, addr);
	assert_int_equal(cc->frames.v[i].kernel, kernel);
	assert_int_equal(cc->frames.v[i].ret, ret);
}

static void test_has_call_stack(void **state)
{
	static const struct branch br[] = {{0x401010, 0x402000, 0}};
	struct hs_perf_sample s;

	(void)state;
	sample_init(&s, 0x402008, br, 1);
	assert_true(hs_lbr_has_call_stack(&s));
	s.branch_sample_type = PERF_SAMPLE_BRANCH_USER; /* records, but not a call stack */
	assert_false(hs_lbr_has_call_stack(&s));
	sample_init(&s, 0x402008, br, 0);
	assert_false(hs_lbr_has_call_stack(&s));
	sample_init(&s, 0x402008, NULL, 1);
	assert_false(hs_lbr_has_call_stack(&s));
}

/* A sample in user code: the instruction, then each recorded call site as it is (not a return
 * address); empty records and kernel sources left out. */
static void test_chain_user(void **state)
{
	static const struct branch br[] = {
		{0x401010, 0x402000, 0}, {0, 0, 0}, {K1, 0x401000, 0}, {0x400510, 0x401000, 0}};
	struct hs_perf_sample s;
	struct hs_callchain cc = {0};

	(void)state;
	sample_init(&s, 0x402008, br, 4);
	hs_lbr_chain(&cc, &s, true, true, 127);
	assert_int_equal(cc.frames.n, 3);
	assert_frame(&cc, 0, 0x402008, false, false);
	assert_frame(&cc, 1, 0x401010, false, false);
	assert_frame(&cc, 2, 0x400510, false, false);
	assert_int_equal(cc.stop, HS_STOP_END);

	/* no user frames asked for: nothing (the sample has no kernel chain) */
	hs_lbr_chain(&cc, &s, true, false, 127);
	assert_int_equal(cc.frames.n, 0);
	hs_callchain_release(&cc);
}

/* A sample in the kernel: the kernel's chain first, then the user instruction the kernel's
 * chain gives after PERF_CONTEXT_USER, then the call sites. */
static void test_chain_kernel(void **state)
{
	static const struct branch br[] = {{0x401010, 0x402000, 0}};
	const uint64_t chain[] = {PERF_CONTEXT_KERNEL, K1, K2, PERF_CONTEXT_USER, 0x402008, 0x401015};
	struct hs_perf_sample s;
	struct hs_callchain cc = {0};

	(void)state;
	sample_init(&s, K1, br, 1);
	s.callchain = chain;
	s.nr_callchain = 6;
	hs_lbr_chain(&cc, &s, true, true, 127);
	assert_int_equal(cc.frames.n, 4);
	assert_frame(&cc, 0, K1, true, false);
	assert_frame(&cc, 1, K2, true, true);
	assert_frame(&cc, 2, 0x402008, false, false);
	assert_frame(&cc, 3, 0x401010, false, false);

	/* without kernel frames: the user part only */
	hs_lbr_chain(&cc, &s, false, true, 127);
	assert_int_equal(cc.frames.n, 2);
	assert_frame(&cc, 0, 0x402008, false, false);

	/* without user frames: the kernel part only */
	hs_lbr_chain(&cc, &s, true, false, 127);
	assert_int_equal(cc.frames.n, 2);
	assert_frame(&cc, 1, K2, true, true);

	/* a kernel chain at the kernel's cap is marked so */
	hs_lbr_chain(&cc, &s, true, true, 4);
	assert_int_equal(cc.stop, HS_STOP_DEPTH);
	hs_callchain_release(&cc);
}

/* leaf (no frame of its own yet) called from 0x401010 in its caller, itself called from
 * 0x400510: the walk went from the leaf to 0x400515, its caller's caller */
static const struct branch lost_caller[] = {{0x401010, 0x402000, 0}, {0x400510, 0x401000, 0}};

static void walked(struct hs_callchain *cc, const uint64_t *kernel, size_t nk)
{
	hs_callchain_reset(cc);
	for (size_t i = 0; i < nk; i++)
		hs_callchain_push(cc, kernel[i], true, i > 0);
	hs_callchain_push(cc, 0x402008, false, false);
	hs_callchain_push(cc, 0x400515, false, true);
	hs_callchain_push(cc, 0x400105, false, true);
}

static void test_repair(void **state)
{
	static const uint64_t kernel[] = {K1, K3};
	struct hs_perf_sample s;
	struct hs_callchain cc = {0};

	(void)state;
	sample_init(&s, 0x402008, lost_caller, 2);
	walked(&cc, NULL, 0);
	assert_true(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 4);
	assert_frame(&cc, 0, 0x402008, false, false);
	assert_frame(&cc, 1, 0x401010, false, false); /* put back: the call site itself */
	assert_frame(&cc, 2, 0x400515, false, true);
	assert_frame(&cc, 3, 0x400105, false, true);

	/* kernel frames on top: the user leaf is the first user frame */
	walked(&cc, kernel, 2);
	assert_true(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 6);
	assert_frame(&cc, 1, K3, true, true);
	assert_frame(&cc, 2, 0x402008, false, false);
	assert_frame(&cc, 3, 0x401010, false, false);
	assert_frame(&cc, 4, 0x400515, false, true);
	hs_callchain_release(&cc);
}

static void test_repair_leaves_alone(void **state)
{
	static const struct branch one[] = {{0x401010, 0x402000, 0}, {K1, 0x401000, 0}, {0, 0, 0}};
	static const struct branch other[] = {{0x401010, 0x402000, 0}, {0x400700, 0x401000, 0}};
	struct hs_perf_sample s;
	struct hs_callchain cc = {0};

	(void)state;
	/* the walk is right: the leaf's caller returns to the first call site */
	sample_init(&s, 0x402008, lost_caller, 2);
	hs_callchain_reset(&cc);
	hs_callchain_push(&cc, 0x402008, false, false);
	hs_callchain_push(&cc, 0x401015, false, true);
	assert_false(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 2);

	/* fewer than two user call sites */
	sample_init(&s, 0x402008, one, 3);
	walked(&cc, NULL, 0);
	assert_false(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 3);

	/* the caller as walked returns to neither */
	sample_init(&s, 0x402008, other, 2);
	walked(&cc, NULL, 0);
	assert_false(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 3);

	/* a leaf alone, or a second frame that is not a return address */
	sample_init(&s, 0x402008, lost_caller, 2);
	hs_callchain_reset(&cc);
	hs_callchain_push(&cc, 0x402008, false, false);
	assert_false(hs_lbr_repair(&cc, &s));
	hs_callchain_push(&cc, 0x400515, false, false);
	assert_false(hs_lbr_repair(&cc, &s));
	assert_int_equal(cc.frames.n, 2);
	hs_callchain_release(&cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_has_call_stack),
		cmocka_unit_test(test_chain_user),
		cmocka_unit_test(test_chain_kernel),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_repair_leaves_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
