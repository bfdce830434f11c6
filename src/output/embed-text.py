#!/usr/bin/env python3
# Turns a text file into a C source defining `const char NAME[]` with its bytes and a final NUL,
# so svg.c and html.c can carry svg.js and html.js. A byte array rather than a string literal:
# no escaping rules and no limit on literal length. Usage: embed-text.py NAME INPUT OUTPUT
import sys


def main():
    name, src, dst = sys.argv[1:4]
    with open(src, 'rb') as f:
        data = f.read()
    # The text goes inside <![CDATA[ ... ]]> or an HTML <script>, which these would end early.
    if b']]>' in data:
        sys.exit('%s: contains "]]>"' % src)
    if b'</script' in data.lower():
        sys.exit('%s: contains "</script"' % src)
    lines = ['/* Generated from %s by embed-text.py; do not edit. */' % src.rsplit('/', 1)[-1],
             'extern const char %s[];' % name,
             'const char %s[] = {' % name]
    data += b'\0'
    for i in range(0, len(data), 16):
        lines.append('\t' + ', '.join('0x%02x' % b for b in data[i:i + 16]) + ',')
    lines.append('};')
    with open(dst, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
