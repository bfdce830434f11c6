/* What record and top settle of what to sample (-p, -t, -a, -C, a command) and how (-F, -e,
 * -g) once their options are read, and what they say when it does not go. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record-print.h"
#include "serve/serve.h"

void cli_stack_size_error(const char *arg)
{
	cli_error("invalid stack copy size '%s' (expected a number from %lu to %lu)", arg,
		  (unsigned long)HS_MIN_STACK_BYTES, (unsigned long)HS_MAX_STACK_BYTES);
}

int cli_sampling_settle(struct hs_record_args *s)
{
	struct hs_record_opts *ro = &s->ro;
	struct hs_error err;
	int rc = hs_event_lookup(s->event, &s->tracepoint, &ro->event, &err);

	if (rc == -ESRCH) {
		cli_error("unknown event '%s' (see 'hotstack record -e list')", s->event);
		return 2;
	} else if (rc) {
		cli_tracepoint_error(&err, s->event);
		return rc == -EINVAL || rc == -ENOENT ? 2 : 1;
	}
	rc = hs_callgraph_parse(s->cg, &s->cgo);
	if (rc == -ERANGE) {
		cli_stack_size_error(s->cg + 6); /* dwarf,BYTES */
		return 2;
	} else if (rc) {
		cli_error("unknown call-graph mode '%s' (auto, dwarf[,BYTES], fp, lbr, none)", s->cg);
		return 2;
	}
	ro->callgraph = s->cgo.callgraph;
	ro->lbr_repair = s->cgo.lbr_repair;
	ro->stack_bytes = s->cgo.stack_bytes;
	ro->pids = s->pids.v;
	ro->npids = s->pids.n;
	ro->tids = s->tids.v;
	ro->ntids = s->tids.n;
	return -1;
}

/* --serve's argument, checked; 0, or -1 after saying what is wrong */
int cli_serve_arg(const char *arg, const char **ret)
{
	const char *w = hs_serve_check(arg);

	if (w) {
		cli_error("invalid --serve '%s': %s", arg, w);
		return -1;
	}
	*ret = arg;
	return 0;
}
