/* Loading and feeding the runtimes' frame readers (reader.h) with libbpf, from the BPF objects
 * each runtime embeds, and the dispatcher that runs them. */
#include "record/reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "util/cache.h"
#include "util/util.h"

/* What goes with the sampling events is a dispatcher of a few instructions that tail-calls the
 * slots of a program array in turn, empty until a reader is loaded into one: the kernel gives an
 * event's program to the copies it makes for threads and children (inherit) when it makes them,
 * and never later, so a program attached to the events after a process started threads would
 * miss those (and, as the kernel swaps the contexts of a thread and its copy at a switch, the
 * process's own samples on some CPUs). A reader whose process table does not have the sampled
 * process tail-calls the slots after its own. A reader costs milliseconds to load; the
 * dispatcher 0.1 ms.
 * Each reader's ring has a libbpf ring_buffer of its own, made whole before it is published to
 * the draining thread (release, acquire) and never changed after: libbpf's ring_buffer__add()
 * reallocates the rings that ring_buffer__consume() on another thread is walking and storing
 * each one's consumer position through. */
struct hs_rt_reader {
	int slots;    /* BPF_MAP_TYPE_PROG_ARRAY of HS_RT_SLOTS, shared with the readers */
	int dispatch; /* the program attached to the events */
	int epfd;     /* every loaded reader's ring: hs_rt_reader_fd() */
	struct bpf_object *obj[HS_RT_SLOTS]; /* the readers loaded */
	struct ring_buffer *rb[HS_RT_SLOTS]; /* their rings (atomic: set once, by the loading thread) */
	struct ring_ctx {
		struct hs_rt_reader *rd;
		unsigned id;
	} ring[HS_RT_SLOTS];
	void (*cb)(void *ctx, unsigned id, const void *data, size_t size);
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
	struct ring_ctx *rc = ctx;

	rc->rd->cb(rc->rd->cb_ctx, rc->id, data, size);
	return 0;
}

static void say_refused(int e, const struct hs_runtime *rt, const char *what, char *why, size_t whylen)
{
	if (e == -EPERM || e == -EACCES)
		snprintf(why, whylen, "reading %s frames needs root, or CAP_BPF and CAP_PERFMON", rt->name);
	else
		snprintf(why, whylen, "the kernel refused %s: %s", what, strerror(-e));
}

int hs_rt_reader_open(struct hs_rt_reader **ret)
{
	struct hs_rt_reader *rd;
	int e;

	*ret = NULL;
	libbpf_set_print(quiet);
	rd = hs_xcalloc(1, sizeof(*rd));
	rd->dispatch = -1;
	rd->epfd = epoll_create1(EPOLL_CLOEXEC);
	rd->slots = rd->epfd < 0 ? -1 : bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "hs_rt_slots", 4, 4, HS_RT_SLOTS, NULL);
	if (rd->slots >= 0) {
		/* r6 keeps the context; each tail call to an empty slot falls through to the next;
		 * r0 = 1 lets the sample through when all are */
		struct bpf_insn insns[2 + (HS_RT_SLOTS - 1) * 5 + 2], *p = insns;
		*p++ = (struct bpf_insn){BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0};
		for (int i = 1; i < HS_RT_SLOTS; i++) {
			*p++ = (struct bpf_insn){BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0};
			*p++ = (struct bpf_insn){BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, rd->slots};
			*p++ = (struct bpf_insn){0, 0, 0, 0, 0};
			*p++ = (struct bpf_insn){BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, i};
			*p++ = (struct bpf_insn){BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call};
		}
		*p++ = (struct bpf_insn){BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1};
		*p++ = (struct bpf_insn){BPF_JMP | BPF_EXIT, 0, 0, 0, 0};
		rd->dispatch = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "hs_rt_dispatch", "Dual MIT/GPL", insns,
					     (size_t)(p - insns), NULL);
	}
	if (rd->slots < 0 || rd->dispatch < 0) {
		e = -errno;
		hs_rt_reader_close(rd);
		return e == -EACCES ? -EPERM : e;
	}
	*ret = rd;
	return 0;
}

/* Sets the 32-bit read-only variable name of obj (const volatile in its source) before it loads:
 * its offset in .rodata from the object's BTF. */
static int set_rodata_u32(struct bpf_object *obj, const char *name, uint32_t value)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *b = bpf_object__btf(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *t;
	int32_t sec;
	size_t size;
	const void *now;
	uint8_t data[256];

	if (!m || !b || (sec = btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC)) < 0 ||
	    !(now = bpf_map__initial_value(m, &size)) || size > sizeof(data))
		return -ENOENT;
	memcpy(data, now, size);
	t = btf__type_by_id(b, (uint32_t)sec);
	v = btf_var_secinfos(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++, v++) {
		const char *n = btf__name_by_offset(b, btf__type_by_id(b, v->type)->name_off);
		if (n && !strcmp(n, name) && v->size == 4 && v->offset + 4 <= size) {
			memcpy(data + v->offset, &value, 4);
			return bpf_map__set_initial_value(m, data, size);
		}
	}
	return -ENOENT;
}

/* About 50 ms of deep stacks (4 KiB) at 999 Hz per CPU, a reader's longest wait. */
static uint32_t ring_size(void)
{
	int ncpus = libbpf_num_possible_cpus();
	uint32_t ring = 1u << 20;

	while (ncpus > 0 && ring < (uint32_t)ncpus * (512u << 10) && ring < (16u << 20))
		ring <<= 1;
	return ring;
}

/* rt's object opened and set up, not loaded: NULL with why. */
static struct bpf_object *open_object(struct hs_rt_reader *rd, const struct hs_runtime *rt, char *why, size_t whylen)
{
	char name[32];
	size_t size;
	const void *bytes = rt->bpf_object(&size);
	struct bpf_object *obj;
	struct bpf_map *m;
	uint32_t fsbase = kernel_fsbase_offset();
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = name);

	snprintf(name, sizeof(name), "hs_rt%u", rt->id);
	obj = bpf_object__open_mem(bytes, size, &opts);
	if (!obj) {
		snprintf(why, whylen, "cannot open the %s frame reader: %s", rt->name, strerror(errno));
		return NULL;
	}
	if (!fsbase)
		snprintf(why, whylen, "the kernel's BTF does not say where a task's fs base is");
	else if (set_rodata_u32(obj, "fsbase_off", fsbase) || set_rodata_u32(obj, "self_slot", rt->id) ||
		 !(m = bpf_object__find_map_by_name(obj, "slots")) || bpf_map__reuse_fd(m, rd->slots) ||
		 !(m = bpf_object__find_map_by_name(obj, "stacks")) || bpf_map__set_max_entries(m, ring_size()) ||
		 !(m = bpf_object__find_map_by_name(obj, "scratch")) ||
		 bpf_map__set_max_entries(m, (uint32_t)HS_MAX(libbpf_num_possible_cpus(), 1)))
		snprintf(why, whylen, "the %s frame reader is not one this hotstack can load", rt->name);
	else
		return obj;
	bpf_object__close(obj);
	return NULL;
}

int hs_rt_reader_load(struct hs_rt_reader *rd, const struct hs_runtime *rt, char *why, size_t whylen)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct ring_buffer *rb;
	struct epoll_event ee = {EPOLLIN, {.u32 = rt->id}};
	int e, fd, ring;
	uint32_t slot = rt->id;

	if (rd->obj[rt->id])
		return 0;
	if (!(obj = open_object(rd, rt, why, whylen)))
		return -ENOTSUP;
	if ((e = bpf_object__load(obj))) {
		say_refused(e, rt, "the frame reader", why, whylen);
		bpf_object__close(obj);
		return e == -EACCES ? -EPERM : e;
	}
	ring = bpf_map__fd(bpf_object__find_map_by_name(obj, "stacks"));
	rd->ring[rt->id] = (struct ring_ctx){rd, rt->id};
	if (!(rb = ring_buffer__new(ring, on_stack, &rd->ring[rt->id], NULL))) {
		e = -errno;
		snprintf(why, whylen, "cannot map the %s frame reader's ring: %s", rt->name, strerror(-e));
		bpf_object__close(obj);
		return e;
	}
	/* from here on every event's dispatcher runs the reader */
	prog = bpf_object__next_program(obj, NULL);
	fd = prog ? bpf_program__fd(prog) : -1;
	if (fd < 0 || bpf_map_update_elem(rd->slots, &slot, &fd, BPF_ANY)) {
		e = -errno;
		say_refused(e, rt, "the frame reader's dispatch", why, whylen);
		ring_buffer__free(rb);
		bpf_object__close(obj);
		return e;
	}
	/* the ring's own descriptor, not rb's epoll one: the recording watches this set in a set
	 * of its own, and the kernel allows few levels of those. A wake-up is a hint (every round
	 * drains anyway), so a failure here is not the reader's. */
	epoll_ctl(rd->epfd, EPOLL_CTL_ADD, ring, &ee);
	rd->obj[rt->id] = obj;
	__atomic_store_n(&rd->rb[rt->id], rb, __ATOMIC_RELEASE);
	return 0;
}

void hs_rt_reader_close(struct hs_rt_reader *rd)
{
	if (!rd)
		return;
	for (unsigned i = 0; i < HS_RT_SLOTS; i++) {
		ring_buffer__free(rd->rb[i]);
		bpf_object__close(rd->obj[i]);
	}
	if (rd->epfd >= 0)
		close(rd->epfd);
	if (rd->dispatch >= 0)
		close(rd->dispatch);
	if (rd->slots >= 0)
		close(rd->slots);
	free(rd);
}

int hs_rt_reader_attach(struct hs_rt_reader *rd, int perf_fd)
{
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, rd->dispatch) < 0)
		return -errno;
	return 0;
}

static struct bpf_map *procs(struct hs_rt_reader *rd, const struct hs_runtime *rt)
{
	return rd->obj[rt->id] ? bpf_object__find_map_by_name(rd->obj[rt->id], "procs") : NULL;
}

int hs_rt_reader_add(struct hs_rt_reader *rd, const struct hs_runtime *rt, uint32_t pid, const void *proc)
{
	struct bpf_map *m = procs(rd, rt);
	uint8_t info[512];
	int e;

	if (!m || rt->proc_info_size > sizeof(info) || bpf_map__value_size(m) != rt->proc_info_size)
		return -EINVAL;
	if ((e = rt->proc_info(proc, info)))
		return e;
	if (bpf_map__update_elem(m, &pid, sizeof(pid), info, rt->proc_info_size, BPF_ANY))
		return -errno;
	return 0;
}

void hs_rt_reader_remove(struct hs_rt_reader *rd, const struct hs_runtime *rt, uint32_t pid)
{
	struct bpf_map *m = procs(rd, rt);

	if (m)
		bpf_map__delete_elem(m, &pid, sizeof(pid), 0);
}

int hs_rt_reader_drain(struct hs_rt_reader *rd, void (*cb)(void *ctx, unsigned id, const void *data, size_t size),
		       void *ctx)
{
	int n = 0, err = 0;

	rd->cb = cb;
	rd->cb_ctx = ctx;
	for (unsigned i = 0; i < HS_RT_SLOTS; i++) {
		struct ring_buffer *rb = __atomic_load_n(&rd->rb[i], __ATOMIC_ACQUIRE);
		int got = rb ? ring_buffer__consume(rb) : 0;
		if (got < 0 && !err)
			err = got;
		else if (got > 0)
			n += got;
	}
	return err ? err : n;
}

int hs_rt_reader_fd(struct hs_rt_reader *rd)
{
	return rd->epfd;
}

uint64_t hs_rt_reader_dropped(struct hs_rt_reader *rd, const struct hs_runtime *rt)
{
	int ncpus = libbpf_num_possible_cpus();
	struct bpf_map *m = rd->obj[rt->id] ? bpf_object__find_map_by_name(rd->obj[rt->id], "dropped") : NULL;
	uint64_t sum = 0, *v;
	uint32_t zero = 0;

	if (ncpus <= 0 || !m)
		return 0;
	v = hs_xcalloc((size_t)ncpus, sizeof(*v));
	if (!bpf_map__lookup_elem(m, &zero, sizeof(zero), v, sizeof(*v) * (size_t)ncpus, 0))
		for (int i = 0; i < ncpus; i++)
			sum += v[i];
	free(v);
	return sum;
}
