/* The frame-pointer step, for code without unwinding information (JIT code), each step checked:
 * the frame record on the thread's stack, and its return address after a call in the code. */
#include "unwind/unwinder-internal.h"

#include <gelf.h>
#include <sys/uio.h>

#include "model/dso-file.h"

/* Reads the n bytes of code before addr in map (of pid): anonymous (JIT) code from the
 * process's memory while it runs, file-backed code from the file. Never a file's pages through
 * the process: a fault on a FUSE file whose daemon does not answer would wait until SIGKILL. */
static bool read_code(struct hs_unwinder *u, int32_t pid, const struct hs_map *map, uint64_t addr, uint8_t *buf,
		      size_t n)
{
	struct hs_dso_elf e;
	const char *raw;
	size_t size = 0;
	uint64_t off;
	bool ok = false;

	if (addr - map->start < n)
		return false;
	if (map->dso->kind == HS_DSO_ANON) {
		struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)(addr - n), n};
		return u->opts.live && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
	}
	if (hs_dso_elf_open(map->dso, &e))
		return false;
	raw = elf_rawfile(e.elf, &size);
	off = map->pgoff + (addr - map->start) - n;
	if (raw && off <= size && size - off >= n) {
		memcpy(buf, raw + off, n);
		ok = true;
	}
	hs_dso_elf_close(&e);
	return ok;
}

/* Whether the n bytes at b end with a call: call rel32, or an indirect call (FF /2, through a
 * register or memory, with or without a REX prefix), or with jmp also an indirect jump (FF /4).
 * Read backwards, an instruction of every length that could end there is tried. */
static bool ends_with_call(const uint8_t *b, size_t n, bool jmp)
{
	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (size_t len = 2; len <= 8 && len <= n; len++) {
		const uint8_t *p = b + n - len;
		size_t k = (p[0] & 0xf0) == 0x40, need;
		uint8_t mod, op, rm;

		if (k + 2 > len || p[k] != 0xff)
			continue;
		mod = p[k + 1] >> 6;
		op = p[k + 1] >> 3 & 7;
		rm = p[k + 1] & 7;
		if (op != 2 && !(jmp && op == 4))
			continue;
		need = k + 2;
		if (mod != 3) {
			if (rm == 4) {
				if (k + 2 >= len)
					continue;
				need += 1 + (mod == 0 && (p[k + 2] & 7) == 5 ? 4 : 0); /* SIB, no base */
			} else if (mod == 0 && rm == 5) {
				need += 4; /* rip-relative */
			}
			need += mod == 1 ? 1 : mod == 2 ? 4 : 0;
		}
		if (need == len)
			return true;
	}
	return false;
}

enum ret_kind { RET_CALL = 1, RET_OTHER, RET_UNREADABLE };

#define RET_KINDS_MAX (1u << 16)

/* What precedes addr, a return address in map of pid: a call, something else, or unknown (the
 * code cannot be read: a process gone, JIT code of a recording read from a file). Cached: the
 * same return addresses come back sample after sample. */
static enum ret_kind ret_kind(struct hs_unwinder *u, int32_t pid, const struct hs_map *map, uint64_t addr)
{
	uint64_t key = hs_hash_combine(hs_hash_u64((uint32_t)pid), addr), v;
	uint8_t b[8];
	enum ret_kind k;

	if (key == UINT64_MAX)
		key--;
	if (hs_u64map_get(&u->ret_kinds, key, &v) && v >> 2 == addr)
		return (enum ret_kind)(v & 3);
	u->stats.code_reads++;
	if (!read_code(u, pid, map, addr, b, sizeof(b))) {
		u->stats.code_unreadable++;
		k = RET_UNREADABLE;
	} else {
		/* runtimes push return addresses by hand too: HotSpot's template interpreter pushes
		 * the return entry of an invoke bytecode, which follows the indirect jump that
		 * dispatches the bytecode before it, and jumps to the method */
		k = ends_with_call(b, sizeof(b), map->dso->kind == HS_DSO_ANON) ? RET_CALL : RET_OTHER;
	}
	if (u->ret_kinds.n >= RET_KINDS_MAX)
		hs_u64map_release(&u->ret_kinds);
	hs_u64map_put(&u->ret_kinds, key, addr << 2 | k);
	return k;
}

/* The frame-pointer step reads past this much of a frame for its own frame record. */
#define FP_SCAN_MAX 4096

/* The frame record (saved rbp, return address) of a frame that saved rbp without making it its
 * frame pointer, between the stack pointer and rbp: a word equal to rbp, the frame pointer of
 * a caller further up, followed by a return address into code after a call. HotSpot's compiled
 * Java methods without -XX:+PreserveFramePointer save rbp that way beside their return address
 * (leaving rbp to the interpreter frame that called them: a step through rbp skips them all, and
 * their callers show the JVM's generated entry code calling a method directly); so does any function
 * sampled between its "push %rbp" and its "mov %rsp, %rbp". Returns its address, or 0. */
static uint64_t own_record(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *stack, uint64_t rsp,
			   uint64_t rbp)
{
	uint64_t end = rbp - rsp > FP_SCAN_MAX ? rsp + FP_SCAN_MAX : rbp;

	for (uint64_t a = (rsp + 7) & ~7ULL; a + 8 < end; a += 8) {
		uint64_t w, ra;
		struct hs_map *m;

		if (!hs_unwind_load(stack, a, &w))
			break;
		if (w != rbp || !hs_unwind_load(stack, a + 8, &ra) || !ra)
			continue;
		m = hs_model_find_map(u->model, pid, ra - 1);
		if (m && ret_kind(u, pid, m, ra) != RET_OTHER)
			return a;
	}
	return 0;
}

/* The frame-pointer step: [rbp] holds the caller's rbp, [rbp+8] the return address. Code
 * without unwind information is walked that way (JIT code), so each step is checked: rbp must be
 * on the thread's stack, above the stack pointer, the frame pointer of this frame rather than a
 * caller's, and the return address code after a call. */
enum hs_stop hs_unwind_fp_step(struct hs_unwinder *u, int32_t pid, struct hs_regs *regs,
			       const struct hs_stack_copy *stack)
{
	uint64_t rbp = regs->r[HS_DWARF_RBP], rsp = regs->r[HS_DWARF_RSP], next_rbp, ra = 0, rec;
	struct hs_map *map;
	enum ret_kind k;

	if (!HAVE(*regs, HS_DWARF_RBP))
		return HS_STOP_NO_INFO;
	if (rbp == 0)
		return HS_STOP_END;
	if ((rbp & 7) || (HAVE(*regs, HS_DWARF_RSP) && rbp < rsp)) {
		u->stats.fp_outside_stack++;
		return HS_STOP_BAD_FP;
	}
	if (HAVE(*regs, HS_DWARF_RSP) && (rec = own_record(u, pid, stack, rsp, rbp))) {
		/* this frame's own record: its caller is there, and rbp is the caller's already (it
		 * may even lie past the copy) */
		hs_unwind_load(stack, rec + 8, &ra);
		next_rbp = rbp;
		rbp = rec;
		u->stats.fp_own_records++;
	} else if (!hs_unwind_load(stack, rbp, &next_rbp) || !hs_unwind_load(stack, rbp + 8, &ra)) {
		enum hs_stop stop = hs_unwind_beyond_copy(u, pid, stack, rbp + 8, HS_STOP_BAD_FP);
		if (stop == HS_STOP_BAD_FP)
			u->stats.fp_outside_stack++;
		return stop;
	} else if (ra) {
		map = hs_model_find_map(u->model, pid, ra - 1);
		if (!map) {
			u->stats.fp_not_code++;
			return HS_STOP_BAD_FP;
		}
		k = ret_kind(u, pid, map, ra);
		if (k == RET_OTHER) {
			u->stats.fp_not_after_call++;
			return HS_STOP_BAD_FP;
		}
	}
	regs->valid &= (1u << HS_DWARF_RBP) | (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
	regs->r[HS_DWARF_RSP] = rbp + 16;
	regs->r[HS_DWARF_RBP] = next_rbp;
	regs->r[HS_DWARF_RA] = ra;
	regs->valid |= (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
	return HS_STOP_COUNT;
}
