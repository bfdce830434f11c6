/* Loading any profile input, recognised by its content rather than its name. */
#ifndef HS_LOAD_H
#define HS_LOAD_H

#include "format/format.h"
#include "profile/perf-data-load.h"
#include "profile/profile.h"

enum hs_input_kind {
	HS_INPUT_UNKNOWN = 0,
	HS_INPUT_PPROF,
	HS_INPUT_FOLDED,
	HS_INPUT_PERF_DATA,
};

/* What buf holds, judged from its first bytes. */
enum hs_input_kind hs_input_sniff(const void *buf, size_t len);

/* Reads path ("-" for standard input) and parses it into *ret. Returns 0, -errno from the
 * file system, -EBADMSG/-ENODATA/-EOVERFLOW from the parser (err says where), or
 * -EPROTONOSUPPORT when the content is not a format this build reads (err says which). */
int hs_profile_load(const char *path, struct hs_profile **ret, struct hs_parse_error *err);

struct hs_load_opts {
	bool keep_time; /* perf.data: a sample per record, with its time */
	bool no_kernel; /* perf.data: leave kernel frames out */
	bool no_demangle; /* perf.data: symbols as they are in the symbol table */
	const char *symfs; /* perf.data: the recording's files are looked up under it first */
	bool no_inline; /* perf.data: no DWARF: no inline frames, no source lines */
};

/* hs_profile_load() with options, and what reading a perf.data found (info->perf; may be NULL).
 * Release info with hs_perf_data_load_info_release(). */
int hs_profile_load_ex(const char *path, const struct hs_load_opts *opts, struct hs_profile **ret,
		       struct hs_perf_data_load_info *info, struct hs_parse_error *err);

/* Reads a whole file into memory (capped at max bytes: -EFBIG beyond). */
int hs_read_file(const char *path, size_t max, char **buf, size_t *len);

#endif
