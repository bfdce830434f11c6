/* CPython as a runtime (runtime/runtime.h): its finding, its reader's process table and BPF
 * object, its records and its names store. */
#include "runtime/python/python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/python/names.h"
#include "runtime/runtime.h"
#include "util/util.h"
#include "python.skel.h"

static enum hs_rt_found find(int32_t pid, void **proc, char *why, size_t whylen)
{
	struct hs_py_interp in;

	switch (hs_py_find(pid, &in, why, whylen)) {
	case HS_PY_SUPPORTED:
		*proc = hs_xmalloc(sizeof(in));
		memcpy(*proc, &in, sizeof(in));
		return HS_RT_SUPPORTED;
	case HS_PY_UNSUPPORTED:
		return HS_RT_UNSUPPORTED;
	default:
		return HS_RT_ABSENT;
	}
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

static int proc_info(const void *proc, void *ret)
{
	const struct hs_py_interp *in = proc;
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
	memcpy(ret, &info, sizeof(info));
	return 0;
}

static const void *bpf_object(size_t *size)
{
	return hs_python__elf_bytes(size);
}

HS_RT_STORE_OPS(hs_py, struct hs_py_sample, struct hs_py_frame, HS_PY_MAX_FRAMES)

const struct hs_runtime hs_python_runtime = {
	.id = HS_RT_PYTHON,
	.name = "Python",
	.versions = "2.7, 3.6 to 3.13",
	.shows = "the interpreter's native frames",
	.fallback = "on Python 3.12 and later, python -X perf still names its functions",
	.maybe = hs_py_maybe_runtime,
	.look_ms = 200,
	.find = find,
	.proc_free = free,
	.proc_info_size = sizeof(struct hs_py_proc_info),
	.proc_info = proc_info,
	.bpf_object = bpf_object,
	HS_RT_STORE_MEMBERS,
};
