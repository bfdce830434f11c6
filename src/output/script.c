/* perf-script-style text of every sample: a header line (command, pid/tid, time, period,
 * event) and one "address symbol+offset (module)" line per frame, leaf first, as `perf script`
 * prints them, so that tools reading perf script text (stackcollapse-perf.pl, hotstack collapse)
 * accept it. */
#include <inttypes.h>
#include <string.h>

#include "writers.h"

static const char *event_of(const struct hs_profile *p, const int64_t *v, int64_t *period)
{
	for (size_t t = 1; t < p->types.n; t++) {
		if (v[t]) {
			*period = v[t];
			if (t < p->type_events.n && p->type_events.v[t])
				return hs_profile_str(p, p->type_events.v[t]);
			return hs_profile_str(p, p->types.v[t].type);
		}
	}
	*period = p->types.n ? v[0] : 0;
	return p->types.n ? hs_profile_str(p, p->types.v[0].type) : "samples";
}

int hs_write_script(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	(void)o;
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		const char *comm = hs_profile_str(p, s->comm);
		int64_t period;
		const char *event = event_of(p, hs_profile_sample_values(p, (uint32_t)i), &period);

		hs_outfile_printf(out, "%s %d/%d %" PRIu64 ".%06" PRIu64 ": %" PRId64 " %s:\n", *comm ? comm : ":-1",
				  (int)s->pid, (int)s->tid, s->time / 1000000000, (s->time % 1000000000) / 1000, period,
				  event);
		for (uint32_t li = 0; li < st->nlocs; li++) {
			const struct hs_location *l = &p->locations.v[locs[li]];
			/* Python code has no mapping: its source file stands for one */
			const char *module = hs_profile_str(p, hs_profile_location_module(p, l));
			/* inlined functions first, as perf script prints them, each on its own line */
			for (uint32_t j = 0; j < (l->nlines ? l->nlines : 1); j++) {
				const char *name = l->nlines ? hs_profile_str(p, p->functions.v[p->lines.v[l->line0 + j].function].name)
							     : "[unknown]";
				bool outer = j + 1 >= l->nlines;
				if (outer && l->sym_off)
					hs_outfile_printf(out, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", l->address, name, l->sym_off,
							  *module ? module : "[unknown]");
				else
					hs_outfile_printf(out, "\t%16" PRIx64 " %s (%s)%s\n", l->address, name, *module ? module : "[unknown]",
							  outer ? "" : " (inlined)");
			}
		}
		hs_outfile_puts(out, "\n");
	}
	return out->err ? -out->err : 0;
}
