/* perf_event records (linux/perf_event.h) as typed values: the sample parser for every
 * sample_type layout, and the side-band records (MMAP, MMAP2, COMM, FORK, EXIT, LOST,
 * LOST_SAMPLES) with their sample_id trailer. Shared by live recording and file readers.
 * Parsed values borrow pointers into the record's bytes, valid as long as those bytes are. */
#ifndef HS_PERF_EVENT_H
#define HS_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* What of an event's perf_event_attr decides how its records are laid out. */
struct hs_perf_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint64_t sample_regs_intr;
	bool sample_id_all;
	/* attr.build_id: the event asked for build-ids in its MMAP2 records. Only then does
	 * PERF_RECORD_MISC_MMAP_BUILD_ID say that one holds a build-id: the kernel sets that bit in
	 * the record it shares between events and does not clear it, so the MMAP2 records of
	 * events that did not ask for one carry it too, over a device and an inode. */
	bool build_id;
};

/* The sample_id trailer of non-sample records (and the same fields of a sample). Fields the
 * layout does not carry are left as UINT32_MAX / 0. */
struct hs_perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	bool has_time;
};

struct hs_perf_sample {
	struct hs_perf_sample_id sid;
	uint64_t ip;
	uint64_t addr;
	uint64_t period;
	const void *read; /* the read_format block, read_size bytes */
	size_t read_size;
	uint64_t nr_callchain;
	const uint64_t *callchain; /* may be unaligned in file data: read with memcpy */
	uint32_t raw_size;
	const void *raw;
	uint64_t nr_branches;
	uint64_t branch_sample_type; /* the layout's: PERF_SAMPLE_BRANCH_CALL_STACK for LBR stacks */
	uint64_t branch_hw_idx;
	const void *branches; /* nr_branches * { u64 from, to, flags } */
	uint64_t user_abi;    /* 0 = no user registers */
	uint64_t user_regs_mask; /* the layout's sample_regs_user: which registers user_regs holds */
	uint32_t nr_user_regs;
	const void *user_regs; /* nr_user_regs u64, in ascending bit order of the mask */
	uint64_t stack_size;
	const void *stack;
	uint64_t stack_dyn_size;
	/* Set by a live recording for a sample read where the kernel wrote it, NULL otherwise:
	 * called once the user stack is no longer needed (keep false: the rest of the sample is
	 * copied, and the fields point to the copy), or before something slow (keep true: the
	 * stack is copied too). Either way it clears itself. */
	void (*stack_done)(void *ctx, bool keep);
	void *stack_done_ctx;
	uint64_t weight;       /* PERF_SAMPLE_WEIGHT, or var1_dw of WEIGHT_STRUCT */
	uint16_t weight_var2, weight_var3;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_abi;
	uint32_t nr_intr_regs;
	const void *intr_regs;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const void *aux;
	uint16_t misc;
};

struct hs_perf_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint8_t build_id[20];
	uint8_t build_id_size; /* non-zero when the kernel sent a build-id instead of an inode
	                        * (the layout's build_id and the record's misc bit) */
	uint32_t prot, flags;  /* 0 for PERF_RECORD_MMAP, which does not carry them */
	const char *filename;  /* NUL-terminated inside the record */
	bool is_mmap2;
	bool data;             /* PERF_RECORD_MISC_MMAP_DATA: not executable */
};

struct hs_perf_comm {
	uint32_t pid, tid;
	const char *comm;
	bool exec;
};

struct hs_perf_task { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct hs_perf_lost {
	uint64_t id, lost;
};

/* hotstack's own record type, never in a file: the frames a runtime's reader read for the sample
 * that follows it in time on the same thread (a struct hs_rt_head and the runtime's frames,
 * src/runtime/rt-abi.h), put in the stream by a live recording; misc is the runtime's id. Its
 * payload starts with the time (u64), pid and tid (u32 each), which sid has (but not has_time:
 * that time may be a little after its sample's). */
#define HS_RECORD_RT_STACK 0x48530001u
/* hotstack's own record type, never in a file: records of process sid.pid (thread sid.tid) were
 * left out from sid.time on (a process that maps or renames more than a live recording follows),
 * so what it maps is read again from /proc before its next sample is used; pid UINT32_MAX: the
 * kernel lost side-band records, of any process. Its payload is the time (u64), pid and tid
 * (u32 each). */
#define HS_RECORD_RESYNC 0x48530002u

struct hs_perf_raw {
	const void *data;
	size_t size;
};

struct hs_perf_event {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	struct hs_perf_sample_id sid; /* for samples, the same as sample.sid */
	union {
		struct hs_perf_sample sample;
		struct hs_perf_mmap mmap;
		struct hs_perf_comm comm;
		struct hs_perf_task task;
		struct hs_perf_lost lost;
		struct hs_perf_raw raw; /* HS_RECORD_RT_STACK: the payload */
	};
};

/* Parses one record of hdr->size bytes at rec. Returns 0; -EBADMSG when a field runs past the
 * record or a size is inconsistent (err says which, at offset base + the field's offset);
 * -EOPNOTSUPP for sample_type bits this parser does not know. Record types it does not know are
 * returned with only type, misc (and sid when sample_id_all) set. */
int hs_perf_event_parse(const void *rec, size_t size, const struct hs_perf_layout *l, uint64_t base,
			struct hs_perf_event *ret, struct hs_error *err);

/* Size in bytes of the sample_id trailer this layout appends to non-sample records. */
size_t hs_perf_sample_id_size(const struct hs_perf_layout *l);
/* Position of the id (PERF_SAMPLE_IDENTIFIER) that tells which event a record belongs to,
 * for files with several events: the u64 index from the start of a sample, or from the end of
 * a non-sample record; -1 when the layout has no identifier. */
int hs_perf_id_pos_sample(const struct hs_perf_layout *l);
int hs_perf_id_pos_trailer(const struct hs_perf_layout *l);
/* Position of a sample's time, the same way (-1 when the layout has none): what a reader that
 * only orders samples needs of them. */
int hs_perf_time_pos_sample(const struct hs_perf_layout *l);

/* The x86-64 user registers hotstack samples (perf numbering, asm/perf_regs.h): AX BX CX DX SI
 * DI BP SP IP and R8-R15. */
#define HS_PERF_REGS_MASK (0x1ffULL | (0xffULL << 16))

/* Bits of sample_type this parser understands. */
#define HS_PERF_SAMPLE_KNOWN ((uint64_t)PERF_SAMPLE_MAX - 1)

#endif
