/* On-demand JVM symbols: a running HotSpot JVM (JDK 17 and later) is asked to write its perf
 * map (/tmp/perf-PID.map, the diagnostic command Compiler.perfmap) through its attach mechanism,
 * as jcmd does, with no agent loaded and no restart. Prints nothing. */
#ifndef HS_JVM_H
#define HS_JVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Whether process pid is a HotSpot JVM (it maps libjvm.so). */
bool hs_jvm_is_hotspot(int32_t pid);

/* Asks the JVM pid to write its perf map, waiting for it at most timeout_ms. The HotSpot attach
 * protocol on Linux: the UNIX socket /tmp/.java_pid<NSPID> (in the JVM's mount namespace, NSPID
 * its pid in its own pid namespace) is used when it is there; else it is started by creating
 * .attach_pid<NSPID> in the JVM's working directory or /tmp and sending SIGQUIT, which is done
 * only when the JVM handles SIGQUIT (never with -Xrs, where SIGQUIT would end it) and attach is
 * not disabled (-XX:+DisableAttachMechanism). The JVM accepts only its own effective user (or
 * root) as peer: run as root for a JVM of another user, the exchange happens in a child process
 * with the JVM's user and group. Returns 0 when the JVM says the map was written; else a negative
 * errno with a one-line reason in err: -EOPNOTSUPP (attach disabled, SIGQUIT not handled, a JVM
 * without Compiler.perfmap), -ETIMEDOUT, -EPERM, -ESRCH, -EPROTO (an answer that is not the
 * protocol's). */
int hs_jvm_request_perfmap(int32_t pid, int timeout_ms, struct hs_error *err);

/* What hs_jvm_request_perfmaps() learned of the JVM pid: rc and err as hs_jvm_request_perfmap()
 * returns them (err lives until the call returns). */
typedef void hs_jvm_answer_fn(void *ctx, int32_t pid, int rc, const struct hs_error *err);
/* Asks each HotSpot JVM among pids (processes that are gone or not JVMs are passed over) for its
 * perf map, one after the other, each within a time limit and all within one, and tells
 * answer() what each said. Returns 0; or -ETIMEDOUT when the time for all ran out, -EINTR when
 * SIGINT or SIGTERM is pending, with the number of processes not asked in *left. */
int hs_jvm_request_perfmaps(const int32_t *pids, size_t n, hs_jvm_answer_fn *answer, void *ctx, size_t *left);

/* The asker: a thread that asks the profiled JVMs for their perf maps while a recording runs,
 * so that a JVM that exits before the end (a command) leaves a map that names its code. A JVM is
 * asked as soon as the recording says it has samples in JIT code that nothing names, and again
 * each time more such code is sampled (code compiled since), at most once a second and so that
 * the requests take at most a tenth of the time (each costs the JVM a dump of its code cache).
 * What each JVM answered is kept for the end (hs_jvm_asker_why()). All functions are for one
 * thread, the recording's main thread; the asking happens on the asker's own. */
struct hs_jvm_asker;
struct hs_strbuf;
/* Starts the asker; early false: JVMs are only told apart from other processes while the
 * recording runs, and asked at its end only (hs_jvm_asker_end()). Returns 0 or a negative
 * errno. */
int hs_jvm_asker_new(struct hs_jvm_asker **ret, bool early);
/* The process pid has samples in JIT code, at unnamed different addresses so far that no perf
 * map or jitdump named when they were looked at (a count that only grows; 0 for none yet):
 * asked when it grows and a request is due, if pid is a JVM. */
void hs_jvm_asker_seen(struct hs_jvm_asker *a, int32_t pid, uint64_t unnamed);
/* The frames of JVM pid are named by another reader (Java frames read at sample time): it is
 * never asked, early or at the end, and nothing is said of it. */
void hs_jvm_asker_leave(struct hs_jvm_asker *a, int32_t pid);
/* At the end of the recording, while its targets still run: the request in flight ends (at
 * once when stopped: the recording was ended by SIGINT or SIGTERM), the thread stops, and each
 * JVM still running is asked once more, unless its last answer said that asking is
 * in vain (attach disabled, no Compiler.perfmap, no right) or took all its time. Returns as
 * hs_jvm_request_perfmaps() does. */
int hs_jvm_asker_end(struct hs_jvm_asker *a, bool stopped, size_t *left);
/* After hs_jvm_asker_end(), for a process whose JIT code stays partly unnamed (share: percent
 * of its samples in such code): appends to sb one line (no "\n") that says why and what to do,
 * and returns true, if pid is a JVM the asker knows and did not leave; else false. */
bool hs_jvm_asker_why(const struct hs_jvm_asker *a, int32_t pid, double share, struct hs_strbuf *sb);
/* How many perf maps JVM pid wrote when asked. */
unsigned hs_jvm_asker_written(const struct hs_jvm_asker *a, int32_t pid);
/* Stops the asker (a request in flight given up) and frees it; a may be NULL. */
void hs_jvm_asker_free(struct hs_jvm_asker *a);

#endif
