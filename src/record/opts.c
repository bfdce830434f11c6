/* The values of the options that say what to record and how (record/opts.h). */
#include "record/opts.h"

#include <errno.h>

void hs_record_args_init(struct hs_record_args *a)
{
	*a = (struct hs_record_args){.ro = {.freq = 999, .kernel = true}, .event = "cpu-clock", .cg = "auto"};
}

int hs_record_args_option(struct hs_record_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err)
{
	struct hs_record_opts *ro = &a->ro;
	unsigned long v;

	switch (key) {
	case 'p':
	case 't':
		if (hs_record_pids_add(key == 'p' ? &a->pids : &a->tids, arg))
			return hs_error_set(err, -EINVAL, "invalid %s id list '%s'", key == 'p' ? "process" : "thread",
					    arg);
		return 1;
	case 'C': /* perf's -C is system-wide, on those CPUs */
	case 'a':
		ro->cpu_list = key == 'C' ? arg : ro->cpu_list;
		ro->all_cpus = true;
		return 1;
	case 'F':
		if (hs_option_ulong(arg, "frequency", 1, 100000, &v, err))
			return -EINVAL;
		ro->freq = (uint32_t)v;
		return 1;
	case 'e':
		a->event = arg;
		return 1;
	case 'g': /* perf's -g takes no value: alone, it is the default */
		a->cg = hs_callgraph_getopt(argv, optind, arg) ?: a->cg;
		return 1;
	case 'd':
		if (hs_record_duration_parse(arg, &ro->duration))
			return hs_error_set(err, -EINVAL, "invalid duration '%s' (seconds, or with a unit: 500ms, 2s, 5m, 1h)",
					    arg);
		return 1;
	case 'c':
		if (hs_option_ulong(arg, "count", 1, ~0UL, &v, err))
			return -EINVAL;
		ro->period = v;
		return 1;
	case 'm':
		if (hs_record_ring_pages_parse(arg, &ro->mmap_pages))
			return hs_error_set(err, -EINVAL, "invalid number of pages '%s' (a power of two from 1 to %lu)",
					    arg, HS_RECORD_MAX_RING_PAGES);
		return 1;
	case HS_REC_MAX_STACK:
		if (hs_option_ulong(arg, "stack depth", 1, 65535, &v, err))
			return -EINVAL;
		ro->max_stack = (uint32_t)v;
		return 1;
	case HS_REC_STACK_SIZE:
	case HS_REC_USER:
		*(key == HS_REC_USER ? &a->user : &a->stack_size) = arg;
		return 1;
	case HS_REC_NO_KERNEL:
	case HS_REC_OFF_CPU:
		*(key == HS_REC_OFF_CPU ? &ro->off_cpu : &ro->kernel) = key == HS_REC_OFF_CPU;
		return 1;
	}
	return 0;
}

void hs_record_args_release(struct hs_record_args *a)
{
	hs_vec_free(&a->pids);
	hs_vec_free(&a->tids);
}
