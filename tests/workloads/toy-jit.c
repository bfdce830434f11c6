/* A toy JIT for the JIT tests: it generates x86-64 functions at run time into anonymous
 * executable memory, calls through them, and describes them with libhotstack-jit (a jitdump
 * file in the current directory, or in $JITDUMPDIR): source lines and call frame information
 * with each code load. The generated functions spin with their stack pointer moved and no frame
 * pointer of their own, so only their CFI unwinds them into their caller run_phase().
 *
 *   toy-jit [SECONDS]   three phases doing the same work, the first SECONDS long (default 1):
 *     1. jit_alpha at address A;
 *     2. jit_alpha moved to address B (CODE_MOVE);
 *     3. jit_beta generated at address A (a re-JIT of the same address under another name).
 * Equal work, not equal time: each phase gets the same share of CPU samples however busy the
 * machine is.
 * With TOYJIT_TSC=1 the file's timestamps are the TSC's (HSJIT_ARCH_TIMESTAMP). Each phase's
 * start is printed as "phase N T" with T on CLOCK_MONOTONIC in nanoseconds. */
#include <hotstack/jit.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CODE_SIZE 24
#define LOOP_OFFSET 14
#define EPILOGUE_OFFSET 19

typedef void (*jit_fn)(void);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* sub $frame,%rsp; movabs $count,%rax; 1: dec %rax; jnz 1b; add $frame,%rsp; ret */
static void emit(uint8_t *p, uint8_t frame, uint64_t count)
{
	uint8_t code[CODE_SIZE] = {
		0x48, 0x83, 0xec, frame,             /* 0: sub $frame,%rsp */
		0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,  /* 4: movabs $count,%rax */
		0x48, 0xff, 0xc8,                    /* 14: dec %rax */
		0x75, 0xfb,                          /* 17: jnz 14 */
		0x48, 0x83, 0xc4, frame,             /* 19: add $frame,%rsp */
		0xc3,                                /* 23: ret */
	};
	memcpy(code + 6, &count, 8);
	memcpy(p, code, sizeof(code));
}

static size_t put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		p[n++] = b | (v ? 0x80 : 0);
	} while (v);
	return n;
}

/* The .eh_frame of one generated function: a CIE ("zR", FDE addresses pcrel|sdata4) and an
 * FDE, as if placed right after the code (libhotstack-jit's convention). Returns its size. */
static size_t eh_frame(uint8_t *out, uint8_t frame)
{
	size_t n = 0, len_at, fde, begin_at;
	int32_t v;
	uint32_t len;

	/* CIE */
	len_at = n;
	n += 4;
	memset(out + n, 0, 4); /* CIE id */
	n += 4;
	out[n++] = 1;            /* version */
	memcpy(out + n, "zR", 3);
	n += 3;
	out[n++] = 1;            /* code alignment */
	out[n++] = 0x78;         /* data alignment -8 */
	out[n++] = 16;           /* return address column */
	out[n++] = 1;            /* augmentation data length */
	out[n++] = 0x1b;         /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	out[n++] = 0x0c;         /* DW_CFA_def_cfa rsp 8 */
	out[n++] = 7;
	out[n++] = 8;
	out[n++] = 0x80 | 16;    /* DW_CFA_offset rip at cfa-8 */
	out[n++] = 1;
	while ((n - len_at) % 8)
		out[n++] = 0;    /* DW_CFA_nop */
	len = (uint32_t)(n - len_at - 4);
	memcpy(out + len_at, &len, 4);

	/* FDE */
	fde = n;
	n += 4;
	v = (int32_t)(n - len_at); /* back to the CIE */
	memcpy(out + n, &v, 4);
	n += 4;
	begin_at = n;
	/* the code starts CODE_SIZE (rounded up to 8) + begin_at bytes before this field */
	v = -(int32_t)(((CODE_SIZE + 7) & ~7) + begin_at);
	memcpy(out + n, &v, 4);
	n += 4;
	v = CODE_SIZE;
	memcpy(out + n, &v, 4);
	n += 4;
	out[n++] = 0;                     /* augmentation data length */
	out[n++] = 0x40 | 4;              /* DW_CFA_advance_loc 4: after the sub */
	out[n++] = 0x0e;                  /* DW_CFA_def_cfa_offset 8 + frame */
	n += put_uleb(out + n, 8u + frame);
	out[n++] = 0x40 | (EPILOGUE_OFFSET + 4 - 4); /* advance to 23: after the add */
	out[n++] = 0x0e;
	out[n++] = 8;
	while ((n - fde) % 8)
		out[n++] = 0;
	len = (uint32_t)(n - fde - 4);
	memcpy(out + fde, &len, 4);
	memset(out + n, 0, 4); /* terminator */
	return n + 4;
}

static int describe(struct hsjit *j, const char *name, uint8_t *code, uint8_t frame, uint32_t first_line,
		    uint64_t *index)
{
	uint8_t eh[128];
	struct hsjit_line lines[3] = {
		{(uint64_t)(uintptr_t)code, first_line, 0, "toy.jit"},
		{(uint64_t)(uintptr_t)code + LOOP_OFFSET, first_line + 1, 0, "toy.jit"},
		{(uint64_t)(uintptr_t)code + EPILOGUE_OFFSET, first_line + 2, 0, "toy.jit"},
	};
	struct hsjit_code_info info = {sizeof(info)};

	info.lines = lines;
	info.nlines = 3;
	info.eh_frame = eh;
	info.eh_frame_size = eh_frame(eh, frame);
	return hsjit_code_load(j, name, code, CODE_SIZE, &info, index);
}

/* Calls fn calls times, or (calls 0) for seconds; returns how many calls it made. */
__attribute__((noinline)) uint64_t run_phase(jit_fn fn, uint64_t calls, double seconds)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9), n = 0;

	while (calls ? n < calls : now_ns() < end) {
		fn();
		n++;
	}
	__asm__ volatile("" ::: "memory");
	return n;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct hsjit_options o = {sizeof(o)};
	struct hsjit *j;
	uint8_t *mem, *a, *b;
	uint64_t alpha, calls;
	int rc;

	if (getenv("TOYJIT_TSC") && atoi(getenv("TOYJIT_TSC")))
		o.flags = HSJIT_ARCH_TIMESTAMP;
	if ((rc = hsjit_open(&j, &o))) {
		fprintf(stderr, "toy-jit: cannot create the jitdump file: %s\n", strerror(-rc));
		return 1;
	}
	mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("toy-jit: mmap");
		return 1;
	}
	a = mem + 64;
	b = mem + 4096 + 128;

	emit(a, 0x18, 200000);
	if ((rc = describe(j, "jit_alpha", a, 0x18, 10, &alpha))) {
		fprintf(stderr, "toy-jit: code load: %s\n", strerror(-rc));
		return 1;
	}
	printf("phase 1 %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
	calls = run_phase((jit_fn)(void *)a, 0, seconds);

	memcpy(b, a, CODE_SIZE);
	memset(a, 0xcc, CODE_SIZE); /* the old place holds nothing callable now */
	if ((rc = hsjit_code_move(j, alpha, a, b, CODE_SIZE))) {
		fprintf(stderr, "toy-jit: code move: %s\n", strerror(-rc));
		return 1;
	}
	printf("phase 2 %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
	run_phase((jit_fn)(void *)b, calls, 0);

	emit(a, 0x28, 200000);
	if ((rc = describe(j, "jit_beta", a, 0x28, 20, NULL))) {
		fprintf(stderr, "toy-jit: code load: %s\n", strerror(-rc));
		return 1;
	}
	printf("phase 3 %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
	run_phase((jit_fn)(void *)a, calls, 0);

	if ((rc = hsjit_close(j))) {
		fprintf(stderr, "toy-jit: closing the jitdump file: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
