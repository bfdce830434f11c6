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

#endif
