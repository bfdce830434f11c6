/* perf.data, as perf record writes it (tools/perf/Documentation/perf.data-file-format.txt):
 * the file header, the event attributes with their ids, the data section (kernel records plus
 * perf's own: HEADER_ATTR, FINISHED_ROUND, ID_INDEX, THREAD_MAP, CPU_MAP, TIME_CONV, BUILD_ID,
 * HEADER_FEATURE, COMPRESSED with zstd), the feature sections that matter, and pipe mode. A
 * bounded reader over a buffer in memory: every size is checked against what remains, a file cut
 * short yields every complete record before the cut, and the first error names its offset. */
#ifndef HS_PERF_DATA_H
#define HS_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "format/perf-event.h"
#include "util/hashmap.h"
#include "util/util.h"

/* Record types perf itself writes (tools/lib/perf/include/perf/event.h). */
enum {
	HS_PERF_RECORD_HEADER_ATTR = 64,
	HS_PERF_RECORD_HEADER_EVENT_TYPE = 65,
	HS_PERF_RECORD_HEADER_TRACING_DATA = 66,
	HS_PERF_RECORD_HEADER_BUILD_ID = 67,
	HS_PERF_RECORD_FINISHED_ROUND = 68,
	HS_PERF_RECORD_ID_INDEX = 69,
	HS_PERF_RECORD_AUXTRACE_INFO = 70,
	HS_PERF_RECORD_AUXTRACE = 71,
	HS_PERF_RECORD_AUXTRACE_ERROR = 72,
	HS_PERF_RECORD_THREAD_MAP = 73,
	HS_PERF_RECORD_CPU_MAP = 74,
	HS_PERF_RECORD_STAT_CONFIG = 75,
	HS_PERF_RECORD_STAT = 76,
	HS_PERF_RECORD_STAT_ROUND = 77,
	HS_PERF_RECORD_EVENT_UPDATE = 78,
	HS_PERF_RECORD_TIME_CONV = 79,
	HS_PERF_RECORD_HEADER_FEATURE = 80,
	HS_PERF_RECORD_COMPRESSED = 81,
	HS_PERF_RECORD_FINISHED_INIT = 82,
};

/* Header feature bits (tools/perf/util/header.h). */
enum {
	HS_FEAT_TRACING_DATA = 1,
	HS_FEAT_BUILD_ID = 2,
	HS_FEAT_HOSTNAME = 3,
	HS_FEAT_OSRELEASE = 4,
	HS_FEAT_VERSION = 5,
	HS_FEAT_ARCH = 6,
	HS_FEAT_NRCPUS = 7,
	HS_FEAT_CMDLINE = 11,
	HS_FEAT_EVENT_DESC = 12,
	HS_FEAT_SAMPLE_TIME = 21,
	HS_FEAT_COMPRESSED = 27,
};

/* Caps on what a file can make the reader hold. */
#define HS_PERF_DATA_MAX_ATTRS 4096
#define HS_PERF_DATA_MAX_IDS (1u << 20)
#define HS_PERF_DATA_MAX_BUILD_IDS (1u << 20)
/* COMPRESSED records are decompressed a chunk at a time, as their records are read; all of them
 * together may expand to what hs_decompress_over() allows (format/format.h), then the rest of the
 * file is not read (decompress_cut). */
#define HS_PERF_DATA_DECOMPRESS_CHUNK ((size_t)1 << 20)

struct hs_perf_data_attr {
	struct perf_event_attr attr;   /* zero-filled past what the file held */
	struct hs_perf_layout layout;
	char *name;                    /* from EVENT_DESC, or made from type/config; owned */
};

struct hs_perf_build_id {
	int32_t pid;
	uint8_t build_id[20];
	uint8_t size;
	bool kernel;   /* PERF_RECORD_MISC_KERNEL: [kernel.kallsyms] or a module */
	char *filename; /* owned */
};

/* One record from the data section, decompressed when it came in a COMPRESSED record. */
struct hs_perf_data_rec {
	const struct perf_event_header *h; /* valid until the next call */
	uint64_t offset; /* in the file (of the COMPRESSED record, for decompressed ones) */
	int attr;        /* index of its event in attrs (-1: not known, or not an event record) */
};

struct hs_perf_data {
	const uint8_t *buf;
	size_t len;
	bool pipe;
	uint64_t data_off, data_end; /* the data section (pipe: everything after the header) */
	HS_VEC(struct hs_perf_data_attr) attrs;
	struct hs_u64map ids;        /* sample id -> index in attrs */
	struct hs_perf_layout untied; /* for records no id ties to an event (hs_perf_data_record_layout) */
	bool untied_build_id;         /* some event asked for build-ids in its MMAP2 records */
	HS_VEC(struct hs_perf_build_id) build_ids;
	char *hostname, *osrelease, *version, *arch, *cmdline; /* owned, NULL when absent */
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t first_sample_time, last_sample_time;
	/* iteration state */
	uint64_t pos;
	unsigned char *zbuf;         /* records decompressed, not yet returned: zbuf[zpos .. zlen) */
	size_t zlen, zpos, zcap;
	uint64_t zoffset;            /* file offset of the COMPRESSED record being read */
	const uint8_t *zin;          /* its compressed bytes not yet decompressed */
	size_t zin_len;
	bool zframe_end;             /* the last zstd call ended a frame */
	bool zmore;                  /* the decoder has more to give: input left, or output held back */
	uint64_t zin_total, zout_total; /* compressed bytes taken, decompressed bytes made */
	void *zctx;                  /* ZSTD_DCtx */
	unsigned char *scratch;      /* a record copied out of zbuf so that it is aligned */
	size_t scratch_cap;
	/* results */
	bool truncated;              /* the file ends inside a record */
	uint64_t truncated_at;
	uint64_t unknown_records;    /* of types this reader does not know, skipped */
	uint64_t compressed_records;
	bool decompress_cut;         /* COMPRESSED records expanded past the bound: the rest of the
				      * file, from decompress_cut_at, was not read */
	uint64_t decompress_cut_at;
};

/* Reads the header, attributes and features of the perf.data in buf (which must stay valid
 * while d is used). Returns 0; -EBADMSG (not perf.data or malformed; err names the offset),
 * -EOPNOTSUPP (an old PERFFILE version, or a byte-swapped file from a machine of the other
 * endianness), -EOVERFLOW (over a cap). */
int hs_perf_data_open(struct hs_perf_data *d, const void *buf, size_t len, struct hs_error *err);
void hs_perf_data_close(struct hs_perf_data *d);

/* The next record: 1 with *ret set, 0 at the end (check d->truncated, d->decompress_cut), or a
 * negative errno
 * (-EBADMSG: a corrupt size; err names the offset). Records perf uses internally
 * (HEADER_ATTR, FEATURE, BUILD_ID in pipe mode) are taken in and passed on too. */
int hs_perf_data_next(struct hs_perf_data *d, struct hs_perf_data_rec *ret, struct hs_error *err);

/* The layout to parse a record with: its event's, or the first event's. */
const struct hs_perf_layout *hs_perf_data_layout(const struct hs_perf_data *d, int attr);
/* The layout to parse the kernel record h with, and its event's index in *attr (-1 when the file
 * has no event): the event its id names, or the file's one event. A record no id ties to an
 * event gets the first event's layout, with MMAP2 build-ids believed only when some event asked
 * for them: the kernel marks other events' MMAP2 records as holding one too (perf-event.h). The
 * layout lives as long as d. */
const struct hs_perf_layout *hs_perf_data_record_layout(const struct hs_perf_data *d, const struct perf_event_header *h,
							int *attr);

/* Whether buf starts like perf.data (either byte order, file or pipe). */
bool hs_perf_data_sniff(const void *buf, size_t len);

#endif
