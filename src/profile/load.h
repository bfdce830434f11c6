/* Loading any profile input, recognised by its content rather than its name. */
#ifndef HS_LOAD_H
#define HS_LOAD_H

#include "format/format.h"
#include "profile/perf-data-load.h"
#include "profile/profile.h"

/* gzip input is bounded by hs_decompress_over() (format/format.h). Whole inputs read into memory (perf.data and pprof from a pipe): more is an error. */
#define HS_LOAD_MAX_BYTES ((size_t)4 << 30)

enum hs_input_kind {
	HS_INPUT_UNKNOWN = 0,
	HS_INPUT_PPROF,
	HS_INPUT_FOLDED,
	HS_INPUT_PERF_DATA,
	HS_INPUT_SPEEDSCOPE,
};

/* What buf holds, judged from its first bytes (more: the input goes on past them). gzip data is
 * HS_INPUT_PPROF here: what it holds is only known once decompressed. HS_INPUT_UNKNOWN is what
 * nothing recognised; a known kind may still be damaged past its start (its reader says where). */
enum hs_input_kind hs_input_sniff(const void *buf, size_t len, bool more);

/* What an input that nothing recognised is told. */
#define HS_NOT_A_PROFILE "not a profile hotstack reads (perf.data, pprof, folded stacks, speedscope)"

/* The input the views read when given none: "-" (standard input) when it is a pipe, as perf
 * report reads it; else "hotstack.pb.gz" where it exists, else "perf.data" where that exists
 * (perf's), else NULL; with perf_data (hotstack script, which needs perf.data's samples),
 * "perf.data" whether it exists or not. */
const char *hs_profile_default_input(bool perf_data);

struct hs_error;
/* The two profiles diff compares (A, the baseline, then B) from the n it was given, as perf diff:
 * two: those; none: "hotstack.pb.gz.old" and "hotstack.pb.gz" where both exist, else
 * "perf.data.old" and "perf.data" where both exist; one: the given one (B) against the first
 * of "hotstack.pb.gz.old", "perf.data.old" that exists. Returns 0 with ret set, borrowed from
 * given or static; -ENOENT when no pair is here, -E2BIG for more than two (err says which). */
int hs_profile_diff_inputs(int n, char *const *given, const char *ret[2], struct hs_error *err);

/* Reads path ("-" for standard input) and parses it into *ret. Returns 0, -errno from the
 * file system, -EBADMSG/-ENODATA/-EOVERFLOW/-EOPNOTSUPP from the parser (err says where;
 * format/format.h), -EFBIG for an input over a cap (err says which), or -EPROTONOSUPPORT when
 * the content is not a format this build reads (err says so). What is no profile is refused
 * from its first bytes; folded text is parsed as it is read, gzipped or not. */
int hs_profile_load(const char *path, struct hs_profile **ret, struct hs_error *err);

struct hs_load_opts {
	bool keep_time; /* perf.data: a sample per record, with its time */
	bool no_kernel; /* perf.data: leave kernel frames out */
	bool no_demangle; /* perf.data: symbols as they are in the symbol table */
	const char *symfs; /* perf.data: the recording's files are looked up under it first */
	bool no_inline; /* perf.data: no DWARF: no inline frames, no source lines */
};

/* What loading found that a person should be told. Release with hs_load_info_release(). */
struct hs_load_info {
	struct hs_perf_data_load_info perf; /* a perf.data: what reading it found */
	uint64_t folded_lines_cut;          /* folded lines with frames past HS_FOLDED_MAX_FRAMES */
	bool named_here;                    /* a perf.data: names were looked up in loading it, where debug symbols
	                  * installed since can still add them (a pprof or folded file keeps the
	                  * names it was written with) */
	bool pprof; /* read as pprof (gzipped or not), which has no magic number: any bytes whose first
	             * fields fit were taken for it, even where reading fails */
};
void hs_load_info_release(struct hs_load_info *info);
struct hs_strbuf;
/* What loading p from the input called name found, for a person, as lines ("\n" after each):
 * warnings (a perf.data cut short, records not read, files changed since the recording, JIT
 * files refused, no kernel symbols, folded lines cut, how to get missing names: see
 * hs_profile_unnamed_note()) appended to warn, notes (records of unknown types skipped) to note. */
void hs_load_info_notes(const struct hs_load_info *li, const struct hs_profile *p, const char *name,
			bool debuginfod_set, struct hs_strbuf *warn, struct hs_strbuf *note);

/* hs_profile_load() with options, and what reading found (info may be NULL). */
int hs_profile_load_ex(const char *path, const struct hs_load_opts *opts, struct hs_profile **ret,
		       struct hs_load_info *info, struct hs_error *err);

/* Several inputs read as one profile (report A B C, flame DIR): each read as
 * hs_profile_load_ex() reads it, then merged (profile/merge.h) in the order given. A directory
 * stands for its regular files in name order (by bytes, as strcmp), leaving out dot-files (the
 * temporary files of writers that rename a file into place once written), links and
 * subdirectories. Those of its files that are no profile this build reads are skipped and
 * counted, where a file named is an error: what nothing recognises (-EPROTONOSUPPORT), and what
 * was taken for pprof and does not read as one (text can start as pprof does). One input that
 * is no directory is read as hs_profile_load_ex() reads it, the same profile. */
#define HS_LOAD_MAX_DIR_FILES (1u << 20) /* files of one directory */

struct hs_load_many {
	const struct hs_load_opts *opts; /* as for hs_profile_load_ex(); may be NULL */
	/* Called for each input read, before it is merged, with what reading it found (for
	 * hs_load_info_notes()) and its profile (borrowed for the call); may be NULL. */
	void (*loaded)(void *ctx, const char *path, const struct hs_load_info *info, const struct hs_profile *p);
	void *ctx;
	/* what hs_profile_load_many() found */
	char *failed;           /* the input (a file, a directory) an error is of; owned */
	size_t read;            /* profiles read and merged */
	size_t skipped;         /* files of directories that are no profile this build reads */
	size_t skipped_dirs;    /* ... the directories they are in */
	const char *skipped_in; /* the first of those directories, borrowed from paths */
};

/* Reads the n inputs at paths (n >= 1; "-": standard input) into one profile in *ret. Returns 0,
 * or the first error, that of the input lm->failed names: hs_profile_load_ex()'s, -errno for a
 * directory that cannot be read, -EOVERFLOW for one with more than HS_LOAD_MAX_DIR_FILES files,
 * -ENOMSG for one with no profile (err says so), or hs_profile_merge()'s. Call
 * hs_load_many_release() either way. */
int hs_profile_load_many(const char *const *paths, size_t n, struct hs_load_many *lm, struct hs_profile **ret,
			 struct hs_error *err);
void hs_load_many_release(struct hs_load_many *lm);
/* What hs_profile_load_many() skipped, for a person, a line ("\n" after it) appended to note. */
void hs_load_many_notes(const struct hs_load_many *lm, struct hs_strbuf *note);

#endif
