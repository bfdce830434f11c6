/* perf maps, /tmp/perf-PID.map: one line per piece of JIT code, "START SIZE name" with START and
 * SIZE in hexadecimal, bare (V8, most runtimes) or 0x-prefixed (HotSpot's Compiler.perfmap). The
 * name is the rest of the line and may hold spaces. A bounded line parser; prints nothing. */
#ifndef HS_PERF_MAP_H
#define HS_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Names longer than this are cut. */
#define HS_PERF_MAP_MAX_NAME 4096

struct hs_perf_map_entry {
	uint64_t start, size; /* size > 0, start + size does not overflow */
	const char *name;     /* into the line, not NUL-terminated: name_len bytes (may be 0) */
	size_t name_len;
	bool name_cut;        /* the name was longer than HS_PERF_MAP_MAX_NAME */
};

/* Parses one line of len bytes (without its newline; a trailing '\r' is ignored). Returns true
 * with *ret set for an entry; false for anything else (blank, malformed, an empty range, a range
 * past the end of the address space), which a reader skips. */
bool hs_perf_map_parse_line(const char *line, size_t len, struct hs_perf_map_entry *ret);

#endif
