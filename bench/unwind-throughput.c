/* Unwinding throughput on one core: hotstack's unwinder against libdw's (elfutils dwfl, the
 * unwinder of perf builds without libunwind and of other profilers) over the same stored corpus
 * of samples, which this program collects from itself the way the kernel would (registers and
 * a copy of the user stack taken from a profiling signal while a mixed workload runs). */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "model/model.h"
#include "unwind/unwinder.h"
#include "workload.h"

#define NREGS 17                 /* DWARF x86-64: 0-15 general, 16 the instruction pointer */
#define COPY_MAX (32 * 1024)     /* more than the workload's deepest stacks (~27 KiB) */
#define MAX_FRAMES 1024
#define CORPUS_MAGIC "HSUNWC01"

/* ---- the corpus ---- */

struct sample {
	uint64_t regs[NREGS]; /* DWARF numbering */
	uint64_t sp;
	uint32_t size;        /* bytes of stack copied from sp */
	const uint8_t *data;
};

struct corpus {
	struct sample *s;
	uint32_t n;
	uint8_t *stack; /* all copies, back to back */
	size_t stack_bytes;
	char *maps;     /* /proc/self/maps of the collecting process */
};

/* what the signal handler writes: preallocated, no allocation in the handler */
static struct {
	struct sample *s;
	uint8_t *slots; /* COPY_MAX bytes per sample */
	uint32_t cap;
	volatile uint32_t n;
	volatile uint32_t skipped;
	uint64_t stack_end;
	uint32_t copy; /* bytes to copy per sample, at most COPY_MAX */
} col;

static void on_prof(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	const greg_t *g = uc->uc_mcontext.gregs;
	uint64_t sp = (uint64_t)g[REG_RSP];
	struct sample *s;
	uint32_t i = col.n;

	(void)sig;
	(void)si;
	if (i >= col.cap)
		return;
	/* single-threaded: every interrupted rsp is on the main stack, below its end */
	if (sp >= col.stack_end || col.stack_end - sp > (64u << 20)) {
		col.skipped++;
		return;
	}
	s = &col.s[i];
	s->regs[0] = (uint64_t)g[REG_RAX];
	s->regs[1] = (uint64_t)g[REG_RDX];
	s->regs[2] = (uint64_t)g[REG_RCX];
	s->regs[3] = (uint64_t)g[REG_RBX];
	s->regs[4] = (uint64_t)g[REG_RSI];
	s->regs[5] = (uint64_t)g[REG_RDI];
	s->regs[6] = (uint64_t)g[REG_RBP];
	s->regs[7] = sp;
	s->regs[8] = (uint64_t)g[REG_R8];
	s->regs[9] = (uint64_t)g[REG_R9];
	s->regs[10] = (uint64_t)g[REG_R10];
	s->regs[11] = (uint64_t)g[REG_R11];
	s->regs[12] = (uint64_t)g[REG_R12];
	s->regs[13] = (uint64_t)g[REG_R13];
	s->regs[14] = (uint64_t)g[REG_R14];
	s->regs[15] = (uint64_t)g[REG_R15];
	s->regs[16] = (uint64_t)g[REG_RIP];
	s->sp = sp;
	s->size = (uint32_t)(col.stack_end - sp < col.copy ? col.stack_end - sp : col.copy);
	memcpy(col.slots + (size_t)i * COPY_MAX, (const void *)(uintptr_t)sp, s->size);
	col.n = i + 1;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static uint64_t stack_mapping_end(void)
{
	char *maps = read_text("/proc/self/maps"), *line;
	uint64_t end = 0;

	for (line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
		unsigned long long a, b;
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > 7 && !memcmp(line + len - 7, "[stack]", 7) && sscanf(line, "%llx-%llx", &a, &b) == 2)
			end = b;
	}
	free(maps);
	return end;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs the workload under a profiling signal until cap samples are taken. ITIMER_PROF only
 * fires on the scheduler tick (HZ, ~200 Hz on this VM's kernel), so the default is a POSIX
 * timer on CLOCK_MONOTONIC delivering the same SIGPROF: the workload is CPU-bound, so wall
 * time and CPU time advance together. */
static int collect(uint32_t cap, unsigned hz, bool itimer, double *secs)
{
	struct sigaction sa;
	timer_t timer = 0;
	double t0;
	uint64_t i = 0;

	col.cap = cap;
	col.s = calloc(cap, sizeof(*col.s));
	col.slots = mmap(NULL, (size_t)cap * COPY_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	col.stack_end = stack_mapping_end();
	if (!col.s || col.slots == MAP_FAILED || !col.stack_end) {
		fprintf(stderr, "cannot prepare the sample buffers\n");
		return -1;
	}
	hs_bench_workload_init();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	if (itimer) {
		struct itimerval it = {{0, (suseconds_t)(1000000 / hz)}, {0, (suseconds_t)(1000000 / hz)}};
		setitimer(ITIMER_PROF, &it, NULL);
	} else {
		struct sigevent se;
		struct itimerspec its = {{0, 1000000000L / hz}, {0, 1000000000L / hz}};
		memset(&se, 0, sizeof(se));
		se.sigev_notify = SIGEV_SIGNAL;
		se.sigev_signo = SIGPROF;
		if (timer_create(CLOCK_MONOTONIC, &se, &timer) || timer_settime(timer, 0, &its, NULL)) {
			perror("timer_create");
			return -1;
		}
	}
	t0 = now();
	while (col.n < cap && now() - t0 < 120)
		hs_bench_workload_step(i++);
	if (itimer) {
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_PROF, &off, NULL);
	} else {
		timer_delete(timer);
	}
	signal(SIGPROF, SIG_IGN);
	*secs = now() - t0;
	return 0;
}

static int write_all(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int corpus_write(const char *path, const char *maps)
{
	FILE *f = fopen(path, "wbe");
	uint32_t hdr[2] = {col.n, (uint32_t)strlen(maps)};
	int rc = 0;

	if (!f)
		return -1;
	rc |= write_all(f, CORPUS_MAGIC, 8);
	rc |= write_all(f, hdr, sizeof(hdr));
	rc |= write_all(f, maps, hdr[1]);
	for (uint32_t i = 0; i < col.n && !rc; i++) {
		const struct sample *s = &col.s[i];
		uint32_t size = s->size, pad = 0;
		rc |= write_all(f, s->regs, sizeof(s->regs));
		rc |= write_all(f, &s->sp, 8);
		rc |= write_all(f, &size, 4);
		rc |= write_all(f, &pad, 4);
		rc |= write_all(f, col.slots + (size_t)i * COPY_MAX, size);
	}
	if (fclose(f))
		rc = -1;
	return rc;
}

__attribute__((noinline)) static int corpus_read(const char *path, struct corpus *c)
{
	FILE *f = fopen(path, "rbe");
	char magic[8];
	uint32_t hdr[2];
	struct stat st;
	size_t off = 0;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	if (fstat(fileno(f), &st) || fread(magic, 1, 8, f) != 8 || memcmp(magic, CORPUS_MAGIC, 8) ||
	    fread(hdr, sizeof(hdr), 1, f) != 1 || hdr[1] > (16u << 20) || hdr[0] > (1u << 24))
		goto bad;
	c->maps = malloc((size_t)hdr[1] + 1);
	c->s = calloc(hdr[0] ? hdr[0] : 1, sizeof(*c->s));
	c->stack = malloc((size_t)st.st_size);
	if (!c->maps || !c->s || !c->stack || fread(c->maps, 1, hdr[1], f) != hdr[1])
		goto bad;
	c->maps[hdr[1]] = '\0';
	for (uint32_t i = 0; i < hdr[0]; i++) {
		struct sample *s = &c->s[i];
		uint32_t sz[2];
		if (fread(s->regs, sizeof(s->regs), 1, f) != 1 || fread(&s->sp, 8, 1, f) != 1 || fread(sz, 8, 1, f) != 1 ||
		    sz[0] > COPY_MAX || off + sz[0] > (size_t)st.st_size || fread(c->stack + off, 1, sz[0], f) != sz[0])
			goto bad;
		s->size = sz[0];
		s->data = c->stack + off;
		off += sz[0];
	}
	c->n = hdr[0];
	c->stack_bytes = off;
	fclose(f);
	return 0;
bad:
	fclose(f);
	return -1;
}

/* (The line buffers of the maps readers are kept out of main's frame by noinline: it sits at
 * the bottom of every sampled stack.) */

/* The stored mappings must still name the same files (a rebuilt benchmark has a new inode and
 * other addresses): returns how many executable file mappings differ. */
__attribute__((noinline)) static int maps_check(const char *maps)
{
	int stale = 0;
	char last[4096] = "";

	for (const char *line = maps; *line;) {
		const char *nl = strchr(line, '\n');
		char buf[4200], perms[8];
		unsigned long long a, b, off, ino;
		unsigned maj, min;
		int name = 0;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (nl ? 1 : 0);
		if (sscanf(buf, "%llx-%llx %7s %llx %x:%x %llu %n", &a, &b, perms, &off, &maj, &min, &ino, &name) < 7 ||
		    !strchr(perms, 'x') || !name || buf[name] != '/' || !strcmp(last, buf + name))
			continue;
		snprintf(last, sizeof(last), "%s", buf + name);
		if (stat(buf + name, &st) || st.st_ino != ino) {
			fprintf(stderr, "stale corpus: '%s' is not the file that was mapped when it was collected\n",
				buf + name);
			stale++;
		}
	}
	return stale;
}

/* hotstack's model from stored /proc/PID/maps text, as hs_model_from_proc() reads it */
__attribute__((noinline)) static void model_from_maps(struct hs_model *m, int32_t pid, const char *maps)
{
	for (const char *line = maps; *line;) {
		const char *nl = strchr(line, '\n');
		char buf[4200], perms[8];
		uint64_t start, end, off, ino;
		unsigned maj, min;
		int name = 0;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct hs_dso_ident id = {0};

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (nl ? 1 : 0);
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &name) < 7 ||
		    !strchr(perms, 'x'))
			continue;
		id.path = name && buf[name] ? buf + name : "//anon";
		id.maj = maj;
		id.min = min;
		id.ino = ino;
		hs_model_mmap(m, pid, start, end - start, off, 5, hs_model_dso(m, &id));
	}
}

/* ---- timing ---- */

struct result {
	uint32_t *frames;   /* per sample */
	uint64_t (*pcs)[8]; /* the first frames of each sample, to compare */
	uint8_t *end;       /* hotstack: enum hs_stop; libdw: 0 ok, 1 error */
	int *err;           /* libdw: dwfl_errno() of a failed unwind */
	uint64_t total;
};

static void result_init(struct result *r, uint32_t n)
{
	r->frames = calloc(n, sizeof(*r->frames));
	r->pcs = calloc(n, sizeof(*r->pcs));
	r->end = calloc(n, 1);
	r->err = calloc(n, sizeof(*r->err));
	r->total = 0;
}

static void result_free(struct result *r)
{
	free(r->frames);
	free(r->pcs);
	free(r->end);
	free(r->err);
}

static double hotstack_pass(struct hs_unwinder *u, int32_t pid, const struct corpus *c, struct hs_callchain *cc,
			    struct result *r)
{
	struct hs_regs regs;
	double t0 = now();

	r->total = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct sample *s = &c->s[i];
		struct hs_stack_copy copy = {s->sp, s->data, s->size};
		memcpy(regs.r, s->regs, sizeof(regs.r));
		regs.valid = (1u << NREGS) - 1;
		hs_callchain_reset(cc);
		hs_unwind_user(u, pid, &regs, &copy, cc);
		r->total += cc->frames.n;
		if (r->frames) {
			r->frames[i] = (uint32_t)cc->frames.n;
			r->end[i] = (uint8_t)cc->stop;
			for (size_t k = 0; k < 8 && k < cc->frames.n; k++)
				r->pcs[i][k] = cc->frames.v[k].addr;
		}
	}
	return now() - t0;
}

/* libdw: the sample being unwound, and the frames found */
static struct {
	const struct sample *cur;
	uint32_t nframes;
	uint64_t pcs[8];
	pid_t tid;
} dw;

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	if (*thread_argp)
		return 0;
	*thread_argp = (void *)1;
	return dw.tid;
}

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	*thread_argp = (void *)1;
	return tid == dw.tid;
}

/* only the stack copy, like hotstack's unwinder */
static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *ret, void *arg)
{
	const struct sample *s = dw.cur;

	(void)dwfl;
	(void)arg;
	if (addr < s->sp || addr - s->sp > s->size || s->size - (addr - s->sp) < 8)
		return false;
	memcpy(ret, s->data + (addr - s->sp), 8);
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	(void)arg;
	return dwfl_thread_state_registers(thread, 0, NREGS, dw.cur->regs);
}

static int dw_frame(Dwfl_Frame *state, void *arg)
{
	Dwarf_Addr pc;
	bool activation;

	(void)arg;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (dw.nframes < 8)
		dw.pcs[dw.nframes] = pc;
	return ++dw.nframes >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static const Dwfl_Thread_Callbacks dw_callbacks = {
	dw_next_thread, dw_get_thread, dw_memory_read, dw_set_initial_registers, NULL, NULL,
};

static char *debuginfo_path;
static const Dwfl_Callbacks dw_proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static double libdw_pass(Dwfl *dwfl, const struct corpus *c, struct result *r)
{
	double t0 = now();

	r->total = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		int rc;
		dw.cur = &c->s[i];
		dw.nframes = 0;
		rc = dwfl_getthread_frames(dwfl, dw.tid, dw_frame, NULL);
		r->total += dw.nframes;
		if (r->frames) {
			r->frames[i] = dw.nframes;
			r->end[i] = rc != 0;
			r->err[i] = rc ? dwfl_errno() : 0;
			memcpy(r->pcs[i], dw.pcs, sizeof(dw.pcs));
		}
	}
	return now() - t0;
}

/* libdw the way perf's libdw unwinder (util/unwind-libdw.c in 6.1) drives it: a new Dwfl for
 * every sample, each module reported (its ELF file opened) when a frame first needs it, then
 * dwfl_end. (Debian's perf is built with libunwind, which perf then prefers: its
 * --call-graph dwarf does not go through libdw at all; bench/record-cost.sh measures it.) */
struct file_map {
	char path[1024];
	uint64_t start, end, base;
};
static struct file_map *fmaps;
static size_t nfmaps;

static const Dwfl_Callbacks dw_offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
	.section_address = dwfl_offline_section_address,
};

__attribute__((noinline)) static void fmaps_from_text(const char *maps)
{
	uint64_t base = 0;
	char last[1024] = "";

	for (const char *line = maps; *line;) {
		const char *nl = strchr(line, '\n');
		char buf[4200], perms[8];
		unsigned long long a, b, off, ino;
		unsigned maj, min;
		int name = 0;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (nl ? 1 : 0);
		if (sscanf(buf, "%llx-%llx %7s %llx %x:%x %llu %n", &a, &b, perms, &off, &maj, &min, &ino, &name) < 7 ||
		    !name || buf[name] != '/')
			continue;
		if (strcmp(last, buf + name)) {
			snprintf(last, sizeof(last), "%s", buf + name);
			base = a - off;
		}
		if (!strchr(perms, 'x'))
			continue;
		fmaps = realloc(fmaps, (nfmaps + 1) * sizeof(*fmaps));
		snprintf(fmaps[nfmaps].path, sizeof(fmaps[nfmaps].path), "%s", buf + name);
		fmaps[nfmaps].start = a;
		fmaps[nfmaps].end = b;
		fmaps[nfmaps].base = base;
		nfmaps++;
	}
}

static void perf_style_report(Dwfl *dwfl, uint64_t pc)
{
	if (dwfl_addrmodule(dwfl, pc))
		return;
	for (size_t i = 0; i < nfmaps; i++)
		if (pc >= fmaps[i].start && pc < fmaps[i].end) {
			dwfl_report_begin_add(dwfl);
			dwfl_report_elf(dwfl, fmaps[i].path, fmaps[i].path, -1, fmaps[i].base, false);
			dwfl_report_end(dwfl, NULL, NULL);
			return;
		}
}

static int perf_style_frame(Dwfl_Frame *state, void *arg)
{
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	perf_style_report(arg, activation ? pc : pc - 1);
	return ++dw.nframes >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static double perf_style_pass(const struct corpus *c, uint32_t n, uint64_t *frames)
{
	double t0 = now();

	*frames = 0;
	for (uint32_t i = 0; i < n; i++) {
		Dwfl *dwfl = dwfl_begin(&dw_offline_callbacks);
		dw.cur = &c->s[i];
		dw.nframes = 0;
		perf_style_report(dwfl, c->s[i].regs[16]);
		if (dwfl_attach_state(dwfl, NULL, dw.tid, &dw_callbacks, NULL))
			dwfl_getthread_frames(dwfl, dw.tid, perf_style_frame, dwfl);
		*frames += dw.nframes;
		dwfl_end(dwfl);
	}
	return now() - t0;
}

/* ---- reporting ---- */

static const char *stop_name(uint8_t s)
{
	static const char *names[] = {"end", "depth", "stack-copy", "no-info", "unmapped"};
	return s < HS_STOP_COUNT ? names[s] : "?";
}

static void print_sym(Dwfl *dwfl, uint64_t pc, bool ret)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, ret ? pc - 1 : pc);
	const char *name = mod ? dwfl_module_addrname(mod, ret ? pc - 1 : pc) : NULL;
	const char *file = mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
	const char *slash = file ? strrchr(file, '/') : NULL;

	printf("%#" PRIx64 " %s [%s]", pc, name ? name : "??", slash ? slash + 1 : file ? file : "unmapped");
}

/* every libdw frame of one sample, for show_sample() */
static struct {
	uint64_t pc[MAX_FRAMES];
	bool ret[MAX_FRAMES];
	uint32_t n;
} all;

static int dw_frame_all(Dwfl_Frame *state, void *arg)
{
	Dwarf_Addr pc;
	bool activation;

	(void)arg;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	all.pc[all.n] = pc;
	all.ret[all.n] = !activation;
	return ++all.n >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* Both chains of one sample, side by side, symbolized: the start, the frames around where
 * they first differ, and the end. */
__attribute__((noinline)) static void show_sample(Dwfl *dwfl, struct hs_unwinder *u, int32_t pid,
						  const struct corpus *c, uint32_t i)
{
	const struct sample *s = &c->s[i];
	struct hs_callchain cc = {{0}, HS_STOP_END};
	struct hs_regs regs;
	struct hs_stack_copy copy = {s->sp, s->data, s->size};
	size_t n, diff;
	int rc;

	memcpy(regs.r, s->regs, sizeof(regs.r));
	regs.valid = (1u << NREGS) - 1;
	hs_unwind_user(u, pid, &regs, &copy, &cc);
	dw.cur = s;
	all.n = 0;
	rc = dwfl_getthread_frames(dwfl, dw.tid, dw_frame_all, NULL);
	printf("  sample %u: sp %#" PRIx64 ", %u bytes copied; hotstack %zu frames (stop: %s), libdw %u (%s)\n", i, s->sp,
	       s->size, cc.frames.n, stop_name((uint8_t)cc.stop), all.n, rc ? dwfl_errmsg(-1) : "ok");
	n = cc.frames.n > all.n ? cc.frames.n : all.n;
	for (diff = 0; diff < n; diff++)
		if (diff >= cc.frames.n || diff >= all.n || cc.frames.v[diff].addr != all.pc[diff])
			break;
	for (size_t k = 0; k < n; k++) {
		bool near = k < 3 || k + 3 >= n || (k + 3 >= diff && k <= diff + 3);
		if (!near) {
			if (k == 3 || k == diff + 4)
				printf("      ...\n");
			continue;
		}
		printf("    %c #%-4zu ", k == diff ? '>' : ' ', k);
		if (k < cc.frames.n)
			print_sym(dwfl, cc.frames.v[k].addr, cc.frames.v[k].ret);
		else
			printf("-");
		printf("  |  ");
		if (k < all.n)
			print_sym(dwfl, all.pc[k], all.ret[k]);
		else
			printf("-");
		printf("\n");
	}
	hs_callchain_release(&cc);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unwind-throughput [options]\n"
		   "Unwinding throughput on one core: hotstack's unwinder against libdw's, same corpus.\n\n"
		   "  -n, --samples N     samples to collect (default 5000)\n"
		   "  -F, --freq HZ       sampling frequency while collecting (default 2000)\n"
		   "      --itimer        sample with setitimer(ITIMER_PROF) (tick-bound: slow to collect)\n"
		   "  -S, --stack-size N  bytes of stack copied per sample (default and maximum 32768)\n"
		   "  -o, --output FILE   where to write the corpus (default /tmp/hotstack-unwind-corpus.bin)\n"
		   "  -i, --input FILE    reuse a stored corpus instead of collecting one\n"
		   "  -p, --passes N      warm passes per unwinder (default 5; the median is shown)\n"
		   "  -c, --cpu N         CPU to pin to (default: the current one)\n"
		   "      --cfi-only      hotstack without its frame-pointer fallback (-g dwarf)\n"
		   "      --perf-style N  samples for the one-Dwfl-per-sample libdw run (default 300, 0: none)\n"
		   "  -s, --show I        show sample I's frames from both unwinders (repeatable)\n"
		   "  -v, --verbose       show every disagreement\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"samples", required_argument, NULL, 'n'}, {"freq", required_argument, NULL, 'F'},
		{"itimer", no_argument, NULL, 'I'},        {"output", required_argument, NULL, 'o'},
		{"input", required_argument, NULL, 'i'},   {"passes", required_argument, NULL, 'p'},
		{"cpu", required_argument, NULL, 'c'},     {"cfi-only", no_argument, NULL, 'C'},
		{"perf-style", required_argument, NULL, 'P'}, {"verbose", no_argument, NULL, 'v'},
		{"show", required_argument, NULL, 's'},
		{"stack-size", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	uint32_t nsamples = 5000, perf_style_n = 300, show[16], nshow = 0;
	unsigned hz = 2000;
	int passes = 5, cpu = -1, opt, verbose = 0;
	bool itimer = false, cfi_only = false;
	const char *out = "/tmp/hotstack-unwind-corpus.bin", *in = NULL;
	struct corpus c = {0};
	cpu_set_t set;
	int32_t pid = getpid();
	struct hs_model model;
	struct hs_unwinder u;
	struct hs_unwinder_opts uo = {true, 0, 0};
	struct hs_callchain cc = {{0}, HS_STOP_END};
	struct result hr, dr, scratch = {0};
	double t_model, t_hcold, t_dreport, t_dcold, *th, *td, wh, wd;
	Dwfl *dwfl;

	while ((opt = getopt_long(argc, argv, "n:F:S:o:i:p:c:s:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			nsamples = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'F':
			hz = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			col.copy = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'I':
			itimer = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'i':
			in = optarg;
			break;
		case 'p':
			passes = atoi(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'C':
			cfi_only = true;
			break;
		case 'P':
			perf_style_n = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = 1;
			break;
		case 's':
			if (nshow < 16)
				show[nshow++] = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!col.copy)
		col.copy = COPY_MAX;
	if (!nsamples || !hz || hz > 1000000 || passes < 1 || col.copy > COPY_MAX || col.copy % 8) {
		usage(stderr);
		return 2;
	}
	uo.fp_fallback = !cfi_only;
	/* no network lookups of debug info from libdw while it is timed */
	unsetenv("DEBUGINFOD_URLS");

	if (cpu < 0)
		cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}

	if (!in) {
		double secs;
		char *maps;
		size_t bytes = 0;
		if (collect(nsamples, hz, itimer, &secs))
			return 1;
		maps = read_text("/proc/self/maps");
		for (uint32_t i = 0; i < col.n; i++)
			bytes += col.s[i].size;
		if (!maps || corpus_write(out, maps)) {
			fprintf(stderr, "cannot write '%s': %s\n", out, strerror(errno));
			return 1;
		}
		printf("corpus: %u samples (%u skipped), %.1f MiB of stack, collected in %.1f s at %u Hz (%s), "
		       "written to %s\n",
		       col.n, col.skipped, bytes / 1048576.0, secs, hz, itimer ? "ITIMER_PROF" : "CLOCK_MONOTONIC timer",
		       out);
		free(maps);
		munmap(col.slots, (size_t)col.cap * COPY_MAX);
		free(col.s);
		in = out;
	} else if (corpus_read(in, &c) == 0 && maps_check(c.maps)) {
		fprintf(stderr, "collect a new corpus (without -i)\n");
		return 1;
	}
	/* the fresh corpus is read back too: both runs time the same layout */
	if (c.s == NULL && corpus_read(in, &c)) {
		fprintf(stderr, "cannot read corpus '%s'\n", in);
		return 1;
	}
	if (!c.n) {
		fprintf(stderr, "empty corpus\n");
		return 1;
	}
	if (in != out)
		printf("corpus: %u samples, %.1f MiB of stack, read from %s\n", c.n, c.stack_bytes / 1048576.0, in);
	printf("pinned to CPU %d; %d warm passes per unwinder, median shown; hotstack mode %s\n\n", cpu, passes,
	       cfi_only ? "dwarf (CFI only)" : "auto (CFI, frame pointers where no CFI)");

	th = calloc((size_t)passes, sizeof(*th));
	td = calloc((size_t)passes, sizeof(*td));
	result_init(&hr, c.n);
	result_init(&dr, c.n);

	/* hotstack: the model (from /proc for a fresh corpus, from the stored maps otherwise),
	 * then a cold pass that builds the CFI tables, then warm passes */
	{
		double t0 = now();
		hs_model_init(&model);
		if (in == out)
			hs_model_from_proc(&model, pid, NULL, NULL);
		else
			model_from_maps(&model, pid, c.maps);
		t_model = now() - t0;
	}
	hs_unwinder_init(&u, &model, &uo);
	t_hcold = hotstack_pass(&u, pid, &c, &cc, &scratch);

	/* libdw: one Dwfl for the whole corpus, reused (its best case) */
	dw.tid = pid;
	{
		double t0 = now();
		dwfl = dwfl_begin(&dw_proc_callbacks);
		dwfl_report_begin(dwfl);
		if (in == out) {
			dwfl_linux_proc_report(dwfl, pid);
		} else {
			FILE *f = fmemopen(c.maps, strlen(c.maps), "r");
			dwfl_linux_proc_maps_report(dwfl, f);
			fclose(f);
		}
		dwfl_report_end(dwfl, NULL, NULL);
		if (!dwfl_attach_state(dwfl, NULL, pid, &dw_callbacks, NULL)) {
			fprintf(stderr, "libdw: cannot attach state: %s\n", dwfl_errmsg(-1));
			return 1;
		}
		t_dreport = now() - t0;
	}
	t_dcold = libdw_pass(dwfl, &c, &scratch);
	/* warm passes alternate, so that a slower spell of the machine hits both sides */
	for (int p = 0; p < passes; p++) {
		th[p] = hotstack_pass(&u, pid, &c, &cc, p == 0 ? &hr : &scratch);
		td[p] = libdw_pass(dwfl, &c, p == 0 ? &dr : &scratch);
	}

	wh = median(th, passes);
	wd = median(td, passes);
	printf("%-26s %12s %14s %10s %10s\n", "warm", "samples/s", "frames/s", "ns/frame", "frames");
	printf("%-26s %12.0f %14.0f %10.1f %10" PRIu64 "\n", "hotstack", c.n / wh, hr.total / wh, wh * 1e9 / hr.total,
	       hr.total);
	printf("%-26s %12.0f %14.0f %10.1f %10" PRIu64 "\n", "libdw (one Dwfl)", c.n / wd, dr.total / wd,
	       wd * 1e9 / dr.total, dr.total);
	if (perf_style_n) {
		uint64_t pf;
		double tp;
		uint32_t n = perf_style_n < c.n ? perf_style_n : c.n;
		fmaps_from_text(c.maps);
		tp = perf_style_pass(&c, n, &pf);
		printf("%-26s %12.0f %14.0f %10.1f %10" PRIu64 "   (first %u samples)\n", "libdw (Dwfl per sample)",
		       n / tp, pf / tp, tp * 1e9 / (pf ? pf : 1), pf, n);
	}
	printf("\ncold: hotstack model %.2f ms + first pass %.1f ms (%" PRIu64 " tables built, %.1f MiB); "
	       "libdw report %.2f ms + first pass %.1f ms\n",
	       t_model * 1e3, t_hcold * 1e3, u.stats.tables_built, u.bytes / 1048576.0, t_dreport * 1e3,
	       t_dcold * 1e3);
	printf("ratio hotstack/libdw, warm frames/s: %.2fx\n", (hr.total / wh) / (dr.total / wd));
	printf("target >= 5,000,000 frames/s on one core (hotstack, warm): %s (%.2f M)\n",
	       hr.total / wh >= 5e6 ? "met" : "NOT met", hr.total / wh / 1e6);

	/* agreement */
	{
		uint32_t same_n = 0, same_pcs = 0, hs_more = 0, dw_more = 0;
		uint64_t hstops[HS_STOP_COUNT] = {0};
		uint32_t dw_fail = 0, shown = 0;
		struct {
			uint8_t stop;
			int err, sign;
			uint32_t count, example;
		} kinds[32];
		int nkinds = 0;

		for (uint32_t i = 0; i < c.n; i++) {
			uint32_t k = hr.frames[i] < 8 ? hr.frames[i] : 8;
			hstops[hr.end[i]]++;
			dw_fail += dr.end[i];
			if (hr.frames[i] == dr.frames[i]) {
				same_n++;
				if (!memcmp(hr.pcs[i], dr.pcs[i], k * 8))
					same_pcs++;
				continue;
			}
			if (hr.frames[i] > dr.frames[i])
				hs_more++;
			else
				dw_more++;
			{
				int sign = hr.frames[i] > dr.frames[i] ? 1 : -1, j;
				for (j = 0; j < nkinds; j++)
					if (kinds[j].stop == hr.end[i] && kinds[j].err == dr.err[i] && kinds[j].sign == sign)
						break;
				if (j == nkinds && nkinds < 32) {
					kinds[j].stop = hr.end[i];
					kinds[j].err = dr.err[i];
					kinds[j].sign = sign;
					kinds[j].count = 0;
					kinds[j].example = i;
					nkinds++;
				}
				if (j < nkinds)
					kinds[j].count++;
			}
		}
		printf("\nagreement: same frame count in %.1f%% of samples (%u/%u), and the same first 8 addresses in %.1f%%; "
		       "hotstack longer in %u, libdw longer in %u\n",
		       100.0 * same_n / c.n, same_n, c.n, 100.0 * same_pcs / c.n, hs_more, dw_more);
		printf("hotstack stops:");
		for (int s = 0; s < HS_STOP_COUNT; s++)
			if (hstops[s])
				printf(" %s %" PRIu64, stop_name((uint8_t)s), hstops[s]);
		printf("; libdw: %u ended without error, %u with an error\n", c.n - dw_fail, dw_fail);
		for (int j = 0; j < nkinds; j++) {
			printf("disagreement: %u samples where %s is longer, hotstack stop %s, libdw %s; e.g.\n",
			       kinds[j].count, kinds[j].sign > 0 ? "hotstack" : "libdw", stop_name(kinds[j].stop),
			       kinds[j].err ? dwfl_errmsg(kinds[j].err) : "ok");
			show_sample(dwfl, &u, pid, &c, kinds[j].example);
		}
		for (uint32_t k = 0; k < nshow; k++)
			if (show[k] < c.n)
				show_sample(dwfl, &u, pid, &c, show[k]);
		if (verbose)
			for (uint32_t i = 0; i < c.n; i++)
				if (hr.frames[i] != dr.frames[i] && shown++ < 1000)
					show_sample(dwfl, &u, pid, &c, i);
	}

	dwfl_end(dwfl);
	hs_callchain_release(&cc);
	hs_unwinder_release(&u);
	hs_model_release(&model);
	result_free(&hr);
	result_free(&dr);
	free(th);
	free(td);
	return 0;
}
