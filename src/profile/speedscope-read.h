/* Reading speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json)
 * into the profile IR: "sampled" and "evented" profiles over one shared frame table, each
 * profile a thread. */
#ifndef HS_SPEEDSCOPE_READ_H
#define HS_SPEEDSCOPE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"
#include "util/error.h"

#define HS_SPEEDSCOPE_MAX_DEPTH 65536u /* frames of one sample, or open at once in an evented profile */
/* Frames of all distinct stacks per byte of the file, beyond HS_PROFILE_FRAMES_MIN: less than
 * other inputs' HS_PROFILE_FRAMES_PER_BYTE, because an evented profile's stacks are not written
 * out but implied (a frame opened once is in every stack until it closes), so that each frame
 * is one held, not one drawn from a location's inlined lines: 4 bytes of memory each. A sampled
 * profile writes each frame of its stacks, 2 bytes at least, and never reaches it. */
#define HS_SPEEDSCOPE_FRAMES_PER_BYTE 2u

/* Parses buf[0 .. len) (borrowed for the call) into a new profile in *ret, owned by the caller.
 * Value types: "samples"/"count" (one per sample, or per interval of an evented profile) and,
 * for the profiles' unit, "time"/"nanoseconds" (any time unit, converted) or "space"/"bytes";
 * weights in unit "none" are the samples' counts. A profile named "comm (pid/tid)", as hotstack
 * writes them, is that thread; another is a thread named after the profile. Each sample keeps
 * a time (startValue plus the weights before it, or an event's "at", in nanoseconds where the
 * unit is a time), so flame charts can be drawn. A frame with a "line" has its "file" as source
 * file; without, the "file" is taken for the module (as hotstack writes frames without lines),
 * but for a Python source file (hs_python_file()): such a frame is a Python function's, of kind
 * HS_KIND_PYTHON, with that file as its source.
 * input_bytes: the size of the file read (compressed), which bounds the frames the profile may
 * hold: HS_PROFILE_FRAMES_MIN plus HS_SPEEDSCOPE_FRAMES_PER_BYTE per byte; past it, new stacks
 * are counted as one "[too many stacks]" stack. The time and memory taken are linear in the
 * input, however deep the stacks of an evented profile.
 *
 * Returns 0, or -EBADMSG (malformed JSON, a frame index out of range, an event closing a frame
 * not innermost open, events out of order, a weight below 0), -ENODATA (the text ends early),
 * -EOVERFLOW (JSON nested over HS_JSON_MAX_DEPTH, a string or number over its cap, a stack over
 * HS_SPEEDSCOPE_MAX_DEPTH, a weight over 2^62 in its unit), -EOPNOTSUPP (a profile type or
 * unit that is not speedscope's). On error *ret is untouched and err (may be NULL) holds the
 * byte offset and a one-line message. */
int hs_speedscope_read(const void *buf, size_t len, uint64_t input_bytes, struct hs_profile **ret,
		       struct hs_error *err);

/* Whether buf (the first len bytes of an input) looks like a speedscope file: a JSON object that
 * names speedscope's schema, or has "profiles" and "shared". */
bool hs_speedscope_sniff(const void *buf, size_t len);

#endif
