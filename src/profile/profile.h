/* The profile IR: the shape of pprof's profile.proto (strings, mappings, functions, locations
 * with inline lines, samples with values and labels), with stacks interned so that writers
 * that merge stacks (folded, flame graphs) see each distinct stack once.
 *
 * Every table uses its array index as the id, and index 0 is a reserved "none" entry (except
 * samples, which nothing refers to), so `p->locations.v[id]` is valid for every id handed out. A profile owns all its memory; pointers
 * into its tables are invalidated by the next call that adds to the same table. Not thread-safe. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/hashmap.h"
#include "util/util.h"

/* What kind of code a frame is; writers use it for colours and folded annotations. */
enum hs_kind {
	HS_KIND_USER = 0,
	HS_KIND_KERNEL,
	HS_KIND_JIT,
	HS_KIND_PSEUDO, /* [unknown], [module] without symbol, stop reasons */
	HS_KIND_PYTHON, /* a Python function, read from the interpreter at sample time */
	/* a Java method, read from the JVM at sample time: interpreted, compiled by C1, by C2 (its
	 * inlined methods are the location's other lines) */
	HS_KIND_JAVA_INTERP,
	HS_KIND_JAVA_C1,
	HS_KIND_JAVA_C2,
	/* a JavaScript function, read from V8 at sample time: interpreted, baseline (Sparkplug),
	 * optimised (Maglev, TurboFan; its inlined functions are the location's other lines); and
	 * V8's builtins */
	HS_KIND_JS_INTERP,
	HS_KIND_JS_BASELINE,
	HS_KIND_JS_OPT,
	HS_KIND_JS_BUILTIN,
	/* a Ruby method, a PHP function, a Perl subroutine: read from the interpreter at sample
	 * time, as Python's are (its C functions too: Array#map, usort) */
	HS_KIND_RUBY,
	HS_KIND_PHP,
	HS_KIND_PERL,
	HS_KIND_COUNT
};

struct hs_value_type {
	uint32_t type, unit; /* string ids, e.g. "samples"/"count", "cpu"/"nanoseconds" */
};

struct hs_mapping {
	uint64_t start, limit, offset; /* as in pprof: address range and file offset of start */
	uint32_t file;                 /* string id: path, "[kernel.kallsyms]", "[vdso]", "[ext4]" */
	uint32_t build_id;             /* string id: lower-case hex, 0 when unknown */
	uint8_t kind;                  /* enum hs_kind of the code it holds */
	uint64_t elf_base;             /* address - elf_base is the address in the ELF file's own
	                                * symbols (a PIE's or library's load bias); 0 for code at
	                                * its link-time address, and when unknown */
};

struct hs_function {
	uint32_t name;        /* string id, demangled for display */
	uint32_t system_name; /* string id, as in the symbol table */
	uint32_t filename;    /* string id, 0 when unknown */
	int64_t start_line;
};

struct hs_line {
	uint32_t function; /* function id */
	int64_t line;      /* 0 when unknown */
};

struct hs_location {
	uint32_t mapping;     /* mapping id, 0 for none */
	uint64_t address;     /* address in the process (0 for none) */
	uint32_t line0;       /* first entry in p->lines */
	uint32_t nlines;      /* as in pprof: innermost first; each was inlined into the next, and
	                       * the last is the function the code really belongs to */
	uint8_t kind;         /* enum hs_kind */
	uint64_t sym_off;     /* address - start of its symbol, when known (perf script's +0x..) */
};

struct hs_stack {
	uint32_t loc0;   /* first entry in p->stack_locs */
	uint32_t nlocs;  /* location ids, leaf first */
	uint32_t frames; /* its frames: its locations' lines (one at least each), at most UINT32_MAX */
};

struct hs_sample {
	uint32_t stack;
	uint32_t comm;  /* string id: the thread's command name */
	int32_t pid;    /* -1 when unknown */
	int32_t tid;    /* -1 when unknown */
	uint64_t time;  /* ns (CLOCK_MONOTONIC of the recording), 0 when not kept */
};

/* Caps on the stack table: distinct stacks, and location entries of all of them together. Past
 * either, hs_profile_stack() hands out one stack of a single pseudo-frame, "[too many stacks]",
 * for every new stack (its samples still count) and counts them in stacks_over_cap. */
#define HS_PROFILE_MAX_STACKS (8u << 20)
#define HS_PROFILE_MAX_STACK_LOCS (256u << 20)
#define HS_PROFILE_OVER_CAP_NAME "[too many stacks]"

/* The frames of all distinct stacks together (a location counts its inline lines) a profile read
 * from a file may hold: HS_PROFILE_FRAMES_MIN plus HS_PROFILE_FRAMES_PER_BYTE per byte of the
 * file (see hs_profile_bound_frames()); and as many for the stacks of all its samples, each
 * counted once per sample. Writers draw every frame of every stack, and go through every frame of
 * every sample, so this is what bounds their memory and time, where a few bytes of input (a
 * location of 4096 inlined lines repeated 65536 times in a sample, or in each of a million
 * samples told apart by their times) could otherwise ask for billions of frames. Past it, a new
 * stack is the over-cap stack (stacks_over_cap), and so is a new sample's (samples_over_cap).
 * Real profiles have well under 16 frames per byte of their file (hotstack's and Go's pprof
 * files: about 6). */
#define HS_PROFILE_FRAMES_MIN ((uint64_t)4 << 20)
#define HS_PROFILE_FRAMES_PER_BYTE 16u

struct hs_profile {
	/* strings: offsets into a byte pool; id 0 is "" */
	HS_VEC(uint32_t) str_off;
	HS_VEC(uint32_t) str_len;
	HS_VEC(char) str_pool;

	HS_VEC(struct hs_value_type) types; /* one per value of each sample */
	HS_VEC(uint32_t) type_events;       /* per type, the name of the event it counts (string id,
	                                     * 0 when not an event's); may be shorter than types */
	struct hs_value_type period_type;
	int64_t period;
	int64_t time_nanos;     /* wall-clock start of the recording, 0 when unknown */
	int64_t duration_nanos;
	HS_VEC(uint32_t) comments; /* string ids */

	HS_VEC(struct hs_mapping) mappings;
	uint32_t main_mapping; /* the profiled program's executable (pprof's mapping[0]), 0 when
	                        * not known: see hs_profile_main_mapping() */
	HS_VEC(struct hs_function) functions;
	HS_VEC(struct hs_line) lines;
	HS_VEC(struct hs_location) locations;
	HS_VEC(uint32_t) stack_locs;
	HS_VEC(struct hs_stack) stacks;
	HS_VEC(struct hs_sample) samples; /* no reserved entry: nothing refers to a sample id */
	HS_VEC(int64_t) values;           /* types.n values per sample, in sample order */

	struct hs_index str_ix, map_ix, func_ix, loc_ix, stack_ix, sample_ix;

	uint32_t max_stacks;      /* HS_PROFILE_MAX_STACKS; lower in tests */
	uint64_t max_frames;      /* frames of all distinct stacks: 0 for no cap but the above */
	uint64_t frames;          /* ... held now */
	uint32_t over_cap_stack;  /* the "[too many stacks]" stack, 0 until needed */
	uint64_t stacks_over_cap; /* distinct stacks asked for past the cap */
	bool frames_over_cap;     /* ... of which some for max_frames */
	uint64_t sample_frames;    /* frames of the stacks of all samples (with max_frames) */
	uint64_t samples_over_cap; /* samples put on the over-cap stack, their own stack's frames
	                            * past what max_frames left for all samples */
	uint64_t values_saturated; /* sample values whose sum was held at INT64_MAX or INT64_MIN */
};

struct hs_profile *hs_profile_new(void);
void hs_profile_free(struct hs_profile *p);
/* Makes room in q for as much as p holds: a copy of p (most of it) without growing as it goes. */
void hs_profile_reserve(struct hs_profile *q, const struct hs_profile *p);

/* Strings. hs_profile_str() never returns NULL; the pointer lives until the next intern. */
uint32_t hs_profile_intern(struct hs_profile *p, const char *s, size_t len);
uint32_t hs_profile_intern_str(struct hs_profile *p, const char *s);
const char *hs_profile_str(const struct hs_profile *p, uint32_t id);
/* The id of the string s if the profile holds it (0 for ""), else UINT32_MAX. */
uint32_t hs_profile_find_str(const struct hs_profile *p, const char *s, size_t len);

/* Adds a value type (before any sample is added); returns its index. */
uint32_t hs_profile_add_type(struct hs_profile *p, const char *type, const char *unit);
/* Index of the value type named type, or -1. */
int hs_profile_find_type(const struct hs_profile *p, const char *type);
struct hs_strbuf;
/* The index of the value type named type (--value TYPE) in *ret: 0, or -ENOENT with the names
 * p has, "a, b" ("none" when it has none), appended to have when it is not NULL. */
int hs_profile_value_index(const struct hs_profile *p, const char *type, int *ret, struct hs_strbuf *have);

/* Interning constructors: an equal entry already present is returned instead of a new one. */
uint32_t hs_profile_mapping(struct hs_profile *p, const struct hs_mapping *m);
uint32_t hs_profile_function(struct hs_profile *p, uint32_t name, uint32_t system_name,
			     uint32_t filename, int64_t start_line);
uint32_t hs_profile_location(struct hs_profile *p, uint32_t mapping, uint64_t address, uint8_t kind,
			     const struct hs_line *lines, uint32_t nlines);
/* The id of the stack of these locations, interned; past the caps above, the over-cap stack. */
uint32_t hs_profile_stack(struct hs_profile *p, const uint32_t *locs, uint32_t nlocs);
/* The over-cap stack, made when first asked for; counts nothing (the caller counts what it
 * puts there). */
uint32_t hs_profile_over_cap_stack(struct hs_profile *p);

/* Adds values (types.n of them) to the sample with this stack and these labels, creating it if
 * needed (on the over-cap stack instead, when its stack's frames are more than max_frames left
 * for all samples). Returns the sample id. */
uint32_t hs_profile_add_sample(struct hs_profile *p, uint32_t stack, uint32_t comm, int32_t pid,
			       int32_t tid, uint64_t time, const int64_t *values);
/* Adds values (types.n of them) to a sample hs_profile_add_sample() returned. */
void hs_profile_add_values(struct hs_profile *p, uint32_t sample, const int64_t *values);

static inline const int64_t *hs_profile_sample_values(const struct hs_profile *p, uint32_t sample)
{
	return &p->values.v[(size_t)sample * p->types.n];
}
static inline const uint32_t *hs_profile_stack_locs(const struct hs_profile *p, uint32_t stack)
{
	return &p->stack_locs.v[p->stacks.v[stack].loc0];
}
/* The name of the function a location really belongs to (its outermost line), or a
 * "[unknown]"-style placeholder when it has no lines. */
const char *hs_profile_location_name(const struct hs_profile *p, uint32_t loc);
/* Total of value index vi over all samples, held at INT64_MAX or INT64_MIN where the sum would
 * overflow. */
int64_t hs_profile_total(const struct hs_profile *p, uint32_t vi);
/* Whether some sum of values index vi of samples (a total, a flame graph node, a report row) can
 * reach INT64_MAX or INT64_MIN, where writers hold it (hs_add_sat()); or whether merging samples
 * held one already (values_saturated). Writers' figures are then not exact: the CLI says so. */
bool hs_profile_sums_saturate(const struct hs_profile *p, uint32_t vi);
/* The first value type whose sums saturate (hs_profile_sums_saturate()), or -1 for none. */
int hs_profile_saturated_type(const struct hs_profile *p);
/* What p could not hold as its input had it (stacks over its caps, sums held at INT64_MAX),
 * appended to sb a line each ("\n" after each), for a person; returns how many lines. */
size_t hs_profile_held_notes(const struct hs_profile *p, struct hs_strbuf *sb);
/* Sets max_frames for a profile read from a file of input_bytes bytes (compressed, as read):
 * HS_PROFILE_FRAMES_MIN + HS_PROFILE_FRAMES_PER_BYTE * input_bytes. */
void hs_profile_bound_frames(struct hs_profile *p, uint64_t input_bytes);
/* Whether any sample kept its timestamp. */
bool hs_profile_has_time(const struct hs_profile *p);

/* The mapping of the main binary, which pprof writes first: main_mapping when set, else the
 * first mapping of user code from a file, else the first that is not the kernel's, else the
 * first; 0 when there is none. */
uint32_t hs_profile_main_mapping(const struct hs_profile *p);

/* Notes in p's comments that lost samples were not recorded, "lost N samples (P%)" (P of got +
 * lost, "over 99.9%" rather than a rounded 100.0%), or "lost all N samples (100%)" when none
 * was got, where the report shows it; returns the note's string id. */
uint32_t hs_profile_note_lost(struct hs_profile *p, uint64_t got, uint64_t lost);
/* Notes in p's comments that n records the kernel could not write were lost: side-band records
 * alone ("lost N side-band records (mappings, names, forks, exits)") where the samples lost are
 * counted apart, else records of any kind ("lost N records, samples and side-band ...
 * together"), which say nothing of how many samples they were; returns the note's string id. */
uint32_t hs_profile_note_lost_records(struct hs_profile *p, uint64_t n, bool side_band);

/* Where names are missing: of the samples whose leaf is user code in a mapped file (a location
 * of kind HS_KIND_USER with a mapping), those whose leaf has no function name (shown
 * "[module]", or "module+0xADDR" in a stripped file), and the file most of them are in. Sums of value index vi. */
struct hs_unnamed_share {
	int64_t user;         /* value of the samples with a user-space leaf */
	int64_t unnamed;      /* ... of those with no function name at the leaf */
	uint32_t file;        /* string id: the mapped file with the most of them, 0 for none */
	uint32_t build_id;    /* string id: its build-id (lower-case hex), 0 when unknown */
	int64_t top;          /* value of the unnamed leaves in that file */
	bool distro;          /* that file is the distribution's (under /usr or /lib*, not
	                    * /usr/local), whose debug packages may have its symbols */
	char debug_file[160]; /* where its debug file is looked for by build-id
	                       * (/usr/lib/debug/.build-id/xx/yyyy.debug), "" without one */
};
/* Fills ret; returns whether over half the user-space samples have no name at the leaf. */
bool hs_profile_unnamed_share(const struct hs_profile *p, uint32_t vi, struct hs_unnamed_share *ret);
/* Whether name is the one a stripped file's function gets from its address alone (symbolize/
 * fde-names.h): "BASE+0xHEX", BASE the base name of file. Such a function has no symbol: to
 * the interpreters' merges it is as unnamed as "[BASE]". */
bool hs_profile_address_name(const char *name, const char *file);
/* When hs_profile_unnamed_share() finds most user-space samples without names, appends to sb a
 * line ("\n" after it) saying where and how to get names: the debug package and debuginfod
 * (unless debuginfod_set) for the distribution's files, symbols or a debug file for others. */
void hs_profile_unnamed_note(const struct hs_profile *p, bool debuginfod_set, struct hs_strbuf *sb);

/* The module a location's code is in, as a string id (0 for none): its mapping's file; for a
 * Python location, which has no mapping, the source file of its function (co_filename). */
uint32_t hs_profile_location_module(const struct hs_profile *p, const struct hs_location *l);

/* Whether file is a Python source file as the interpreter names it (co_filename): ending in
 * ".py" or ".pyw", or "<frozen ...>", "<string>" (exec, python -c) or "<stdin>". Readers of
 * files that record no kind of code (pprof, speedscope) take a location with no mapping, no
 * address and such a file for HS_KIND_PYTHON: the locations hotstack writes for Python frames. */
bool hs_python_file(const char *file);

/* Kind of code, guessed from what a file records (pprof has no field for it): kernel address
 * space or kernel mapping names, JIT maps, placeholders in brackets. */
enum hs_kind hs_kind_guess(const char *mapping_file, uint64_t address, const char *function_name);
/* The module names pprof files give Java methods read at sample time (a pprof location has no
 * kind of its own: hs_kind_guess() tells them from these). */
#define HS_JAVA_INTERP_MODULE "[java interpreted]"
#define HS_JAVA_C1_MODULE "[java C1]"
#define HS_JAVA_C2_MODULE "[java C2]"
#define HS_JS_INTERP_MODULE "[js interpreted]"
#define HS_JS_BASELINE_MODULE "[js baseline]"
#define HS_JS_OPT_MODULE "[js optimized]"
#define HS_JS_BUILTIN_MODULE "[js builtin]"
/* Whether kind is JIT code, a Java method's of any kind included. */
bool hs_kind_is_jit(uint8_t kind);
/* Whether kind is a script's code read from its interpreter (Python, Ruby, PHP, Perl), whose
 * frames have no mapping: their file is their module. */
bool hs_kind_is_script(uint8_t kind);
/* The kind of a frame with no mapping or address whose source file is file, by its name: a
 * script's (HS_KIND_PYTHON for hs_python_file(), .rb, .php, .pl and .pm), else HS_KIND_USER. */
uint8_t hs_script_kind(const char *file);

/* The command a recording ran, as its comments tell it: what follows " -- " in hotstack
 * record's command line (record's first comment) or perf record's (a perf.data's cmdline),
 * in sb, and returned; NULL when no comment says. */
const char *hs_profile_command(const struct hs_profile *p, struct hs_strbuf *sb);
/* The value index a view measured in time uses: vi when its unit is a time (nanoseconds,
 * microseconds, milliseconds, seconds), else the first such type, else vi. */
uint32_t hs_profile_time_value(const struct hs_profile *p, uint32_t vi);

#endif
