/* OTLP over gRPC (record --push otlp://HOST:PORT): one unary call of
 * opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export, made with gRPC's
 * own C library (libgrpc.so.29, Debian's libgrpc29), opened when a push starts rather than linked:
 * the framing, HTTP/2 and compression are the library's. docs/continuous.md, OpenTelemetry. */
#ifndef HS_PUSH_GRPC_H
#define HS_PUSH_GRPC_H

#include <stddef.h>
#include <stdint.h>

struct hs_error;

/* Opens libgrpc and starts it (once): 0, or a negative errno with err said */
int hs_grpc_open(struct hs_error *err);

enum hs_grpc_result { HS_GRPC_OK, HS_GRPC_RETRY, HS_GRPC_REFUSED };

/* Calls Export on target (HOST:PORT; TLS with the system's roots where tls) with the request
 * msg[len] (uncompressed; the call compresses it with gzip), the metadata headers[0 .. n)
 * ("key: value", keys in lower case) beside the profiles' development version, and at most
 * timeout_ms for the whole call. The status as the push judges it (OK taken; UNAVAILABLE,
 * RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ABORTED, CANCELLED, OUT_OF_RANGE, DATA_LOSS tried again,
 * OTLP's retryable codes; any other refused), and why, in one line, into why. */
enum hs_grpc_result hs_grpc_export(const char *target, int tls, const uint8_t *msg, size_t len,
				   const char *const *headers, size_t n, long timeout_ms, char *why, size_t whycap);

#endif
