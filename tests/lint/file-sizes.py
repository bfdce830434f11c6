#!/usr/bin/env python3
"""Fails when a source file of src/ or include/ is over 900 lines.

A file that long holds more than one job: it is split along them (docs/architecture.md), not
cut by size. Prints one line per file over the limit."""
import os
import sys

LIMIT = 900

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
bad = 0
for top in ('src', 'include'):
    for dirpath, dirs, names in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            with open(path, errors='replace') as f:
                n = sum(1 for _ in f)
            if n > LIMIT:
                print('{}: {} lines, over {}: split it along its jobs'.format(os.path.relpath(path, root), n, LIMIT))
                bad += 1
sys.exit(1 if bad else 0)
