/* The words the writers' options take: palette names, report sort keys and trees, folded roots. They live beside
 * the enums they name so that a new palette or key is added in one place. */
#include <errno.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"

static const struct {
	const char *name;
	enum hs_palette p;
} palettes[] = {
	{"kind", HS_PALETTE_KIND}, {"hot", HS_PALETTE_HOT},   {"mem", HS_PALETTE_MEM},
	{"io", HS_PALETTE_IO},     {"java", HS_PALETTE_JAVA}, {"js", HS_PALETTE_JS},
};

int hs_palette_from_name(const char *name, enum hs_palette *ret)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(palettes); i++) {
		if (!strcmp(name, palettes[i].name)) {
			*ret = palettes[i].p;
			return 0;
		}
	}
	return -EINVAL;
}

int hs_sort_parse(const char *keys, uint8_t ret[HS_SORT_MAX])
{
	static const struct {
		const char *name;
		enum hs_sort_key k;
	} names[] = {
		{"comm", HS_SORT_COMM}, {"pid", HS_SORT_PID}, {"tid", HS_SORT_TID},
		{"dso", HS_SORT_DSO},   {"sym", HS_SORT_SYM},
	};
	uint8_t sort[HS_SORT_MAX] = {0};
	const char *p = keys;
	size_t n = 0;

	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < HS_ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
				break;
		if (i == HS_ARRAY_SIZE(names) || n == HS_SORT_MAX || memchr(sort, names[i].k, n))
			return -EINVAL;
		sort[n++] = (uint8_t)names[i].k;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!n)
		return -ENODATA;
	memcpy(ret, sort, sizeof(sort));
	return 0;
}

int hs_tree_from_name(const char *name, enum hs_tree *ret)
{
	if (strcmp(name, "callee") && strcmp(name, "caller"))
		return -EINVAL;
	*ret = strcmp(name, "callee") ? HS_TREE_CALLER : HS_TREE_CALLEE;
	return 0;
}

int hs_root_set(struct hs_output_opts *o, const char *name)
{
	if (strcmp(name, "pid") && strcmp(name, "tid") && strcmp(name, "comm"))
		return -EINVAL;
	o->root_pid = !strcmp(name, "pid");
	o->root_tid = !strcmp(name, "tid");
	return 0;
}
