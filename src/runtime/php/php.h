/* PHP as a profiler sees it from outside (docs/php.md): which build a process runs and where its
 * executor globals are (for the frame reader, frames.bpf.c), and the functions its frames run,
 * read from the process's memory and named. PHP 8.2, non-thread-safe, the HYBRID VM; any other
 * version or build is refused in one line. */
#ifndef HS_PHP_H
#define HS_PHP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/interp/interp.h"
#include "runtime/php/php-abi.h"
#include "runtime/proc.h"

/* A process's PHP. */
struct hs_php_proc {
	struct hs_php_proc_info info; /* for the reader: addresses in the process, offsets */
	unsigned major, minor, patch; /* 8, 2, 36 */
	char path[256];               /* the ELF file that holds the engine: php8.2, php-fpm8.2, libphp8.2.so */
};

enum hs_php_found {
	HS_PHP_ABSENT = 0,  /* no PHP engine mapped (yet) */
	HS_PHP_SUPPORTED,   /* *ret describes it */
	HS_PHP_UNSUPPORTED, /* a PHP of another version or build, or whose checks failed: why says
	                      * which, in one line ("php 8.3 is not supported"); "cannot read" when
	                      * that may pass */
};

/* Looks for the PHP engine in process pid (the files of its /proc maps named like PHP's, read
 * through /proc/PID/root) and checks its build from what the file and the process publish: the
 * version and build id strings PHP's binaries carry, the sizes of its global structures, its VM
 * kind. *ret is set only for HS_PHP_SUPPORTED, why only for HS_PHP_UNSUPPORTED. */
enum hs_php_found hs_php_find(int32_t pid, struct hs_php_proc *ret, char *why, size_t whylen);

/* The checks of an ELF file that claims to hold PHP's engine, by its bytes (the file at path,
 * for messages): HS_PHP_SUPPORTED with the version in ret and the executor globals' address in
 * the file in *eg; HS_PHP_ABSENT when it has no executor globals; else HS_PHP_UNSUPPORTED and
 * why. vm_kind: the first 6 bytes of its zend_vm_kind() (the caller reads them from the
 * process, where the file's code is mapped), or NULL to skip that check. */
struct hs_php_file {
	uint64_t eg, vm_kind, execute_ex; /* addresses in the file; 0: absent */
};
enum hs_php_found hs_php_check_elf(Elf *elf, const char *path, struct hs_php_proc *ret, struct hs_php_file *syms,
				   char *why, size_t whylen);

/* Whether a mapped file's name is one PHP's engine can be in (php, php8.2, php-fpm8.2,
 * php-cgi8.2, libphp8.2.so): the cheap test before hs_php_find(). */
bool hs_php_maybe(const char *path);

/* What a native frame with no symbol at vaddr (the file's own address) of the PHP binary at
 * path (of build id build, lower-case hex, or NULL) is to the merge: the VM loop's moved part
 * (loop.c), or the engine's machinery. */
enum hs_ip_native hs_php_unnamed_class(const char *path, const char *build, uint64_t vaddr);
/* The VM loop's moved part of that binary, [*lo, *hi) in its own addresses: true, or false when
 * it has none or cannot be read. Files are remembered by build id, and by path, device and
 * inode. */
bool hs_php_loop_part(const char *path, const char *build, uint64_t *lo, uint64_t *hi);
/* The binary at path in a process, open as fd (through the process's root): remembered, so
 * that it is known by its build id where its path is another file's, or none, here. */
void hs_php_loop_note(int fd, const char *path);

/* Reads the function of frame f (struct hs_ip_lang's code_read): proc is a struct hs_php_proc. */
int hs_php_code_read(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f, struct hs_ip_code *c);

/* What a native frame of function name is to the merge of PHP's frames. */
enum hs_ip_native hs_php_native_class(const char *name);

extern const struct hs_ip_lang hs_php_lang;
struct hs_runtime;
extern const struct hs_runtime hs_php_runtime;

#endif
