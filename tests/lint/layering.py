#!/usr/bin/env python3
"""Checks the includes of src/ against the stages of the root meson.build.

The build already fails on a call from a stage to one it may not use (each stage's library is
linked alone with the libraries it may use). A header included only for its types or inline
functions links fine, so this reads every #include "STAGE/..." in src/ and fails on one that
names a stage the including file's stage may not use. Prints one line per offence."""
import ast
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
meson = open(os.path.join(root, 'meson.build')).read()
table = re.search(r'^stages = (\[.*?^\])', meson, re.S | re.M)
if not table:
    sys.exit('meson.build: no "stages = [...]" table')
stages = {name: set(uses) for name, uses in ast.literal_eval(table.group(1).replace('\n', ' '))}
# The command line sits above every stage and may use them all.
stages['cli'] = set(stages)

bad = 0
src = os.path.join(root, 'src')
for stage in sorted(stages):
    d = os.path.join(src, stage)
    if not os.path.isdir(d):
        continue
    for dirpath, _, names in os.walk(d):
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            for n, line in enumerate(open(path, errors='replace'), 1):
                m = re.match(r'\s*#\s*include\s+"([a-z0-9_-]+)/', line)
                if m and m.group(1) != stage and m.group(1) in stages and m.group(1) not in stages[stage]:
                    print('{}:{}: {}/ includes {}/, which it may not use'.format(
                        os.path.relpath(path, root), n, stage, m.group(1)))
                    bad += 1
sys.exit(1 if bad else 0)
