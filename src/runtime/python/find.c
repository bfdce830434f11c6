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
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/python/python.h"
#include "util/infile.h"
#include "util/util.h"

#define MAX_CANDIDATES 16
#define MAX_SYMBOLS 4000000 /* symbols looked at per table: a hostile count ends the search */

static int pid_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	if (!n)
		return 0;
	return process_vm_readv((pid_t)(intptr_t)ctx, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

struct hs_py_mem hs_py_mem_pid(int32_t pid)
{
	return (struct hs_py_mem){pid_read, (void *)(intptr_t)pid};
}

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

struct mapping {
	uint64_t start, off, ino;
	char path[256];
};

struct syms {
	uint64_t runtime, code_type, version, str_type, bytes_type;
};

static void set_why(char *why, size_t whylen, const char *fmt, ...) HS_PRINTF(3, 4);
static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* The file a mapping names, opened through the process's root (so that a container's files are
 * found) or else directly; the inode must be the mapping's. */
static int open_mapped(int32_t pid, const struct mapping *m)
{
	char buf[512];
	const char *paths[2] = {buf, m->path};
	struct stat st;

	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, m->path);
	for (int i = 0; i < 2; i++) {
		int fd = hs_infile_open(paths[i], 0, &st);
		if (fd < 0)
			continue;
		if (st.st_ino == m->ino)
			return fd;
		close(fd);
	}
	return -1;
}

/* The symbols of one table that we look for. */
static void scan_symbols(Elf *elf, Elf_Scn *scn, struct syms *s)
{
	struct {
		const char *name;
		uint64_t *val;
	} want[] = {
		{"_PyRuntime", &s->runtime},      {"PyCode_Type", &s->code_type},   {"Py_Version", &s->version},
		{"PyUnicode_Type", &s->str_type}, {"PyBytes_Type", &s->bytes_type},
	};
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SYMBOLS);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		if (!(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
			continue;
		for (size_t w = 0; w < HS_ARRAY_SIZE(want); w++)
			if (!*want[w].val && !strcmp(name, want[w].name))
				*want[w].val = sym.st_value;
	}
}

/* Reads the runtime's symbols of a mapped file and the load bias of the mapping: 0, or -1 when
 * the file cannot be read or defines neither _PyRuntime nor PyCode_Type. */
static int read_file_syms(int32_t pid, const struct mapping *m, struct syms *s, uint64_t *bias)
{
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t phnum;
	int fd, rc = -1;

	if ((fd = open_mapped(pid, m)) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	memset(s, 0, sizeof(*s));
	/* .dynsym first: every build exports the runtime; .symtab for one that does not */
	for (int pass = 0; pass < 2 && !s->runtime; pass++) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				scan_symbols(elf, scn, s);
		}
	}
	/* a CPython before 3.7 has no _PyRuntime, but is one: said to be unsupported */
	if ((!s->runtime && !s->code_type) || elf_getphdrnum(elf, &phnum))
		goto out;
	/* the file byte at offset m->off is at m->start; the load segment holding it says which
	 * address the file meant for that byte */
	for (size_t i = 0; i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		uint64_t pgoff;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		pgoff = ph.p_offset & ~(uint64_t)4095;
		if (m->off >= pgoff && m->off < ph.p_offset + ph.p_filesz) {
			*bias = m->start - m->off - (ph.p_vaddr - ph.p_offset);
			rc = 0;
			break;
		}
	}
	if (!rc && eh.e_type == ET_EXEC && *bias)
		rc = -1; /* a fixed-address executable mapped elsewhere is not what it says */
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

/* The distinct files of the process's maps worth looking into: those named like a runtime, then
 * the executable. Each with its first (lowest) mapping. */
static size_t candidates(int32_t pid, struct mapping *out, size_t max)
{
	char buf[600], exe[256] = "";
	size_t n = 0, nexe = SIZE_MAX;
	ssize_t len;
	FILE *f;

	snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
	if ((len = readlink(buf, exe, sizeof(exe) - 1)) > 0)
		exe[len] = 0;
	snprintf(buf, sizeof(buf), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(buf, "re")))
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		uint64_t start, end, off, ino;
		int pos = 0;
		char *path;
		size_t plen;
		bool seen = false;

		if (!strchr(buf, '\n')) {
			/* a name too long for buf: skip the rest of its line, not read it as a line */
			int ch;
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %" SCNu64 " %n", &start, &end, &off, &ino,
			   &pos) < 4 ||
		    !pos || !ino)
			continue;
		path = buf + pos;
		plen = strcspn(path, "\n");
		path[plen] = 0;
		/* a deleted file's symbols cannot be read back */
		if (path[0] != '/' || plen >= sizeof(out->path) || strstr(path, " (deleted)"))
			continue;
		for (size_t i = 0; i < n && !seen; i++)
			seen = !strcmp(out[i].path, path);
		if (seen)
			continue;
		if (hs_py_maybe_runtime(path) || (!strcmp(path, exe) && nexe == SIZE_MAX)) {
			if (n == max)
				break;
			out[n] = (struct mapping){start, off, ino, ""};
			memcpy(out[n].path, path, plen + 1);
			if (!strcmp(path, exe))
				nexe = n;
			n++;
		}
	}
	fclose(f);
	/* the executable last: a python3.X executable is both, and tried first anyway */
	if (nexe != SIZE_MAX && nexe + 1 < n && !hs_py_maybe_runtime(out[nexe].path)) {
		struct mapping e = out[nexe];
		memmove(out + nexe, out + nexe + 1, (n - nexe - 1) * sizeof(*out));
		out[n - 1] = e;
	}
	return n;
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
		set_why(why, whylen, "python 3.13: _PyRuntime does not start with 3.13's _Py_DebugOffsets");
		return HS_PY_UNSUPPORTED;
	}
	if (ft) {
		set_why(why, whylen, "python 3.13 free-threaded is not supported");
		return HS_PY_UNSUPPORTED;
	}
	if (ob_type != 8) {
		set_why(why, whylen, "python 3.13: _Py_DebugOffsets.pyobject.ob_type is %" PRIu64 ", expected 8",
			ob_type);
		return HS_PY_UNSUPPORTED;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(dbg_fields); i++) {
		uint16_t *ours = (uint16_t *)((char *)in + dbg_fields[i].field);
		uint64_t theirs;

		memcpy(&theirs, d + dbg_fields[i].at, 8);
		if (theirs != *ours) {
			set_why(why, whylen, "python 3.13: _Py_DebugOffsets.%s is %" PRIu64 ", expected %u",
				dbg_fields[i].name, theirs, *ours);
			return HS_PY_UNSUPPORTED;
		}
		*ours = (uint16_t)theirs;
	}
	return HS_PY_SUPPORTED;
}

enum hs_py_found hs_py_find(int32_t pid, struct hs_py_interp *ret, char *why, size_t whylen)
{
	struct mapping *maps = hs_xcalloc(MAX_CANDIDATES, sizeof(*maps));
	struct hs_py_mem mem = hs_py_mem_pid(pid);
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
			set_why(why, whylen, "python of unknown version in %s", maps[i].path);
			break;
		}
		layout = major == 3 ? hs_py_layout(HS_PY_VERSION(3, (unsigned)minor)) : NULL;
		if (!layout) {
			set_why(why, whylen, "python %d.%d is not supported", major, minor);
			break;
		}
		if (!s.runtime) {
			set_why(why, whylen, "python %d.%d: no _PyRuntime in %s", major, minor, maps[i].path);
			break;
		}
		if (!s.code_type) {
			set_why(why, whylen, "python %d.%d: no PyCode_Type in %s", major, minor, maps[i].path);
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
				set_why(why, whylen, "python 3.13: cannot read _Py_DebugOffsets");
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
