/* OTLP over gRPC: see grpc.h. */
#include "push/grpc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "output/otlp.h"
#include "util/error.h"
#include "util/util.h"

#define EXPORT_METHOD "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define MAX_HEADERS 8

static struct {
	void (*init)(void);
	grpc_channel_credentials *(*insecure_credentials_create)(void);
	grpc_channel_credentials *(*ssl_credentials_create)(const char *, grpc_ssl_pem_key_cert_pair *,
							     const verify_peer_options *, void *);
	void (*channel_credentials_release)(grpc_channel_credentials *);
	grpc_channel *(*channel_create)(const char *, grpc_channel_credentials *, const grpc_channel_args *);
	void (*channel_destroy)(grpc_channel *);
	grpc_completion_queue *(*cq_create_for_next)(void *);
	grpc_event (*cq_next)(grpc_completion_queue *, gpr_timespec, void *);
	void (*cq_shutdown)(grpc_completion_queue *);
	void (*cq_destroy)(grpc_completion_queue *);
	grpc_call *(*channel_create_call)(grpc_channel *, grpc_call *, uint32_t, grpc_completion_queue *, grpc_slice,
					  const grpc_slice *, gpr_timespec, void *);
	grpc_call_error (*call_start_batch)(grpc_call *, const grpc_op *, size_t, void *, void *);
	void (*call_unref)(grpc_call *);
	void (*metadata_array_init)(grpc_metadata_array *);
	void (*metadata_array_destroy)(grpc_metadata_array *);
	grpc_byte_buffer *(*raw_byte_buffer_create)(grpc_slice *, size_t);
	void (*byte_buffer_destroy)(grpc_byte_buffer *);
	grpc_slice (*slice_from_copied_buffer)(const char *, size_t);
	void (*slice_unref)(grpc_slice);
	gpr_timespec (*now)(gpr_clock_type);
	gpr_timespec (*time_add)(gpr_timespec, gpr_timespec);
	gpr_timespec (*time_from_millis)(int64_t, gpr_clock_type);
	gpr_timespec (*inf_future)(gpr_clock_type);
} g;

int hs_grpc_open(struct hs_error *err)
{
	static const char *const names[] = {
		"grpc_init", "grpc_insecure_credentials_create", "grpc_ssl_credentials_create",
		"grpc_channel_credentials_release", "grpc_channel_create", "grpc_channel_destroy",
		"grpc_completion_queue_create_for_next", "grpc_completion_queue_next", "grpc_completion_queue_shutdown",
		"grpc_completion_queue_destroy", "grpc_channel_create_call", "grpc_call_start_batch", "grpc_call_unref",
		"grpc_metadata_array_init", "grpc_metadata_array_destroy", "grpc_raw_byte_buffer_create",
		"grpc_byte_buffer_destroy", "grpc_slice_from_copied_buffer", "grpc_slice_unref", "gpr_now",
		"gpr_time_add", "gpr_time_from_millis", "gpr_inf_future",
	};
	int rc;

	_Static_assert(sizeof(g) == sizeof(names) / sizeof(names[0]) * sizeof(void *), "one name per function");
	if (g.init)
		return 0;
	if ((rc = hs_dl_open("libgrpc.so.29", "libgrpc (Debian's libgrpc29)", names, (void **)&g, HS_ARRAY_SIZE(names),
			     err)))
		return rc;
	g.init();
	return 0;
}

static grpc_slice slice(const char *s, size_t n)
{
	return g.slice_from_copied_buffer(s, n);
}

static enum hs_grpc_result judge(grpc_status_code st)
{
	switch (st) {
	case GRPC_STATUS_OK: return HS_GRPC_OK;
	case GRPC_STATUS_CANCELLED:
	case GRPC_STATUS_DEADLINE_EXCEEDED:
	case GRPC_STATUS_RESOURCE_EXHAUSTED:
	case GRPC_STATUS_ABORTED:
	case GRPC_STATUS_OUT_OF_RANGE:
	case GRPC_STATUS_UNAVAILABLE:
	case GRPC_STATUS_DATA_LOSS: return HS_GRPC_RETRY;
	default: return HS_GRPC_REFUSED;
	}
}

enum hs_grpc_result hs_grpc_export(const char *target, int tls, const uint8_t *msg, size_t len,
				   const char *const *headers, size_t n, long timeout_ms, char *why, size_t whycap)
{
	grpc_arg arg = {GRPC_ARG_INTEGER, (char *)GRPC_COMPRESSION_CHANNEL_DEFAULT_ALGORITHM, {.integer = GRPC_COMPRESS_GZIP}};
	grpc_channel_args args = {1, &arg};
	grpc_channel_credentials *creds = tls ? g.ssl_credentials_create(NULL, NULL, NULL, NULL)
					      : g.insecure_credentials_create();
	grpc_channel *ch = g.channel_create(target, creds, &args);
	grpc_completion_queue *cq = g.cq_create_for_next(NULL);
	gpr_timespec deadline = g.time_add(g.now(GPR_CLOCK_MONOTONIC), g.time_from_millis(timeout_ms, GPR_TIMESPAN));
	grpc_slice method = slice(EXPORT_METHOD, strlen(EXPORT_METHOD)), details = {0}, body;
	grpc_metadata md[MAX_HEADERS + 1];
	grpc_metadata_array got_initial, got_trailing;
	grpc_byte_buffer *out, *answer = NULL;
	grpc_status_code status = GRPC_STATUS_UNKNOWN;
	grpc_op ops[6];
	grpc_call *call;
	grpc_event ev;
	size_t nmd = 0;
	enum hs_grpc_result r;

	memset(md, 0, sizeof(md));
	md[nmd].key = slice("otlp-profiles-development-version", 33);
	md[nmd++].value = slice(HS_OTLP_DEV_VERSION, strlen(HS_OTLP_DEV_VERSION));
	for (size_t i = 0; i < n && nmd < HS_ARRAY_SIZE(md); i++) {
		const char *colon = strchr(headers[i], ':');
		const char *v = colon ? colon + 1 + strspn(colon + 1, " ") : NULL;
		if (!colon)
			continue;
		char key[64];
		size_t k = HS_MIN((size_t)(colon - headers[i]), sizeof(key));
		for (size_t j = 0; j < k; j++) /* gRPC's metadata keys are lower case */
			key[j] = (char)(headers[i][j] >= 'A' && headers[i][j] <= 'Z' ? headers[i][j] + 32 : headers[i][j]);
		md[nmd].key = slice(key, k);
		md[nmd++].value = slice(v, strlen(v));
	}
	body = slice((const char *)msg, len);
	out = g.raw_byte_buffer_create(&body, 1);
	g.slice_unref(body); /* the buffer holds its own reference */
	g.metadata_array_init(&got_initial);
	g.metadata_array_init(&got_trailing);
	call = g.channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL, deadline, NULL);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[0].data.send_initial_metadata.count = nmd;
	ops[0].data.send_initial_metadata.metadata = md;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = out;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &got_initial;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &answer;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &got_trailing;
	ops[5].data.recv_status_on_client.status = &status;
	ops[5].data.recv_status_on_client.status_details = &details;
	if (!call || g.call_start_batch(call, ops, HS_ARRAY_SIZE(ops), ops, NULL) != GRPC_CALL_OK) {
		snprintf(why, whycap, "cannot start a gRPC call");
		r = HS_GRPC_RETRY;
	} else {
		/* the call ends by its deadline at the latest */
		ev = g.cq_next(cq, g.inf_future(GPR_CLOCK_MONOTONIC), NULL);
		r = ev.type == GRPC_OP_COMPLETE && ev.success ? judge(status) : HS_GRPC_RETRY;
		if (status == GRPC_STATUS_OK)
			snprintf(why, whycap, "gRPC OK");
		else
			snprintf(why, whycap, "gRPC status %d%s%.*s", (int)status, GRPC_SLICE_LENGTH(details) ? ": " : "",
				 (int)HS_MIN(GRPC_SLICE_LENGTH(details), 200), (const char *)GRPC_SLICE_START_PTR(details));
		for (char *c = why; *c; c++) /* the store's words, on one line */
			if ((unsigned char)*c < 0x20)
				*c = ' ';
	}
	if (call)
		g.call_unref(call);
	g.cq_shutdown(cq);
	while (g.cq_next(cq, g.inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	g.cq_destroy(cq);
	g.channel_destroy(ch);
	g.channel_credentials_release(creds);
	g.byte_buffer_destroy(out);
	if (answer)
		g.byte_buffer_destroy(answer);
	g.metadata_array_destroy(&got_initial);
	g.metadata_array_destroy(&got_trailing);
	for (size_t i = 0; i < nmd; i++) {
		g.slice_unref(md[i].key);
		g.slice_unref(md[i].value);
	}
	g.slice_unref(method);
	g.slice_unref(details);
	return r;
}
