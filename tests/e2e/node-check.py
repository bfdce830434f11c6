"""Checks a folded profile (written with --lines) of tests/workloads/node/hot.js: its JavaScript
frames.

usage: node-check.py FILE.folded [--moving]
Prints one line of figures, and exits 1 with one line per failed property:
  1. of the samples whose innermost hot.js function is fib, at least 95% carry the exact chain of
     hot.js functions from the first one (the module's body, or main resumed by the event loop)
     down, above node::Start;
  2. no sample is complete-but-wrong: a stack with no placeholder frame ("[...]") whose hot.js
     functions do not follow the workload's call tree, or that does not start at node::Start;
  3. the cold function (coldWalk's coldLoop, new each round) is named in some samples.
--moving: the collector moves objects all the time (node --stress-compaction): what it moved
before it was named is [unknown javascript], so only 2 (and that fib was sampled) is checked.
"""
import re
import sys

MODULE = "<module>"
FIB = "fib"
# caller -> callees, among hot.js's own functions (library frames between them are skipped)
EDGES = {
    MODULE: {"main"},
    "main": {"work", "ticker"},
    "work": {"fib", "shapes", "coldWalk", "Square", "Shape"},
    "Square": {"Shape"},
    "fib": {"fib"},
    "ticker": {"fib"},
    "shapes": {"byArea"},
    "byArea": {"area"},
    "area": {"square"},
    "coldWalk": {"coldLoop"},
}
FIRST = {MODULE, "main", "ticker"}  # an async function resumes from the event loop
SUFFIX = re.compile(r"_\[[0-9a-z]\]$")


def parse(frame):
    """(function, file) of a frame written as function:file:line."""
    f = SUFFIX.sub("", frame)
    m = re.match(r"^(.*?):(/[^:]*|node:[^:]*|file:[^:]*|):?(\d*)$", f)
    if not m:
        return f, ""
    return m.group(1), m.group(2)


def hot_name(frame):
    fn, file = parse(frame)
    if file.endswith("/hot.js"):
        return MODULE if fn == "<anonymous>" else fn
    if fn == "coldLoop":
        return fn  # coldWalk's, from eval: its script has no name
    known = set(EDGES) | {c for cs in EDGES.values() for c in cs}
    if not file and fn in known and fn != MODULE and re.search(r"_\[[0-9a-z]\]$", frame):
        return fn  # a frame whose line is not known is written without its file
    return None


def main():
    stacks = []
    for line in open(sys.argv[1], encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        stacks.append((st.split(";"), int(n)))
    fib_total = fib_whole = wrong = total = cold = 0
    worst = {}
    for frames, n in stacks:
        total += n
        idx = [i for i, f in enumerate(frames) if hot_name(f)]
        if not idx:
            continue
        chain = [hot_name(frames[i]) for i in idx]
        placeholder = any(f.startswith("[") for f in frames)
        base = any(f.startswith("node::Start(") for f in frames[:idx[0]])
        follows = chain[0] in FIRST and all(b in EDGES.get(a, ()) for a, b in zip(chain, chain[1:]))
        whole = follows and base and not placeholder
        if "coldLoop" in chain:
            cold += n
        if chain[-1] == FIB:
            fib_total += n
            fib_whole += n if whole else 0
            if not whole:
                worst[";".join(frames)] = worst.get(";".join(frames), 0) + n
        if not placeholder and not whole:
            wrong += n
            worst["WRONG " + ";".join(frames)] = worst.get("WRONG " + ";".join(frames), 0) + n
    share = 100.0 * fib_whole / fib_total if fib_total else 0.0
    print("node-check: fib leaf %d of %d whole (%.1f%%); complete-but-wrong %d of %d; cold %d"
          % (fib_whole, fib_total, share, wrong, total, cold))
    errors = []
    moving = "--moving" in sys.argv
    if fib_total < 50:
        errors.append("only %d samples with fib innermost" % fib_total)
    elif share < 95 and not moving:
        errors.append("only %.1f%% of fib's samples carry the whole chain" % share)
    if wrong:
        errors.append("%d samples complete but wrong" % wrong)
    if not cold and not moving:
        errors.append("the cold function is never named")
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        for st, n in sorted(worst.items(), key=lambda kv: (not kv[0].startswith("WRONG"), -kv[1]))[:4]:
            print("  %d %s" % (n, st[-900:]), file=sys.stderr)
        sys.exit(1)


main()
