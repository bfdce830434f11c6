/* The OpenTelemetry profiles signal (OTLP, opentelemetry-proto's profiles/v1development): a
 * profile as an ExportProfilesServiceRequest, the message a collector or a profile store takes at
 * POST /v1development/profiles. One dictionary (mappings, locations, functions, strings,
 * attributes, stacks, each with its zero entry first) is shared by every resource; each resource
 * (a service, or a process) has one scope, "hotstack", holding a profile per sample type of the
 * samples of its processes. Names, files and lines are filled in (hotstack symbolises on the
 * host), every location says its profile.frame.type, every mapping its build-id, every sample
 * its thread.id and thread.name (and process.pid where its resource has several processes).
 * docs/continuous.md, OpenTelemetry. */
#ifndef HS_OUTPUT_OTLP_H
#define HS_OUTPUT_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "format/protobuf.h"
#include "profile/profile.h"

/* The development version of the profiles schema this encoder writes, sent as the
 * OTLP-Profiles-Development-Version header (otlp-profiles-development-version over gRPC) that
 * receivers check before they decode a request */
#define HS_OTLP_DEV_VERSION "1"
#define HS_OTLP_PATH "/v1development/profiles"

/* A resource attribute: a string, or with str NULL an integer */
struct hs_otlp_attr {
	const char *key;
	const char *str;
	int64_t num;
};

struct hs_otlp_resource {
	const struct hs_otlp_attr *attrs; /* service.name, host.name, process.pid, ... */
	size_t nattrs;
	const int32_t *pids; /* the processes whose samples are its; none: every sample no other
	                      * resource takes */
	size_t npids;
};

/* The semantic conventions' profile.frame.type of a frame of kind k, or NULL (hotstack's
 * pseudo-frames: [unknown], stop reasons) */
const char *hs_otlp_frame_type(enum hs_kind k);

/* Appends p as an ExportProfilesServiceRequest, uncompressed, to b: a ResourceProfiles per
 * resource in res[0 .. nres), those without a sample left out. */
void hs_otlp_encode(const struct hs_profile *p, const struct hs_otlp_resource *res, size_t nres, struct hs_pb_buf *b);

#endif
