/* Values as people read them: a sum of nanoseconds (off-CPU and wall time, Go's cpu, task-clock
 * periods) as "1.15 s" or "89.4 ms", with three significant digits; counts as they are. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "writers.h"

int64_t hs_unit_ns(const char *unit)
{
	static const struct {
		const char *name;
		int64_t ns;
	} units[] = {
		{"nanoseconds", 1},        {"ns", 1},       {"microseconds", 1000},  {"us", 1000},
		{"milliseconds", 1000000}, {"ms", 1000000}, {"seconds", 1000000000}, {"s", 1000000000},
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++)
		if (unit && !strcmp(unit, units[i].name))
			return units[i].ns;
	return 0;
}

const char *hs_value_fmt(char buf[HS_VALUE_BUF], int64_t v, const char *unit)
{
	static const char *const names[] = {"ns", "us", "ms", "s"};
	int64_t scale = hs_unit_ns(unit);
	double x, m;
	size_t u = 0;

	if (!scale) {
		snprintf(buf, HS_VALUE_BUF, "%lld", (long long)v);
		return buf;
	}
	x = (double)v * (double)scale;
	if (v == 0 || (scale == 1 && v > -1000 && v < 1000)) {
		snprintf(buf, HS_VALUE_BUF, "%lld ns", (long long)v * scale);
		return buf;
	}
	/* the unit where the value has one to three digits before the point, once rounded */
	for (m = x < 0 ? -x : x; u + 1 < HS_ARRAY_SIZE(names) && m >= 999.5; u++) {
		x /= 1000;
		m /= 1000;
	}
	snprintf(buf, HS_VALUE_BUF, m >= 99.95 ? "%.0f %s" : m >= 9.995 ? "%.1f %s" : "%.2f %s", x, names[u]);
	return buf;
}

void hs_value_xml_add(struct hs_strbuf *sb, int64_t v, const char *unit)
{
	char buf[HS_VALUE_BUF];

	hs_strbuf_adds(sb, hs_value_fmt(buf, v, unit));
	if (!hs_unit_ns(unit)) {
		hs_strbuf_addc(sb, ' ');
		hs_xml_add(sb, unit, SIZE_MAX);
	}
}

const char *hs_value_total_text(const struct hs_profile *p, uint32_t vi, struct hs_strbuf *sb)
{
	int64_t n = p->types.n ? hs_profile_total(p, vi) : (int64_t)p->samples.n;
	const char *type = p->types.n ? hs_profile_str(p, p->types.v[vi].type) : "";
	const char *unit = p->types.n ? hs_profile_str(p, p->types.v[vi].unit) : "";
	char buf[HS_VALUE_BUF], digits[24];
	uint64_t mag = n < 0 ? -(uint64_t)n : (uint64_t)n;
	size_t len = (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)mag);

	hs_strbuf_reset(sb);
	if (hs_unit_ns(unit)) {
		hs_strbuf_addf(sb, "%s %s", hs_value_fmt(buf, n, unit), *type ? type : "time");
		return hs_strbuf_str(sb);
	}
	if (n < 0)
		hs_strbuf_addc(sb, '-');
	for (size_t i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			hs_strbuf_addc(sb, ',');
		hs_strbuf_addc(sb, digits[i]);
	}
	if (!*type || !strcmp(type, "samples"))
		hs_strbuf_adds(sb, n == 1 ? " sample" : " samples");
	else
		hs_strbuf_addf(sb, " %s", type);
	if (*unit && strcmp(unit, "count"))
		hs_strbuf_addf(sb, " (%s)", unit);
	return hs_strbuf_str(sb);
}
