/* Loading and feeding the Python frame reader (pyframes.h), with libbpf and the skeleton
 * bpftool generates from bpf/pyframes.bpf.c at build time, and the dispatcher that runs it. */
#include "record/pyframes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "pyframes.skel.h"
#include "util/cache.h"
#include "util/util.h"

/* What goes with the sampling events is a dispatcher of six instructions that tail-calls slot 0
 * of a program array, empty until the reader is loaded: the kernel gives an event's program to
 * the copies it makes for threads and children (inherit) when it makes them, and never later,
 * so a program attached to the events after a process started threads would miss those (and,
 * as the kernel swaps the contexts of a thread and its copy at a switch, the process's own
 * samples on some CPUs). The reader itself costs milliseconds to load; the dispatcher 0.1 ms. */
struct hs_pyframes {
	int slots;             /* BPF_MAP_TYPE_PROG_ARRAY of one */
	int dispatch;          /* the program attached to the events */
	struct pyframes *skel; /* the reader, once loaded */
	struct ring_buffer *rb;
	void (*cb)(void *ctx, const void *data, size_t size);
	void *cb_ctx;
};

/* libbpf prints its own diagnostics to stderr by default: hotstack words the one error that
 * matters itself. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* The byte offset of member name in struct or union id of b (its type's id in *type), or -1. */
static int64_t member_offset(const struct btf *b, uint32_t id, const char *name, uint32_t *type)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	const struct btf_member *m;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);
		int32_t r;
		if (!n || strcmp(n, name) || btf_member_bitfield_size(t, i))
			continue;
		if ((r = btf__resolve_type(b, m->type)) < 0)
			return -1;
		*type = (uint32_t)r;
		return btf_member_bit_offset(t, i) / 8;
	}
	return -1;
}

/* task_struct.thread.fsbase's offset in the running kernel, from its BTF, or 0. Finding it
 * means parsing all of the kernel's BTF (megabytes, milliseconds): the answer is kept in the
 * user's cache for the rest of the boot. */
static uint32_t kernel_fsbase_offset(void)
{
	char boot[37], line[64], *cached;
	size_t n;
	unsigned off = 0;
	struct btf *b;
	int32_t task;
	uint32_t type;
	int64_t thread, fsbase;

	if (hs_boot_id(boot))
		boot[0] = '\0';
	if (boot[0] && (cached = hs_cache_read("fsbase", 63, &n))) {
		bool ok = !strncmp(cached, boot, 36) && sscanf(cached + 36, " %u", &off) == 1 && off;
		free(cached);
		if (ok)
			return off;
	}
	b = btf__load_vmlinux_btf();
	if (!b)
		return 0;
	task = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
	if (task > 0 && (thread = member_offset(b, (uint32_t)task, "thread", &type)) >= 0 &&
	    (fsbase = member_offset(b, type, "fsbase", &type)) >= 0 && thread + fsbase < UINT32_MAX)
		off = (unsigned)(thread + fsbase);
	btf__free(b);
	if (off && boot[0]) {
		n = (size_t)snprintf(line, sizeof(line), "%s %u\n", boot, off);
		hs_cache_write("fsbase", line, n);
	}
	return off;
}

static int on_stack(void *ctx, void *data, size_t size)
{
	struct hs_pyframes *pf = ctx;

	pf->cb(pf->cb_ctx, data, size);
	return 0;
}

static void say_refused(int e, const char *what, char *why, size_t whylen)
{
	if (e == -EPERM || e == -EACCES)
		snprintf(why, whylen, "reading Python frames needs root, or CAP_BPF and CAP_PERFMON");
	else
		snprintf(why, whylen, "the kernel refused %s: %s", what, strerror(-e));
}

int hs_pyframes_open(struct hs_pyframes **ret, char *why, size_t whylen)
{
	struct hs_pyframes *pf;
	int e;

	*ret = NULL;
	libbpf_set_print(quiet);
	pf = hs_xcalloc(1, sizeof(*pf));
	pf->dispatch = -1;
	pf->slots = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "hs_py_slots", 4, 4, 1, NULL);
	if (pf->slots >= 0) {
		/* r1 is the context, passed on; r0 = 1 lets the sample through when the slot is empty */
		struct bpf_insn insns[] = {
			{BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, pf->slots},
			{0, 0, 0, 0, 0},
			{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0},
			{BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call},
			{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1},
			{BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
		};
		pf->dispatch = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "hs_py_dispatch", "Dual MIT/GPL", insns,
					     HS_ARRAY_SIZE(insns), NULL);
	}
	if (pf->slots < 0 || pf->dispatch < 0) {
		e = -errno;
		say_refused(e, "the Python frame reader", why, whylen);
		hs_pyframes_close(pf);
		return e == -EACCES ? -EPERM : e;
	}
	*ret = pf;
	return 0;
}

int hs_pyframes_load(struct hs_pyframes *pf, char *why, size_t whylen)
{
	uint32_t ring, zero = 0;
	int e, ncpus, prog;

	if (pf->skel)
		return 0;
	pf->skel = pyframes__open();
	if (!pf->skel) {
		e = -errno;
		snprintf(why, whylen, "cannot open the Python frame reader: %s", strerror(-e));
		return e;
	}
	pf->skel->rodata->fsbase_off = kernel_fsbase_offset();
	if (!pf->skel->rodata->fsbase_off) {
		snprintf(why, whylen, "the kernel's BTF does not say where a task's fs base is");
		e = -ENOTSUP;
		goto fail;
	}
	/* about 50 ms of deep stacks (4 KiB) at 999 Hz per CPU, the reader's longest wait */
	ncpus = libbpf_num_possible_cpus();
	ring = 1u << 20;
	while (ncpus > 0 && ring < (uint32_t)ncpus * (512u << 10) && ring < (16u << 20))
		ring <<= 1;
	bpf_map__set_max_entries(pf->skel->maps.stacks, ring);
	if ((e = pyframes__load(pf->skel))) {
		say_refused(e, "the Python frame reader", why, whylen);
		e = e == -EACCES ? -EPERM : e;
		goto fail;
	}
	pf->rb = ring_buffer__new(bpf_map__fd(pf->skel->maps.stacks), on_stack, pf, NULL);
	if (!pf->rb) {
		e = -errno;
		snprintf(why, whylen, "cannot map the Python frame reader's ring: %s", strerror(-e));
		goto fail;
	}
	/* from here on every event's dispatcher runs the reader */
	prog = bpf_program__fd(pf->skel->progs.hs_py_read_frames);
	if (bpf_map_update_elem(pf->slots, &zero, &prog, BPF_ANY)) {
		e = -errno;
		say_refused(e, "the Python frame reader's dispatch", why, whylen);
		goto fail;
	}
	return 0;
fail:
	ring_buffer__free(pf->rb);
	pf->rb = NULL;
	pyframes__destroy(pf->skel);
	pf->skel = NULL;
	return e;
}

void hs_pyframes_close(struct hs_pyframes *pf)
{
	if (!pf)
		return;
	ring_buffer__free(pf->rb);
	pyframes__destroy(pf->skel);
	if (pf->dispatch >= 0)
		close(pf->dispatch);
	if (pf->slots >= 0)
		close(pf->slots);
	free(pf);
}

int hs_pyframes_attach(struct hs_pyframes *pf, int perf_fd)
{
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, pf->dispatch) < 0)
		return -errno;
	return 0;
}

/* Bytes of a frame the program reads: to the end of the last field it uses. */
static uint16_t frame_read(const struct hs_py_offsets *o)
{
	uint16_t end = HS_MAX(o->frame_back, o->frame_code) + 8;

	end = HS_MAX(end, o->frame_instr + (o->instr == HS_PY_INSTR_PTR ? 8 : 4));
	if (o->frame_owner != HS_PY_NONE)
		end = HS_MAX(end, o->frame_owner + 1);
	return end;
}

int hs_pyframes_add(struct hs_pyframes *pf, uint32_t pid, const struct hs_py_interp *in)
{
	struct hs_py_proc_info info = in->info;

	info.frame_read = frame_read(&info.off);
	info.off.code_name = in->code.code_name;
	info.off.code_filename = in->code.code_filename;
	info.code_read = (uint16_t)HS_MAX(HS_MAX(16, info.off.code_firstlineno + 4),
					  HS_MAX(info.off.code_name, info.off.code_filename) + 8);
	info.version = in->version;
	/* the program reads at most 128 bytes of each, and fields 8-aligned within them */
	if (info.frame_read > 128 || info.code_read > 128)
		return -EINVAL;
	if (bpf_map__update_elem(pf->skel->maps.procs, &pid, sizeof(pid), &info, sizeof(info), BPF_ANY))
		return -errno;
	return 0;
}

void hs_pyframes_remove(struct hs_pyframes *pf, uint32_t pid)
{
	bpf_map__delete_elem(pf->skel->maps.procs, &pid, sizeof(pid), 0);
}

int hs_pyframes_drain(struct hs_pyframes *pf, void (*cb)(void *ctx, const void *data, size_t size), void *ctx)
{
	pf->cb = cb;
	pf->cb_ctx = ctx;
	return ring_buffer__consume(pf->rb);
}

int hs_pyframes_fd(struct hs_pyframes *pf)
{
	return ring_buffer__epoll_fd(pf->rb);
}

uint64_t hs_pyframes_dropped(struct hs_pyframes *pf)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;
	uint32_t zero = 0;

	if (ncpus <= 0)
		return 0;
	v = hs_xcalloc((size_t)ncpus, sizeof(*v));
	if (!bpf_map__lookup_elem(pf->skel->maps.dropped, &zero, sizeof(zero), v, sizeof(*v) * (size_t)ncpus, 0))
		for (int i = 0; i < ncpus; i++)
			sum += v[i];
	free(v);
	return sum;
}
