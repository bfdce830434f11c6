/* Finding a process's CPython: the mapped ELF that defines _PyRuntime, its load bias, the
 * version (Py_Version from 3.11, else the file's name), and for 3.13 the interpreter's own
 * description of its layout (_Py_DebugOffsets), checked against ours. */
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/python/python.h"
#include "util/util.h"

#define MAX_CANDIDATES 16

/* "python3.11", "python3.13t", "libpython3.8.so.1.0", "libpython3.7m.so", "python2.7": the
 * major version in *major, the minor in *minor (-1 for a bare "python3"), or false when the
 * name is none of these. */
static bool runtime_name(const char *path, int *major, int *minor)
{
	const char *b = strrchr(path, '/'), *p;
	bool lib;

	b = b ? b + 1 : path;
	lib = !strncmp(b, "lib", 3);
	p = b + (lib ? 3 : 0);
	if (strncmp(p, "python", 6) || (p[6] != '2' && p[6] != '3'))
		return false;
	*major = p[6] - '0';
	p += 7;
	*minor = -1;
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		char *end;
		long m = strtol(p + 1, &end, 10);
		if (m > 999)
			return false;
		*minor = (int)m;
		p = end;
	}
	while (*p && strchr("dmtu", *p)) /* ABI flags */
		p++;
	/* libpython3.so is the stable ABI's forwarder, without a runtime of its own */
	if (lib)
		return *minor >= 0 && !strncmp(p, ".so", 3) && (!p[3] || p[3] == '.');
	return !*p;
}

bool hs_py_maybe_runtime(const char *path)
{
	int major, minor;

	return path && runtime_name(path, &major, &minor);
}

struct syms {
	uint64_t runtime, code_type, version, str_type, bytes_type;
	uint64_t interp_head; /* before 3.7 (no _PyRuntime): the list of interpreters, a static */
};

/* Reads the runtime's symbols of a mapped file and the load bias of the mapping: 0, or -1 when
 * the file cannot be read or defines neither _PyRuntime nor PyCode_Type. */
static int read_file_syms(int32_t pid, const struct hs_rt_mapping *m, struct syms *s, uint64_t *bias)
{
	static const char *const names[] = {"_PyRuntime",   "PyCode_Type", "Py_Version",   "PyUnicode_Type",
					    "PyBytes_Type", "interp_head", "PyString_Type"};
	uint64_t vals[HS_ARRAY_SIZE(names)] = {0};
	Elf *elf;
	GElf_Ehdr eh;
	int fd, rc = -1;

	if ((fd = hs_rt_open_mapped(pid, m)) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	/* .dynsym first: every build exports the runtime; .symtab for one that does not */
	hs_rt_elf_symbols(elf, SHT_DYNSYM, true, names, HS_ARRAY_SIZE(names), vals);
	if (!vals[0])
		hs_rt_elf_symbols(elf, SHT_SYMTAB, true, names, HS_ARRAY_SIZE(names), vals);
	/* 2.7: str is PyString_Type, bytes the same type */
	*s = (struct syms){vals[0], vals[1], vals[2], vals[3], vals[4] ? vals[4] : vals[6], vals[5]};
	if (!vals[3] || vals[6])
		s->str_type = vals[6];
	/* a CPython before 3.7 has no _PyRuntime, but is one: its list of interpreters is a static
	 * variable, in the .symtab of a build that keeps it */
	if ((!s->runtime && !s->code_type) || hs_rt_load_bias(elf, m, bias))
		goto out;
	rc = 0;
	if (eh.e_type == ET_EXEC && *bias)
		rc = -1; /* a fixed-address executable mapped elsewhere is not what it says */
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

struct candidates {
	struct hs_rt_mapping *out;
	size_t n, max, nexe;
	char exe[256];
};

static int candidate(void *arg, const struct hs_rt_mapping *m)
{
	struct candidates *c = arg;

	/* a deleted file's symbols cannot be read back */
	if (strstr(m->path, " (deleted)"))
		return 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->out[i].path, m->path))
			return 0;
	if (hs_py_maybe_runtime(m->path) || (!strcmp(m->path, c->exe) && c->nexe == SIZE_MAX)) {
		if (c->n == c->max)
			return 1;
		if (!strcmp(m->path, c->exe))
			c->nexe = c->n;
		c->out[c->n++] = *m;
	}
	return 0;
}

/* The distinct files of the process's maps worth looking into: those named like a runtime, then
 * the executable. Each with its first (lowest) mapping. */
static size_t candidates(int32_t pid, struct hs_rt_mapping *out, size_t max)
{
	struct candidates c = {out, 0, max, SIZE_MAX, ""};
	char buf[64];
	ssize_t len;

	snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
	if ((len = readlink(buf, c.exe, sizeof(c.exe) - 1)) > 0)
		c.exe[len] = 0;
	if (hs_rt_maps_each(pid, candidate, &c) < 0)
		return 0;
	/* the executable last: a python3.X executable is both, and tried first anyway */
	if (c.nexe != SIZE_MAX && c.nexe + 1 < c.n && !hs_py_maybe_runtime(out[c.nexe].path)) {
		struct hs_rt_mapping e = out[c.nexe];
		memmove(out + c.nexe, out + c.nexe + 1, (c.n - c.nexe - 1) * sizeof(*out));
		out[c.n - 1] = e;
	}
	return c.n;
}

/* _Py_DebugOffsets as 3.13 lays it out (Include/internal/pycore_runtime.h): a cookie, the
 * version, then per struct its size and its fields' offsets, all uint64_t. */
static const struct {
	const char *name;
	uint16_t at;  /* in _Py_DebugOffsets */
	size_t field; /* offsetof the value in hs_py_interp */
} dbg_fields[] = {
#define OFF(f) offsetof(struct hs_py_interp, info.off.f)
#define CODE(f) offsetof(struct hs_py_interp, code.f)
	{"runtime_state.interpreters_head", 40, OFF(runtime_interp_head)},
	{"interpreter_state.threads_head", 72, OFF(interp_tstate_head)},
	{"thread_state.next", 168, OFF(tstate_next)},
	{"thread_state.current_frame", 184, OFF(tstate_frame)},
	{"thread_state.thread_id", 192, OFF(tstate_thread_id)},
	{"interpreter_frame.previous", 232, OFF(frame_back)},
	{"interpreter_frame.executable", 240, OFF(frame_code)},
	{"interpreter_frame.instr_ptr", 248, OFF(frame_instr)},
	{"interpreter_frame.owner", 264, OFF(frame_owner)},
	{"code_object.filename", 280, CODE(code_filename)},
	{"code_object.name", 288, CODE(code_name)},
	{"code_object.qualname", 296, CODE(code_qualname)},
	{"code_object.linetable", 304, CODE(code_linetable)},
	{"code_object.firstlineno", 312, OFF(code_firstlineno)},
	{"code_object.co_code_adaptive", 344, OFF(code_code)},
	{"bytes_object.ob_size", 520, CODE(bytes_size)},
	{"bytes_object.ob_sval", 528, CODE(bytes_data)},
	{"unicode_object.state", 544, CODE(unicode_state)},
	{"unicode_object.length", 552, CODE(unicode_length)},
	{"unicode_object.asciiobject_size", 560, CODE(unicode_ascii_data)},
#undef OFF
#undef CODE
};

enum hs_py_found hs_py_check_debug_offsets(const void *dbg, struct hs_py_interp *in, char *why, size_t whylen)
{
	const uint8_t *d = dbg;
	uint64_t v, ft, ob_type;

	memcpy(&v, d + 8, 8);
	memcpy(&ft, d + 16, 8);
	memcpy(&ob_type, d + 360, 8);
	if (memcmp(d, "xdebugpy", 8) || (v >> 16) != 0x30d) {
		hs_rt_why(why, whylen, "python 3.13: _PyRuntime does not start with 3.13's _Py_DebugOffsets");
		return HS_PY_UNSUPPORTED;
	}
	if (ft) {
		hs_rt_why(why, whylen, "python 3.13 free-threaded is not supported");
		return HS_PY_UNSUPPORTED;
	}
	if (ob_type != 8) {
		hs_rt_why(why, whylen, "python 3.13: _Py_DebugOffsets.pyobject.ob_type is %" PRIu64 ", expected 8",
			  ob_type);
		return HS_PY_UNSUPPORTED;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(dbg_fields); i++) {
		uint16_t *ours = (uint16_t *)((char *)in + dbg_fields[i].field);
		uint64_t theirs;

		memcpy(&theirs, d + dbg_fields[i].at, 8);
		if (theirs != *ours) {
			hs_rt_why(why, whylen, "python 3.13: _Py_DebugOffsets.%s is %" PRIu64 ", expected %u",
				  dbg_fields[i].name, theirs, *ours);
			return HS_PY_UNSUPPORTED;
		}
		*ours = (uint16_t)theirs;
	}
	return HS_PY_SUPPORTED;
}

enum hs_py_found hs_py_find(int32_t pid, struct hs_py_interp *ret, char *why, size_t whylen)
{
	struct hs_rt_mapping *maps = hs_xcalloc(MAX_CANDIDATES, sizeof(*maps));
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	size_t n = candidates(pid, maps, MAX_CANDIDATES);
	enum hs_py_found found = HS_PY_NOT_PYTHON;

	for (size_t i = 0; i < n; i++) {
		const struct hs_py_interp *layout;
		struct hs_py_interp in;
		struct syms s;
		uint64_t bias = 0;
		int major = 3, minor = -1;
		uint32_t hex;

		if (read_file_syms(pid, &maps[i], &s, &bias))
			continue;
		found = HS_PY_UNSUPPORTED;
		if (s.version && !mem.read(mem.ctx, s.version + bias, &hex, sizeof(hex)) && hex >> 24) {
			major = (int)(hex >> 24);
			minor = (int)(hex >> 16 & 0xff);
		} else if (!runtime_name(maps[i].path, &major, &minor) || minor < 0) {
			hs_rt_why(why, whylen, "python of unknown version in %s", maps[i].path);
			break;
		}
		layout = hs_py_layout(HS_PY_VERSION((unsigned)major, (unsigned)minor));
		if (!layout) {
			hs_rt_why(why, whylen, "python %d.%d is not supported", major, minor);
			break;
		}
		if (layout->info.off.runtime_interp_head == 0 && !s.runtime && s.interp_head) {
			s.runtime = s.interp_head; /* the list itself: its first word is the head */
		} else if (layout->info.off.runtime_interp_head == 0) {
			hs_rt_why(why, whylen, "python %d.%d: no interp_head in %s (its symbol table stripped)", major,
				  minor, maps[i].path);
			break;
		} else if (!s.runtime) {
			hs_rt_why(why, whylen, "python %d.%d: no _PyRuntime in %s", major, minor, maps[i].path);
			break;
		}
		if (!s.code_type) {
			hs_rt_why(why, whylen, "python %d.%d: no PyCode_Type in %s", major, minor, maps[i].path);
			break;
		}
		in = *layout;
		snprintf(in.path, sizeof(in.path), "%s", maps[i].path);
		in.info.runtime = s.runtime + bias;
		in.info.code_type = s.code_type + bias;
		in.str_type = s.str_type ? s.str_type + bias : 0;
		in.bytes_type = s.bytes_type ? s.bytes_type + bias : 0;
		if (in.version == HS_PY_VERSION(3, 13)) {
			uint8_t dbg[HS_PY_DEBUG_OFFSETS_SIZE];
			if (mem.read(mem.ctx, in.info.runtime, dbg, sizeof(dbg))) {
				hs_rt_why(why, whylen, "python 3.13: cannot read _Py_DebugOffsets");
				break;
			}
			if (hs_py_check_debug_offsets(dbg, &in, why, whylen) != HS_PY_SUPPORTED)
				break;
		}
		*ret = in;
		found = HS_PY_SUPPORTED;
		break;
	}
	free(maps);
	return found;
}
