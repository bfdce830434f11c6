/* perf.data (from perf or any tool writing its format) into a profile: records put into time
 * order round by round (perf's FINISHED_ROUND), side-band events kept in the model, call chains
 * (frame-pointer, DWARF stack copies unwound by hotstack's unwinder, LBR call stacks) turned
 * into symbolized stacks with the files the recording saw (checked by build-id). */
#ifndef HS_PERF_DATA_LOAD_H
#define HS_PERF_DATA_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "profile/profile.h"

struct hs_perf_data_load_opts {
	bool keep_time;   /* one sample per record, with its timestamp (hotstack script) */
	bool no_kernel;   /* leave kernel frames out */
	bool no_demangle; /* symbols as they are in the symbol table */
	bool no_inline;   /* no DWARF: no inline frames, no source lines */
	const char *symfs; /* the recording's files are looked up under this directory first */
};

/* Records held to be put in time order (perf's rounds), at most: past either cap the oldest half
 * is handed on at once. Real rounds hold what the ring buffers held (MiBs); a file without rounds
 * would otherwise be held whole. */
#define HS_PERF_DATA_LOAD_MAX_QUEUED (1u << 20)
#define HS_PERF_DATA_LOAD_MAX_QUEUED_BYTES ((size_t)64 << 20)

/* What the caller may want to tell the user; strings owned by the struct. */
struct hs_perf_data_load_info {
	uint64_t records, samples, lost, lost_records; /* lost: LOST_SAMPLES; lost_records: LOST */
	uint64_t unknown_records, bad_records, compressed_records;
	bool truncated;
	uint64_t truncated_at;
	bool decompress_cut;          /* COMPRESSED records expanded past hs_decompress_over(): */
	uint64_t decompress_cut_at;   /* ... the records from this offset on were not read */
	uint64_t decompressed;        /* bytes COMPRESSED records expanded to */
	uint64_t queue_flushes;       /* times records held for time order passed the queue's cap */
	bool kernel_symbols;          /* kernel frames could be named */
	char *kernel_note;            /* why not, when they could not */
	HS_VEC(char *) mismatched;    /* files rebuilt or replaced since the recording */
	HS_VEC(char *) jit_warnings;  /* about jitdump files and perf maps read (struct hs_jit) */
	char *cmdline;                /* the perf command line, when the header has it */
};

void hs_perf_data_load_info_release(struct hs_perf_data_load_info *info);

/* Builds a profile from the perf.data bytes in buf. Returns 0 (*ret set; a truncated file is not
 * an error: info says so), or the reader's error (-EBADMSG, -EOPNOTSUPP, ...; err names the
 * offset). info may be NULL. */
int hs_perf_data_load(const void *buf, size_t len, const struct hs_perf_data_load_opts *opts, struct hs_profile **ret,
		      struct hs_perf_data_load_info *info, struct hs_error *err);

#endif
