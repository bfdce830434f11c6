/* Words as people mistype and write them: the edit distance behind "did you mean", and
 * durations with their units. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

size_t hs_edit_distance(const char *a, const char *b)
{
	size_t la = HS_MIN(strlen(a), (size_t)HS_EDIT_MAX), lb = HS_MIN(strlen(b), (size_t)HS_EDIT_MAX);
	size_t row[HS_EDIT_MAX + 1];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			row[j] = HS_MIN(sub, HS_MIN(up, row[j - 1]) + 1);
			diag = up;
		}
	}
	return row[lb];
}

const char *hs_closest_word(const char *word, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, lw = strlen(word);

	for (size_t i = 0; i < n; i++) {
		size_t d = hs_edit_distance(word, words[i]);
		if (d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	/* git's rule of thumb: a typo is a few edits, never most of the word */
	return best && best_d <= 2 && best_d < lw ? best : NULL;
}

int hs_duration_parse(const char *arg, double unit_s, double *ret_s)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1},    {"sec", 1},
		     {"m", 60},    {"min", 60},   {"h", 3600},  {"d", 86400}};
	char *end;
	double v;

	if (!isdigit((unsigned char)arg[0]) && arg[0] != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!*end) {
		*ret_s = v * unit_s;
		return 0;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit)) {
			*ret_s = v * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}
