/* The perf map line parser. The format is perf's (tools/perf/Documentation/jit-interface.txt):
 * written by the runtime, so it is read as untrusted text: numbers at most 16 hex digits, names
 * cut at a cap. */
#include "perf-map.h"

#include "util/util.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* A hexadecimal number, optionally 0x-prefixed, of 1 to 16 digits, ended by a blank. */
static bool hex_field(const char *s, size_t len, size_t *pos, uint64_t *ret)
{
	size_t i = *pos, digits = 0;
	uint64_t v = 0;

	while (i < len && is_space(s[i]))
		i++;
	if (len - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	for (; i < len && !is_space(s[i]); i++, digits++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0 || digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || i == len)
		return false; /* a name must follow */
	*pos = i;
	*ret = v;
	return true;
}

bool hs_perf_map_parse_line(const char *line, size_t len, struct hs_perf_map_entry *ret)
{
	size_t pos = 0;
	uint64_t start, size;

	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (!hex_field(line, len, &pos, &start) || !hex_field(line, len, &pos, &size))
		return false;
	if (!size || start + size < start)
		return false;
	while (pos < len && is_space(line[pos]))
		pos++;
	ret->start = start;
	ret->size = size;
	ret->name = line + pos;
	ret->name_len = HS_MIN(len - pos, (size_t)HS_PERF_MAP_MAX_NAME);
	ret->name_cut = len - pos > HS_PERF_MAP_MAX_NAME;
	return true;
}
