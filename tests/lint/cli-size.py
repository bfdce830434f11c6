#!/usr/bin/env python3
"""Fails when src/cli/ holds 2,000 lines or more (every file of it, as `wc -l src/cli/*` counts).

The command line prints, exits, keeps the command table and turns errors into messages; what
else it would grow into belongs to the layer that owns it (docs/architecture.md): option tables
and their values beside what they set, run loops in src/live or src/top. Prints the count of
each file when over."""
import os
import sys

LIMIT = 2000

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
cli = os.path.join(root, 'src', 'cli')
counts = {}
for name in sorted(os.listdir(cli)):
    path = os.path.join(cli, name)
    if os.path.isfile(path):
        with open(path, 'rb') as f:
            counts[name] = f.read().count(b'\n')
total = sum(counts.values())
if total >= LIMIT:
    for name, n in counts.items():
        print('{:6} src/cli/{}'.format(n, name))
    print('src/cli/ has {} lines, over its bound of {}: move what is not the command line\'s job to '
          'the layer that owns it'.format(total, LIMIT - 1))
    sys.exit(1)
