/* Reading pprof files — perftools.profiles.Profile (google/pprof proto/profile.proto),
 * gzip-compressed or raw — into the profile IR, from hotstack or from any other tool. */
#ifndef HS_PPROF_READ_H
#define HS_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "profile/profile.h"

/* Caps on what an input may ask for; over them reading fails with -EOVERFLOW. */
#define HS_PPROF_MAX_SIZE ((size_t)2 << 30) /* bytes, compressed and decompressed */
#define HS_PPROF_MAX_ENTRIES (1u << 28)     /* entries of one table: strings, samples, ... */
#define HS_PPROF_MAX_TYPES 1024u            /* sample types */
#define HS_PPROF_MAX_LINES 4096u            /* lines (inline depth) of one location */
#define HS_PPROF_MAX_DEPTH 65536u           /* locations of one sample */

/* Inflates the gzip data in[0 .. len) into *ret (to free), *ret_len bytes: 0, or -EBADMSG,
 * -ENODATA (cut short), -EOVERFLOW (past HS_PPROF_MAX_SIZE, or a decompression bomb), -ENOMEM,
 * with err said (may be NULL). */
int hs_gunzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len, struct hs_error *err);

/* Parses buf[0 .. len) (borrowed for the call only) into a new profile in *ret, owned by the
 * caller (hs_profile_free). Ids are renumbered: pprof's are arbitrary. Labels "pid", "tid"
 * (numbers), "comm" (a string) and "timestamp" (a number in nanoseconds) become the sample's
 * fields; other labels are dropped. Frame and mapping kinds, which pprof does not store, are
 * guessed with hs_kind_guess(), and a location with no mapping, no address and a Python source
 * file (hs_python_file()) is HS_KIND_PYTHON.
 *
 * Returns 0, or -EBADMSG (malformed protobuf or gzip, a reference to an id or string that does
 * not exist, a duplicate id, a sample whose value count differs from the sample types),
 * -ENODATA (the gzip stream ends early), -EOVERFLOW (a size over a cap above, or gzip data that
 * expands past hs_decompress_over()), -ENOMEM. Stacks past the profile's frame cap, set from len
 * (hs_profile_bound_frames()), are counted in one "[too many stacks]" stack. On
 * error *ret is untouched and err (may be NULL) holds the offset — into the decompressed bytes
 * for gzip input — and a message. */
int hs_pprof_read(const void *buf, size_t len, struct hs_profile **ret, struct hs_error *err);
/* The same for a profile read from a file of input_bytes bytes (compressed: buf holds it
 * decompressed): the profile may hold frames in proportion to it (hs_profile_bound_frames()). */
int hs_pprof_read_sized(const void *buf, size_t len, uint64_t input_bytes, struct hs_profile **ret,
			struct hs_error *err);

/* Whether buf (the first len bytes of a file, any length) looks like pprof: gzip magic, or
 * protobuf fields whose numbers and wire types fit profile.proto. */
bool hs_pprof_probe(const void *buf, size_t len);
/* The same for buf holding a whole input: its first field must be whole too. */
bool hs_pprof_probe_whole(const void *buf, size_t len);

#endif
