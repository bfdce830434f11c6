#!/usr/bin/env python3
"""Fails when two source files of a stage call each other, directly or around a loop.

docs/architecture.md: no two files call each other; where two would, the shared part moves to
one of them or below both. Reads the stage libraries given (`nm -A`), links each undefined
symbol of an object to the object of the same library that defines it, and prints every group of
files that reach each other. Calls between stages are the link check's (stage-check-*)."""
import collections
import subprocess
import sys


def objects(lib):
    defs, uses = {}, collections.defaultdict(set)
    out = subprocess.run(['nm', '-A', lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        where, _, rest = line.rpartition(':')
        obj = where.split(':')[-1]
        parts = rest.split()
        if len(parts) == 3 and parts[1] in 'TDBR':
            defs[parts[2]] = obj
        elif len(parts) == 2 and parts[0] == 'U':
            uses[obj].add(parts[1])
    graph = collections.defaultdict(set)
    for obj, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != obj:
                graph[obj].add(defs[s])
    return graph


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


bad = 0
for lib in sys.argv[1:]:
    for comp in cycles(objects(lib)):
        # objects are named after their sources: .../src_STAGE_NAME.c.o
        names = [c.rsplit('/', 1)[-1].split('_', 2)[-1][:-2] for c in comp]
        print('{}: these files call each other: {}'.format(lib.rsplit('/', 1)[-1], ', '.join(names)))
        bad += 1
sys.exit(1 if bad else 0)
