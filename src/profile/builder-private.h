/* Between the files of the profile builder: builder.c, builder-chains.c, builder-runtime.c,
 * builder-python.c and the others.
 * Not for use outside src/profile/. */
#ifndef HS_BUILDER_PRIVATE_H
#define HS_BUILDER_PRIVATE_H

#include "profile/builder.h"

#define KERNEL_START 0xffff800000000000ULL /* x86_64's kernel half */

/* builder-runtime.c */
void hs_builder_rt_release(struct hs_builder *b);
/* Forgets the threads' runtime stacks whose samples never came, and the threads left with none
 * (hs_builder_rebase()): many short-lived processes leave many threads. */
void hs_builder_rt_forget_threads(struct hs_builder *b);
/* An HS_RECORD_RT_STACK record: kept as one of its thread's latest runtime stacks. */
void hs_builder_rt_stack(struct hs_builder *b, const struct hs_perf_event *ev);
/* The sample's native stack in b->locs gets the runtime stack read with it merged in: true when
 * it had one. */
bool hs_builder_rt_merge(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid);

/* The thread's runtime stack that will go with the sample at time, left where it is (NULL when
 * none), and its runtime's id in *id. */
const struct hs_rt_head *hs_builder_rt_peek(struct hs_builder *b, uint32_t tid, uint64_t time, unsigned *id);

/* builder-locations.c: the location of a frame of a chain (*stable_ret set false when it may
 * name that frame otherwise later: it is not to be remembered), of a pseudo-frame, and the
 * function of a symbol (demangled for display). */
uint32_t hs_builder_frame_location(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *f, bool *stable_ret);
uint32_t hs_builder_named_location(struct hs_builder *b, uint32_t mapping, uint64_t addr, uint8_t kind,
				   const char *name);
uint32_t hs_builder_symbol_function(struct hs_builder *b, const char *sym, const char *file);

/* builder-interp.c: the scripting runtimes read as Python is (Ruby, PHP, Perl): the stack rec
 * of runtime id merged into the sample's native stack in b->locs (true when it was). */
bool hs_builder_ip_merge(struct hs_builder *b, unsigned id, int32_t pid, const void *rec);
void hs_builder_ip_forget_locations(struct hs_builder *b);

/* builder-segments.c: the runtimes whose readers walk runs of their own frames between native
 * ones, each record frame three words with its kind in the top byte of the last. */
struct hs_seg_ops {
	unsigned id;
	const char *tag;     /* "java": its marks are "[java: truncated]" */
	unsigned native_kind; /* the kind of a frame that gives native code's registers */
	unsigned frame_words; /* words of a record's frame: pc, a, b (kind in its top byte), more */
	/* the runtime's frames keep frame pointers, so the sample's own unwinding goes through them
	 * rightly: the native frames below a run of them are taken from it where it has the return
	 * address the reader gave (else unwound from the reader's registers) */
	bool own_chain;
	uint16_t truncated_flag;
	/* Whether the sample's native frames above the runtime's innermost frame are its own (the
	 * thread was outside the runtime's code). */
	bool (*top_native)(const struct hs_rt_head *h);
	/* Whether a frame of kind is named alike wherever its pc (a frame's location is kept by
	 * its words, and its pc unless this says so). */
	bool (*same_anywhere)(unsigned kind);
	/* The location of a frame (not a native one; frame_words words) of process pid, or
	 * UINT32_MAX for none. */
	uint32_t (*location)(struct hs_builder *b, int32_t pid, const uint64_t *frame);
	/* Whether process pid's frames are read (its store). */
	bool (*reads)(void *store, int32_t pid);
	/* Whether location loc of a merged stack is the runtime's machinery, left out unless its
	 * internals are kept (NULL: none is). */
	bool (*internal)(struct hs_builder *b, uint32_t loc);
};
const struct hs_seg_ops *hs_builder_seg_ops(unsigned id);
extern const struct hs_seg_ops hs_builder_jvm_ops, hs_builder_v8_ops;

void hs_builder_seg_release(struct hs_builder *b);
void hs_builder_seg_forget_locations(struct hs_builder *b);
/* While the sample's stack copy is at hand: the native frames below each run of the runtime's
 * frames of rec (the runtime stack that goes with the sample, of runtime id), unwound from
 * where the reader left them. True when hs_builder_seg_merge() will make the sample's
 * locations from them and rec: the caller need not name the frames of its own chain. */
bool hs_builder_seg_unwind(struct hs_builder *b, int32_t pid, const struct hs_rt_head *rec, unsigned id,
			   const struct hs_stack_copy *copy);
/* The sample's native stack (b->cc) and the stack rec of runtime id of process pid, merged into
 * b->locs: true when it was. */
bool hs_builder_seg_merge(struct hs_builder *b, unsigned id, int32_t pid, const void *rec);
/* A sample of process pid that came without a stack of runtime id: when pid's frames are read by
 * its reader (which found no frame to start from: a leaf call into the runtime without a frame
 * anchor, a sample before the reader was loaded, or its stack lost), its native stack (b->locs)
 * is cut at the first frame in JIT code, which the native unwinding cannot walk without the
 * reader, and marked. True when it was. */
bool hs_builder_seg_unread(struct hs_builder *b, unsigned id, int32_t pid);

/* builder-chains.c: a sample's call chain (unwound, or the kernel's, or its LBR records) as
 * locations in b->locs, leaf first, with its stop reason: false when no frame is left to show.
 * A chain seen before is taken from the chain memo, which b->chain then names (b->chain_leaf
 * its leaf's location) when the profile's stack may be remembered in it. */
bool hs_builder_sample_locs(struct hs_builder *b, const struct hs_perf_sample *s, int32_t pid, bool strip);
void hs_builder_chain_memo_free(struct hs_builder *b);

/* A call chain seen before gives the locations it gave then, and the profile's stack: a busy
 * program's samples mostly repeat a few thousand chains, and a chain of 60 frames is 60 frame
 * lookups and a stack search that one comparison saves. The leaf is looked up on its own (its
 * address varies the most) and the rest of the chain, its callers, is the key, with the
 * stacks of the last leaves seen below them. Good while the model's mappings stay as they were
 * (model.gen) and every location was stable. */
#define CHAIN_STACKS 8

struct hs_chain_memo {
	uint64_t hash;
	uint64_t gen;       /* the model's, when made */
	int32_t pid;
	uint32_t nframes;   /* the frames of the key */
	uint32_t nlocs;
	uint32_t cap;       /* of buf, in bytes */
	uint32_t stripped;  /* tracing frames left out */
	uint8_t stop;
	bool used;
	bool strip;
	bool whole;         /* the key is the whole chain, leaf included (its kernel frames may be
	                     * left out) */
	uint8_t next;       /* the slot of stacks[] to take next */
	/* one block: the key's frames' addresses (nframes), the locations of the key's frames and
	 * then the stop's (nlocs), the frames' flags (nframes) */
	void *buf;
	struct hs_chain_stack {
		uint32_t leaf;   /* its location (0 when whole) */
		uint32_t stack;  /* the profile's stack (UINT32_MAX: none) */
		uint32_t sample; /* the profile's sample of it in thread tid, named comm
		                  * (UINT32_MAX: none) */
		uint32_t comm;
		int32_t tid;
	} stacks[CHAIN_STACKS];
};

/* The profile's stack of the memo's chain below leaf, NULL when not known. */
static inline struct hs_chain_stack *hs_builder_chain_stack(struct hs_chain_memo *m, uint32_t leaf)
{
	for (size_t i = 0; i < CHAIN_STACKS; i++)
		if (m->stacks[i].stack != UINT32_MAX && m->stacks[i].leaf == leaf)
			return &m->stacks[i];
	return NULL;
}

static inline struct hs_chain_stack *hs_builder_chain_stack_put(struct hs_chain_memo *m, uint32_t leaf, uint32_t stack)
{
	struct hs_chain_stack *cs = &m->stacks[m->next];

	*cs = (struct hs_chain_stack){leaf, stack, UINT32_MAX, 0, 0};
	m->next = (uint8_t)((m->next + 1) % CHAIN_STACKS);
	return cs;
}

/* builder-python.c */
void hs_builder_py_release(struct hs_builder *b);
/* Forgets the profile's locations of Python frames (hs_builder_rebase()). */
void hs_builder_py_forget_locations(struct hs_builder *b);
/* A location the unwinder found to be a trampoline of the interpreter's (-X perf). */
void hs_builder_py_tramp(struct hs_builder *b, uint32_t loc);
/* The sample's native stack in b->locs gets rec, a Python stack of process pid (a struct
 * hs_py_sample, whole, with frames), merged in: true when it was. */
bool hs_builder_py_merge(struct hs_builder *b, int32_t pid, const void *rec);

#endif
