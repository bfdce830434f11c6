/* record --serve, top --serve: a small HTTP server (libmicrohttpd) of a live view's profiles,
 * read-only:
 *   /                               the HTML flame graph of the window (of everything so far
 *                                   where the view has none), refreshing itself
 *   /debug/pprof/profile?seconds=N  a pprof of the next N seconds (Go's net/http/pprof protocol)
 *   /profile.pb.gz, /folded         everything so far
 * It listens on 127.0.0.1 unless an address is given, bounds the clients it serves at once,
 * and renders on its own threads from snapshots, so that no client can stall the sampling. */
#ifndef HS_SERVE_H
#define HS_SERVE_H

#include <stdint.h>

struct hs_error;
struct hs_view;
struct hs_output_opts;

struct hs_serve_opts {
	const char *listen;              /* [ADDR:]PORT as given to --serve (PORT 0: any free one) */
	struct hs_view *view;            /* what is served; outlives the server */
	const struct hs_output_opts *oo; /* the writers' options (title, ...); outlives the server */
	unsigned refresh;                /* seconds between the page's reloads (0: 5) */
};

struct hs_serve;

/* Checks --serve's argument: NULL when good, else what is wrong (a line). */
const char *hs_serve_check(const char *listen);
/* Starts listening and serving on threads of its own. Returns 0, or a negative errno with err
 * set (the address is taken, cannot be bound, ...). */
int hs_serve_start(struct hs_serve **ret, const struct hs_serve_opts *o, struct hs_error *err);
/* Where it listens, "127.0.0.1:8080" (for a person: "serving on http://..."). */
const char *hs_serve_address(const struct hs_serve *s);
/* Stops listening, ends every connection (waiting readers are answered by hs_view_end() first)
 * and frees s. NULL does nothing. */
void hs_serve_stop(struct hs_serve *s);

#endif
