/* Where to get the debug symbols of a distribution's file that has none: its package as dpkg
 * names it (under usrmerge dpkg knows /lib/... where processes map /usr/lib/...), that package's
 * -dbgsym, the build-id path of its debug file, and a debuginfod server. */
#ifndef HS_DEBUG_ADVICE_H
#define HS_DEBUG_ADVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

struct hs_debug_advice_env {
	const char *dpkg;       /* the dpkg program (run as 'dpkg -S'); NULL: "dpkg" on PATH, "" none */
	const char *os_release; /* NULL: /etc/os-release (which names the distribution) */
	bool debuginfod_set;    /* DEBUGINFOD_URLS is set: no advice to set it */
	int timeout_ms;         /* for dpkg's answer; 0: HS_DPKG_TIMEOUT_MS */
};

/* dpkg -S reads every package's file list: a fraction of a second, several seconds on a busy
 * machine (7 s seen while apt was installing). */
#define HS_DPKG_TIMEOUT_MS 10000

/* The other name of path under usrmerge (/lib, /bin and /sbin are links into /usr): /usr/lib/x
 * for /lib/x, /lib/x for /usr/lib/x (also lib32, lib64, libx32, bin, sbin). Returns false for
 * a path elsewhere or too long for ret (cap bytes). */
bool hs_usrmerge_twin(const char *path, char *ret, size_t cap);
/* /usr/lib/debug/.build-id/xx/yyyy.debug for build_id (lower-case hex); false when build_id is
 * not even-length hex of 4 to 80 digits, or ret (cap bytes) is too small. */
bool hs_build_id_debug_path(const char *build_id, char *ret, size_t cap);
/* Runs 'dpkg -S path twin' (or without the twin) and writes the package that owns either,
 * without its architecture ("liblzma5"), to pkg and the path dpkg knows to known. Returns 0,
 * -ENOENT when dpkg knows neither, -ENOEXEC when there is no dpkg, -ETIMEDOUT when it did not
 * answer in time (it is killed), or another negative errno. */
int hs_dpkg_owner(const struct hs_debug_advice_env *env, const char *path, char *pkg, size_t pkg_cap, char *known,
		  size_t known_cap);
/* Appends to sb the advice for file (a distribution's file, as the process mapped it) with
 * build_id (hex, or NULL): one clause starting ": ", no newline. Runs dpkg (see
 * hs_dpkg_owner()) where there is one. */
void hs_debug_advice(const char *file, const char *build_id, const struct hs_debug_advice_env *env,
		     struct hs_strbuf *sb);

#endif
