/* The runtimes read from outside (docs/runtimes.md): what each is to the rest of hotstack. A
 * runtime is found in a process by its mappings and memory, described to its frame reader (a BPF
 * program run at sample time, record/reader.c loads it) by a process-table value, and its
 * records named by a names store that the recording fills while the process lives and the
 * profile builder reads (profile/builder-runtime.c pairs each record with its sample; one file
 * there per runtime merges its frames into the native stack). One folder per runtime. */
#ifndef HS_RUNTIME_H
#define HS_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rt-abi.h"
#include "util/hashmap.h"

struct hs_ip_lang;

enum hs_rt_found {
	HS_RT_ABSENT = 0, /* not in the process (yet) */
	HS_RT_SUPPORTED,  /* found, and its frames can be read */
	HS_RT_UNSUPPORTED /* found, in a version or build the reader does not know: refused */
};

struct hs_runtime {
	unsigned id;          /* HS_RT_*: its reader's slot and its records' tag */
	const char *name;     /* "Python": its frames' name in messages */
	const char *versions; /* "3.6 to 3.13": what its frames are read for */
	const char *shows;    /* what its code shows as when they are not read */
	const char *fallback; /* what still names its code without the reader, for a person, or NULL */
	/* Whether a mapped file's name is one the runtime can be in: the cheap test before find. */
	bool (*maybe)(const char *path);
	/* How long a process that mapped such a file is looked at again while find says "cannot
	 * read" (the runtime is still being loaded and set up), in ms. */
	unsigned look_ms;
	/* Looks for the runtime in process pid: HS_RT_SUPPORTED with *proc made (proc_free() frees
	 * it); HS_RT_UNSUPPORTED with why, in one line ("python 3.14 is not supported"); why says
	 * "cannot read" when that may pass (the process is still starting). */
	enum hs_rt_found (*find)(int32_t pid, void **proc, char *why, size_t whylen);
	void (*proc_free)(void *proc);
	/* The reader's process-table value (proc_info_size bytes) for proc: 0, or -EINVAL when the
	 * reader cannot walk it. */
	size_t proc_info_size;
	int (*proc_info)(const void *proc, void *info);
	/* The reader's BPF object (an ELF file's bytes). */
	const void *(*bpf_object)(size_t *size);
	/* A record the reader wrote, of size bytes: its length with the head and its nframes frames,
	 * or 0 when size is short of that. */
	size_t (*record_size)(const void *rec, size_t size);
	/* The names store (safe to use from two threads). */
	void *(*names_new)(void);
	void (*names_free)(void *names);
	void (*names_add)(void *names, int32_t pid, const void *proc); /* from now on */
	/* A record just drained: what of it must be read while its process surely lives. */
	void (*names_prefetch)(void *names, const void *rec);
	/* Forgets the processes in gone (pid -> anything). */
	void (*names_forget)(void *names, const struct hs_u64map *gone);
	/* A scripting runtime read as Python is (runtime/interp/interp.h): its language, else NULL. */
	const struct hs_ip_lang *ip;
};

/* The length of a record of size bytes whose head (struct hs_rt_head first) is head bytes and
 * whose frames are frame bytes each, at most max: the head and its nframes frames, or 0 when
 * size is short of that or nframes over max. For the runtimes' record_size. */
size_t hs_rt_record_size(const void *rec, size_t size, size_t head, size_t frame, unsigned max);

/* The functions of a runtime's file that struct hs_runtime points to for its names store,
 * defined over its own: PREFIX_names_new, _names_free, _names_add_proc, _names_prefetch and
 * _names_forget (which take its own types), and record_size over its record's type SAMPLE,
 * whose frames are of type FRAME, at most MAX. */
#define HS_RT_STORE_OPS(prefix, sample, frame, max)                                                \
	static size_t record_size(const void *rec, size_t size)                                    \
	{                                                                                          \
		return hs_rt_record_size(rec, size, offsetof(sample, frames), sizeof(frame), max); \
	}                                                                                          \
	static void *names_new(void)                                                               \
	{                                                                                          \
		return prefix##_names_new();                                                       \
	}                                                                                          \
	static void names_free(void *n)                                                            \
	{                                                                                          \
		prefix##_names_free(n);                                                            \
	}                                                                                          \
	static void names_add(void *n, int32_t pid, const void *proc)                              \
	{                                                                                          \
		prefix##_names_add_proc(n, pid, proc);                                             \
	}                                                                                          \
	static void names_prefetch(void *n, const void *rec)                                       \
	{                                                                                          \
		prefix##_names_prefetch(n, rec);                                                   \
	}                                                                                          \
	static void names_forget(void *n, const struct hs_u64map *gone)                            \
	{                                                                                          \
		prefix##_names_forget(n, gone);                                                    \
	}

/* struct hs_runtime's members that point to them */
#define HS_RT_STORE_MEMBERS                                                                                   \
	.record_size = record_size, .names_new = names_new, .names_free = names_free, .names_add = names_add, \
	.names_prefetch = names_prefetch, .names_forget = names_forget

/* The runtime with id, or NULL. */
const struct hs_runtime *hs_runtime(unsigned id);

#define HS_RT_BIT(id) (1u << (id))
#define HS_RT_ALL                                                                                           \
	(HS_RT_BIT(HS_RT_PYTHON) | HS_RT_BIT(HS_RT_HOTSPOT) | HS_RT_BIT(HS_RT_V8) | HS_RT_BIT(HS_RT_RUBY) | \
	 HS_RT_BIT(HS_RT_PHP) | HS_RT_BIT(HS_RT_PERL))

/* The names stores of the runtimes a recording reads (those of mask), shared by the recording,
 * which fills them, and the builder, which names from them. */
struct hs_rt_names {
	void *store[HS_RT_SLOTS]; /* by id; NULL: that runtime's frames are not read */
};
struct hs_rt_names *hs_rt_names_new(unsigned mask);
void hs_rt_names_free(struct hs_rt_names *n);
/* The runtimes whose frames n's recording reads (HS_RT_BIT of each id); 0 for n NULL. */
unsigned hs_rt_names_mask(const struct hs_rt_names *n);
void hs_rt_names_forget(struct hs_rt_names *n, const struct hs_u64map *gone);

#endif
