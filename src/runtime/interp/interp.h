/* The scripting runtimes read from outside as Python is (Ruby, PHP, Perl: docs/interpreters.md):
 * what each tells the common parts about itself (struct hs_ip_lang), and the names store they
 * share: each function a frame reader hands on is read once per process, as soon as its record
 * is drained (while the process surely lives and the function most likely does), and kept for
 * the profile builder, which names frames and merges them into native stacks
 * (profile/builder-interp.c). */
#ifndef HS_INTERP_H
#define HS_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/interp/ip-abi.h"
#include "runtime/proc.h"
#include "util/hashmap.h"

/* A function, read: what names its frames. */
struct hs_ip_code {
	char *name;         /* "Class#method", "Class::method", "Package::sub"; UTF-8 or bytes, NUL-ended */
	char *file;         /* its source file, or NULL */
	uint32_t firstline; /* its first line, or 0 */
	void *lines;        /* the language's, for its line(): freed with the code (NULL: none) */
	size_t lines_size;
};

/* What the interpreter's native frames are to the merge (runtime/python/merge.h's classes). */
enum hs_ip_native {
	HS_IP_NATIVE_OTHER = 0, /* kept */
	HS_IP_NATIVE_LOOP,      /* one run of the interpreter's loop: its frames go there */
	HS_IP_NATIVE_PLUMBING,  /* the interpreter's machinery between its frames: left out */
};

struct hs_ip_lang {
	unsigned id;      /* HS_RT_RUBY, ... */
	const char *tag;  /* "ruby": the marks of a stack read in part say "[ruby: truncated]" */
	const char *name; /* "Ruby" */
	/* What a native frame of function name (a symbol's, demangled) is to the merge. */
	enum hs_ip_native (*native_class)(const char *name);
	/* Whether a mapped file holds the interpreter: its functions without a symbol (static
	 * ones, where it is stripped) are its machinery. */
	bool (*maybe)(const char *path);
	/* What a native frame with no symbol in such a file (of build id build, lower-case hex,
	 * or NULL) is, by its address in the file's own addresses (NULL: always its machinery): a
	 * part of its loop that the compiler moved away from the rest (a .cold part) is its loop. */
	enum hs_ip_native (*unnamed_class)(const char *path, const char *build, uint64_t vaddr);
	/* Reads the function frame f of the process names (proc: the runtime's, as find made it;
	 * mem: its memory): 0 with *c made (hs_ip_code_release() frees it), or -1 when it cannot be
	 * read or is not the frame's any more (*c untouched). */
	int (*code_read)(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f,
			 struct hs_ip_code *c);
	/* The line of frame f in c, 0 when unknown (NULL: f->line, or c's first line when 0). */
	uint32_t (*line)(const struct hs_ip_code *c, const struct hs_ip_frame *f);
	size_t proc_size; /* bytes of the runtime's proc: the store keeps a copy per process */
	/* Frames are told apart by aux alone: fn, which the function is read from, may be one of
	 * its copies (a PHP closure's function is copied into each closure made). */
	bool by_aux;
};

/* The language of runtime id, or NULL when it is not one of these. */
const struct hs_ip_lang *hs_ip_lang(unsigned id);

void hs_ip_code_release(struct hs_ip_code *c);

/* The names store of a language (safe to use from two threads). */
struct hs_ip_names;
struct hs_ip_names *hs_ip_names_new(const struct hs_ip_lang *lang);
void hs_ip_names_free(struct hs_ip_names *n);
/* Process pid runs the language's runtime proc (copied), from now until forgotten. */
void hs_ip_names_add_proc(struct hs_ip_names *n, int32_t pid, const void *proc);
/* Reads the functions of a sample's innermost frames not read yet (a struct hs_ip_sample):
 * those come and go; a frame further out has run for longer, and is read when it is named. */
#define HS_IP_PREFETCH_DEPTH 4
void hs_ip_names_prefetch(struct hs_ip_names *n, const void *sample);
void hs_ip_names_forget(struct hs_ip_names *n, const struct hs_u64map *gone);
/* The function frame f of process pid names, read now if it was not before; NULL when it cannot
 * be. Valid until hs_ip_names_free(). */
const struct hs_ip_code *hs_ip_names_get(struct hs_ip_names *n, int32_t pid, const struct hs_ip_frame *f);
/* Whether process pid's frames are read. */
bool hs_ip_names_has(struct hs_ip_names *n, int32_t pid);

/* struct hs_runtime's record and store functions for language lang (a struct hs_ip_lang),
 * defined in its runtime.c; HS_RT_STORE_MEMBERS points to them. */
#define HS_IP_STORE_OPS(lang)                                                                                          \
	static size_t record_size(const void *rec, size_t size)                                                        \
	{                                                                                                              \
		return hs_rt_record_size(rec, size, offsetof(struct hs_ip_sample, frames), sizeof(struct hs_ip_frame), \
					 HS_IP_MAX_FRAMES);                                                            \
	}                                                                                                              \
	static void *names_new(void)                                                                                   \
	{                                                                                                              \
		return hs_ip_names_new(&(lang));                                                                       \
	}                                                                                                              \
	static void names_free(void *n)                                                                                \
	{                                                                                                              \
		hs_ip_names_free(n);                                                                                   \
	}                                                                                                              \
	static void names_add(void *n, int32_t pid, const void *proc)                                                  \
	{                                                                                                              \
		hs_ip_names_add_proc(n, pid, proc);                                                                    \
	}                                                                                                              \
	static void names_prefetch(void *n, const void *rec)                                                           \
	{                                                                                                              \
		hs_ip_names_prefetch(n, rec);                                                                          \
	}                                                                                                              \
	static void names_forget(void *n, const struct hs_u64map *gone)                                                \
	{                                                                                                              \
		hs_ip_names_forget(n, gone);                                                                           \
	}

#endif
