/* Finding a process's CRuby: the mapped ELF that exports ruby_version, its version (3.1 only),
 * the form of its thread-local ruby_current_ec (the dynamic TLS model, from its relocations),
 * the layout the reader assumes checked against the library's own code (exact instruction
 * bytes of exported functions that use it), the global symbol table found in rb_id2str's code,
 * and the running interpreter checked in its memory before its frames are read. */
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

#include "runtime/ruby/ruby.h"
#include "util/util.h"

#define MAX_CANDIDATES 16
#define MAX_SYMBOLS 4000000
#define MAX_RELOCS 4000000
#define CODE_MAX 4096 /* bytes of a function's code looked at */

enum { S_VERSION, S_EC, S_VM_PTR, S_MAIN_RACTOR, S_VM_EXEC, S_ID2STR, S_PROFILE_FRAMES, S_THREAD_CURRENT, S_COUNT };
static const char *const sym_names[S_COUNT] = {
	"ruby_version", "ruby_current_ec", "ruby_current_vm_ptr", "ruby_single_main_ractor",
	"rb_vm_exec",   "rb_id2str",       "rb_profile_frames",   "rb_thread_current",
};

/* What the file says. */
struct file {
	uint64_t val[S_COUNT], size[S_COUNT];
	bool found[S_COUNT];
	size_t ec_index;    /* ruby_current_ec's index in .dynsym (0: none) */
	uint64_t got_modid; /* the GOT slot its module id is written to (R_X86_64_DTPMOD64) */
	uint64_t dtpoff;    /* its offset in the module's block (R_X86_64_DTPOFF64) */
	bool other_tls;     /* it is reached another way too (initial-exec, TLS descriptors) */
	bool has_tls;       /* a PT_TLS segment */
};

static void scan_symbols(Elf *elf, Elf_Scn *scn, bool dyn, struct file *f)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SYMBOLS);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		/* (a thread-local variable's value is its offset in the module's block: 0 is one) */
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    (!sym.st_value && GELF_ST_TYPE(sym.st_info) != STT_TLS) ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
			continue;
		for (size_t w = 0; w < S_COUNT; w++)
			if (!f->found[w] && !strcmp(name, sym_names[w])) {
				f->found[w] = true;
				f->val[w] = sym.st_value;
				f->size[w] = sym.st_size;
				if (w == S_EC && dyn)
					f->ec_index = i;
			}
	}
}

/* The relocations against ruby_current_ec: how the library reaches it. */
static void scan_relocs(Elf *elf, Elf_Scn *scn, size_t dynsym, struct file *f)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_link != dynsym || !sh.sh_entsize ||
	    !(d = elf_getdata(scn, NULL)))
		return;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_RELOCS);
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;

		if (!gelf_getrela(d, (int)i, &r) || GELF_R_SYM(r.r_info) != f->ec_index)
			continue;
		switch (GELF_R_TYPE(r.r_info)) {
		case R_X86_64_DTPMOD64:
			f->got_modid = r.r_offset;
			break;
		case R_X86_64_DTPOFF64:
			f->dtpoff = f->val[S_EC] + (uint64_t)r.r_addend;
			break;
		default:
			f->other_tls = true;
		}
	}
}

/* Reads the file's symbols and TLS relocations, and the load bias of mapping m: 0, or -1 when
 * it cannot be read or does not export ruby_version. */
static int read_file(int32_t pid, const struct hs_rt_mapping *m, struct file *f, uint64_t *bias)
{
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t dynsym = 0, phnum;
	int fd, rc = -1;

	memset(f, 0, sizeof(*f));
	if ((fd = hs_rt_open_mapped(pid, m)) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
			scan_symbols(elf, scn, true, f);
			dynsym = elf_ndxscn(scn);
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			scan_symbols(elf, scn, false, f);
	}
	if (!f->val[S_VERSION] || hs_rt_load_bias(elf, m, bias))
		goto out;
	if (f->ec_index)
		while ((scn = elf_nextscn(elf, scn)))
			scan_relocs(elf, scn, dynsym, f);
	if (!elf_getphdrnum(elf, &phnum))
		for (size_t i = 0; i < phnum && i < 65536; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS)
				f->has_tls = true;
		}
	rc = 0;
	if (eh.e_type == ET_EXEC && *bias)
		rc = -1; /* a fixed-address executable mapped elsewhere is not what it says */
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

static bool contains(const uint8_t *code, size_t n, const uint8_t *pat, size_t plen)
{
	for (size_t i = 0; i + plen <= n; i++)
		if (!memcmp(code + i, pat, plen))
			return true;
	return false;
}

static int32_t rel32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The code of function w, read from the process: its length, or 0. */
static size_t read_code(const struct hs_rt_mem *mem, const struct file *f, uint64_t bias, int w, uint8_t *buf)
{
	size_t n = (size_t)HS_MIN(f->size[w], (uint64_t)CODE_MAX);

	if (!f->val[w] || !n || mem->read(mem->ctx, bias + f->val[w], buf, n))
		return 0;
	return n;
}

/* The library's own code, checked for what the reader assumes of its layout (exact bytes of
 * gcc's code for Debian's 3.1.2: another compiler's is refused, never guessed at), and the
 * address of the global symbol table: 0, or -1 with why. */
static int check_code(const struct hs_rt_mem *mem, const struct file *f, uint64_t bias, uint64_t *symbols, char *why,
		      size_t whylen)
{
	/* rb_profile_frames: the stack's end from vm_stack (+0) and vm_stack_size (+8), the frame
	 * at cfp (+16); ep at +32 with CFRAME tested in ep[0]; frames 64 bytes apart; iseq (+16),
	 * its body (+16), the body's iseq_encoded (+8) and first_lineno (+88) */
	static const uint8_t pf_stack[] = {0x48, 0x8b, 0x50, 0x08, 0x48, 0x8b, 0x58, 0x10,
					   0x48, 0x8b, 0x00, 0x4c, 0x8d, 0x2c, 0xd0};
	static const uint8_t pf_ep[] = {0x48, 0x8b, 0x43, 0x20, 0xf6, 0x00, 0x80};
	static const uint8_t pf_next[] = {0x48, 0x83, 0xc3, 0x40};
	static const uint8_t pf_iseq[] = {0x48, 0x8b, 0x7b, 0x10};
	static const uint8_t pf_body[] = {0x4c, 0x8b, 0x47, 0x10};
	static const uint8_t pf_encoded[] = {0x49, 0x2b, 0x70, 0x08};
	static const uint8_t pf_lineno[] = {0x49, 0x8b, 0x78, 0x58};
	/* rb_thread_current: ec->thread_ptr (+48), then its self */
	static const uint8_t tc_thread[] = {0x48, 0x8b, 0x00, 0x48, 0x8b, 0x40, 0x30, 0x48, 0x8b, 0x40, 0x10};
	/* rb_id2str: serial = id > tLAST_OP_ID ? id >> ID_SCOPE_SHIFT : id */
	static const uint8_t id_shift[] = {0x48, 0xc1, 0xe8, 0x04};
	static const uint8_t id_last_op[] = {0x48, 0x81, 0xff, 0xa9, 0x00, 0x00, 0x00};
	static const uint8_t tls_lea[] = {0x66, 0x48, 0x8d, 0x3d};
	uint8_t *code = hs_xmalloc(CODE_MAX);
	size_t n;
	uint64_t target, last_id = 0, ids = 0;
	const char *bad = NULL;

	n = read_code(mem, f, bias, S_PROFILE_FRAMES, code);
	if (!n || !contains(code, n, pf_stack, sizeof(pf_stack)) || !contains(code, n, pf_ep, sizeof(pf_ep)) ||
	    !contains(code, n, pf_next, sizeof(pf_next)) || !contains(code, n, pf_iseq, sizeof(pf_iseq)) ||
	    !contains(code, n, pf_body, sizeof(pf_body)) || !contains(code, n, pf_encoded, sizeof(pf_encoded)) ||
	    !contains(code, n, pf_lineno, sizeof(pf_lineno)))
		bad = "rb_profile_frames";
	n = bad ? 0 : read_code(mem, f, bias, S_THREAD_CURRENT, code);
	if (!bad) {
		/* its TLS access is through ruby_current_ec's module-id slot: lea slot(%rip),%rdi */
		size_t i = 0;
		while (i + 8 <= n && memcmp(code + i, tls_lea, sizeof(tls_lea)))
			i++;
		if (i + 8 > n ||
		    f->val[S_THREAD_CURRENT] + i + 8 + (uint64_t)(int64_t)rel32(code + i + 4) != f->got_modid ||
		    !contains(code, n, tc_thread, sizeof(tc_thread)))
			bad = "rb_thread_current";
	}
	n = bad ? 0 : read_code(mem, f, bias, S_ID2STR, code);
	if (!bad && (n < 5 || code[n - 5] != 0xe9 || !contains(code, n, id_shift, sizeof(id_shift)) ||
		     !contains(code, n, id_last_op, sizeof(id_last_op))))
		bad = "rb_id2str";
	if (!bad) {
		/* it ends in a jump to the lookup, which compares the serial with the table's
		 * last_id (cmp %edi,X(%rip)) and loads its ids (mov X+16(%rip),%rdi) */
		target = bias + f->val[S_ID2STR] + n + (uint64_t)(int64_t)rel32(code + n - 4);
		if (mem->read(mem->ctx, target, code, 128)) {
			bad = "rb_id2str";
		} else {
			for (size_t i = 0; i + 10 <= 128; i++) {
				if (!last_id && code[i] == 0x39 && code[i + 1] == 0x3d)
					last_id = target + i + 6 + (uint64_t)(int64_t)rel32(code + i + 2);
				else if (last_id && !ids && code[i] == 0x48 && code[i + 1] == 0x8b &&
					 code[i + 2] == 0x3d)
					ids = target + i + 7 + (uint64_t)(int64_t)rel32(code + i + 3);
			}
			if (!last_id || ids != last_id + 16)
				bad = "rb_id2str";
		}
	}
	free(code);
	if (bad) {
		hs_rt_why(why, whylen, "%s is not the code this reader knows", bad);
		return -1;
	}
	*symbols = last_id;
	return 0;
}

static uint64_t rd64(const struct hs_rt_mem *mem, uint64_t addr)
{
	uint64_t v = 0;

	if (!addr || mem->read(mem->ctx, addr, &v, sizeof(v)))
		return 0;
	return v;
}

/* The IDs of static symbols named so, looked for in the global symbol table (each left 0 when
 * none is). */
struct wanted {
	const char *name;
	uint64_t *id;
};

#define MAX_SERIALS 200000

static void find_ids(const struct hs_rb_proc *p, int32_t pid, struct wanted *w, size_t nw)
{
	struct hs_rt_pages *pages = hs_xcalloc(1, sizeof(*pages));
	struct hs_rt_mem mem = hs_rt_mem_pages(pages, pid);
	uint32_t last = 0;
	size_t left = nw;
	char name[32];

	if (mem.read(mem.ctx, p->symbols, &last, sizeof(last)))
		last = 0;
	for (uint64_t serial = 1; serial <= last && serial < MAX_SERIALS && left; serial++) {
		uint64_t sym = 0;
		if (hs_rb_serial_name(p, &mem, serial, name, sizeof(name), &sym) < 0)
			continue;
		for (size_t i = 0; i < nw; i++)
			/* a static symbol is its ID << 8 | 0x0c, and the ID its serial << 4 | scope */
			if (!*w[i].id && !strcmp(name, w[i].name) && (sym & 0xff) == 0x0c && sym >> 12 == serial) {
				*w[i].id = sym >> 8;
				left--;
			}
	}
	free(pages);
}

/* The interpreter in the process, checked before its frames are read: its VM, main ractor and
 * main thread point to each other, the main thread's stack ends in the <main> frame Init_VM
 * makes, and the symbol table names a static ID as id.h does. 0, or -1 with why (saying
 * "cannot read" while the interpreter is not set up yet). */
static int check_process(int32_t pid, const struct hs_rt_mem *mem, const struct file *f, uint64_t bias,
			 struct hs_rb_proc *p, char *why, size_t whylen)
{
	uint64_t vm, ractor, th, ec, stack, size, cfp, end, iseq, ep, body, smr;
	uint64_t id_each = 3009; /* idEach, a static ID of id.def */
	char s[32];
	struct wanted w[] = {
		{"__classpath__", &p->id_classpath},
		{"__tmp_classpath__", &p->id_tmp_classpath},
		{"__attached__", &p->id_attached},
	};

	p->info.tls_modid = rd64(mem, bias + f->got_modid);
	vm = rd64(mem, bias + f->val[S_VM_PTR]);
	ractor = vm ? rd64(mem, vm + 32) : 0;
	th = vm ? rd64(mem, vm + 40) : 0;
	ec = th ? rd64(mem, th + 40) : 0;
	if (!p->info.tls_modid || !ractor || !th || !ec) {
		hs_rt_why(why, whylen, "cannot read its VM yet");
		return -1;
	}
	smr = rd64(mem, bias + f->val[S_MAIN_RACTOR]);
	stack = rd64(mem, ec);
	size = rd64(mem, ec + 8);
	cfp = rd64(mem, ec + 16);
	end = stack + size * 8;
	if ((smr && smr != ractor) || rd64(mem, th + 24) != ractor || rd64(mem, th + 32) != vm ||
	    rd64(mem, ec + 48) != th || !stack || !size || size > (1 << 24) || cfp < stack || cfp >= end ||
	    (end - cfp) % HS_RB_CFP_SIZE) {
		hs_rt_why(why, whylen, "cannot read: its main thread is not laid out as 3.1's");
		return -1;
	}
	iseq = rd64(mem, end - HS_RB_CFP_SIZE + HS_RB_CFP_ISEQ);
	ep = rd64(mem, end - HS_RB_CFP_SIZE + HS_RB_CFP_EP);
	body = iseq ? rd64(mem, iseq + HS_RB_ISEQ_BODY) : 0;
	if (!body || (rd64(mem, ep) & HS_RB_ENV_MAGIC_MASK) != HS_RB_MAGIC_DUMMY ||
	    (rd64(mem, iseq) & HS_RB_T_MASK) != HS_RB_T_IMEMO ||
	    HS_RB_IMEMO_KIND(rd64(mem, iseq)) != HS_RB_IMEMO_ISEQ) {
		hs_rt_why(why, whylen, "cannot read: its main thread has no <main> frame yet");
		return -1;
	}
	if (hs_rb_id_name(p, mem, id_each, s, sizeof(s)) < 0 || strcmp(s, "each")) {
		hs_rt_why(why, whylen, "cannot read: its symbol table does not name idEach");
		return -1;
	}
	find_ids(p, pid, w, HS_ARRAY_SIZE(w));
	if (!p->id_classpath || !p->id_attached) {
		hs_rt_why(why, whylen, "cannot read: no __classpath__ in its symbol table");
		return -1;
	}
	return 0;
}

enum hs_rb_found hs_rb_find(int32_t pid, struct hs_rb_proc *ret, char *why, size_t whylen)
{
	struct hs_rt_mapping *maps = hs_xcalloc(MAX_CANDIDATES, sizeof(*maps));
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	enum hs_rb_found found = HS_RB_NOT_RUBY;
	int n = hs_rt_candidates(pid, hs_rb_maybe, maps, MAX_CANDIDATES);

	for (size_t i = 0; i < (size_t)HS_MAX(n, 0); i++) {
		struct hs_rb_proc p = {0};
		struct file f;
		uint64_t bias = 0;
		char check[160];

		if (read_file(pid, &maps[i], &f, &bias))
			continue;
		found = HS_RB_UNSUPPORTED;
		if (mem.read(mem.ctx, bias + f.val[S_VERSION], p.version, sizeof(p.version) - 1)) {
			hs_rt_why(why, whylen, "ruby in %s: cannot read its version", maps[i].path);
			break;
		}
		for (size_t k = 0; k < sizeof(p.version); k++)
			if (!isprint((unsigned char)p.version[k]))
				p.version[k] = 0;
		if (strncmp(p.version, "3.1.", 4)) {
			hs_rt_why(why, whylen, "ruby %s is not supported",
				  p.version[0] ? p.version : "of unknown version");
			break;
		}
		if (!f.found[S_EC] || !f.got_modid || f.dtpoff != f.val[S_EC] || f.other_tls || !f.has_tls) {
			hs_rt_why(why, whylen,
				  "ruby %s in %s: ruby_current_ec is not thread-local as a shared "
				  "libruby's is",
				  p.version, maps[i].path);
			break;
		}
		if (!f.val[S_VM_PTR] || !f.val[S_MAIN_RACTOR] || !f.val[S_VM_EXEC]) {
			hs_rt_why(why, whylen,
				  "ruby %s in %s: it does not export ruby_current_vm_ptr, "
				  "ruby_single_main_ractor and rb_vm_exec",
				  p.version, maps[i].path);
			break;
		}
		if (check_code(&mem, &f, bias, &p.symbols, check, sizeof(check))) {
			hs_rt_why(why, whylen, "ruby %s in %s: %s", p.version, maps[i].path, check);
			break;
		}
		p.info.tls_off = f.dtpoff;
		p.vm_ptr = bias + f.val[S_VM_PTR];
		snprintf(p.path, sizeof(p.path), "%s", maps[i].path);
		if (check_process(pid, &mem, &f, bias, &p, check, sizeof(check))) {
			hs_rt_why(why, whylen, "ruby %s: %s", p.version, check);
			break;
		}
		*ret = p;
		found = HS_RB_SUPPORTED;
		break;
	}
	free(maps);
	return found;
}
