/* /proc/PID/maps text (proc(5)), read and parsed from a buffer: the mappings of processes that
 * were running before a recording started (the model takes them: hs_model_add_proc_maps()), and
 * the stacks of their threads. Knows nothing of the model. */
#ifndef HS_PROC_MAPS_H
#define HS_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps on what the text may ask for: its size, and the length of one mapping's name (the
 * kernel prints paths of at most PATH_MAX bytes). */
#define HS_PROC_MAPS_MAX_SIZE ((size_t)256 << 20)
#define HS_PROC_MAPS_MAX_PATH 4096

/* One line: "START-END PERMS OFFSET MAJ:MIN INODE [NAME]". */
struct hs_proc_map {
	uint64_t start, end; /* [start, end), end > start */
	uint64_t pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot;    /* PROT_READ, PROT_WRITE, PROT_EXEC of "rwxp" */
	bool shared;      /* 's' rather than 'p' */
	bool deleted;     /* the name ended in the kernel's " (deleted)", removed from name */
	const char *name; /* borrowed from the line, not NUL-terminated; empty for anonymous memory */
	size_t name_len;
};

/* Parses one line of n bytes (without its '\n'). Returns false, *ret untouched, when the line
 * is not a mapping: fields missing, a number over 64 bits, end <= start, a name over
 * HS_PROC_MAPS_MAX_PATH. */
bool hs_proc_maps_parse_line(const char *line, size_t n, struct hs_proc_map *ret);

/* Reads /proc/PID/maps whole into *ret (NUL-terminated, owned by the caller: free()) and its
 * length into *ret_len. Returns 0, -ESRCH (no such process), -EOVERFLOW (over
 * HS_PROC_MAPS_MAX_SIZE), or another negative errno of open or read. */
int hs_proc_maps_read(int32_t pid, char **ret, size_t *ret_len);

#endif
