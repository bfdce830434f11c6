/* The options record and top share: what to sample (-p, -t, -a, -C, a command) and how (-F,
 * -e, -g), spelt as perf spells them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record-print.h"
#include "serve/serve.h"

int cli_sampling_option(int c, char *arg, char **argv, struct cli_sampling *s, struct hs_record_opts *ro)
{
	unsigned long v;

	switch (c) {
	case 'p':
	case 't':
		if (hs_record_pids_add(c == 'p' ? &s->pids : &s->tids, arg)) {
			cli_error("invalid %s id list '%s'", c == 'p' ? "process" : "thread", arg);
			return -1;
		}
		return 1;
	case 'C': /* perf's -C is system-wide, on those CPUs */
	case 'a':
		ro->cpu_list = c == 'C' ? arg : ro->cpu_list;
		ro->all_cpus = true;
		return 1;
	case 'F':
		if (cli_parse_ulong(arg, "frequency", 1, 100000, &v))
			return -1;
		ro->freq = (uint32_t)v;
		return 1;
	case 'e':
		s->event = arg;
		return 1;
	case 'g': /* perf's -g takes no value: alone, it is the default */
		s->cg = hs_callgraph_getopt(argv, &optind, arg) ?: s->cg;
		return 1;
	}
	return 0;
}

void cli_stack_size_error(const char *arg)
{
	cli_error("invalid stack copy size '%s' (expected a number from %lu to %lu)", arg,
		  (unsigned long)HS_MIN_STACK_BYTES, (unsigned long)HS_MAX_STACK_BYTES);
}

int cli_sampling_settle(struct cli_sampling *s, struct hs_record_opts *ro)
{
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

void cli_sampling_release(struct cli_sampling *s)
{
	hs_vec_free(&s->pids);
	hs_vec_free(&s->tids);
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
