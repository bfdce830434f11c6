/* Text escaping for the writers that embed names in XML, HTML and JSON. Names come from symbol
 * tables and input files that promise no encoding, and one byte that is not UTF-8 (or not
 * allowed where it lands) would make a whole document unreadable, so those become U+FFFD. */
#include "writers.h"

#include <stdio.h>

size_t hs_utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void hs_xml_add(struct hs_strbuf *sb, const char *s, size_t maxchars)
{
	for (size_t n = 0; *s && n < maxchars; n++) {
		uint32_t cp;
		size_t k = hs_utf8_next((const unsigned char *)s, &cp);

		if (!k || cp == 0xfffe || cp == 0xffff || (cp < 0x20 && cp != '\t')) {
			hs_strbuf_adds(sb, cp == '\n' || cp == '\r' ? " " : "\xef\xbf\xbd");
			s += k ? k : 1;
			continue;
		}
		switch (cp) {
		case '&': hs_strbuf_adds(sb, "&amp;"); break;
		case '<': hs_strbuf_adds(sb, "&lt;"); break;
		case '>': hs_strbuf_adds(sb, "&gt;"); break;
		case '"': hs_strbuf_adds(sb, "&quot;"); break;
		case '\'': hs_strbuf_adds(sb, "&apos;"); break;
		default: hs_strbuf_add(sb, s, k);
		}
		s += k;
	}
}

void hs_json_add(struct hs_strbuf *sb, const char *s)
{
	hs_strbuf_addc(sb, '"');
	while (*s) {
		uint32_t cp;
		size_t k = hs_utf8_next((const unsigned char *)s, &cp);

		if (!k) {
			hs_strbuf_adds(sb, "\\ufffd");
			s++;
			continue;
		}
		if (cp == '"' || cp == '\\') {
			hs_strbuf_addc(sb, '\\');
			hs_strbuf_addc(sb, (char)cp);
		} else if (cp < 0x20 || cp == '<' || cp == 0x2028 || cp == 0x2029) {
			/* U+2028 and U+2029 end a line in older JavaScript */
			hs_strbuf_addf(sb, "\\u%04x", (unsigned)cp);
		} else {
			hs_strbuf_add(sb, s, k);
		}
		s += k;
	}
	hs_strbuf_addc(sb, '"');
}
