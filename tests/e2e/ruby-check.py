"""Checks a folded profile of tests/workloads/calltree.rb: the Ruby frames in it.

usage: ruby-check.py FILE.folded [--internals] [--lines WORKLOAD.rb]
Exits 1 with one line per failed property. With --lines, FILE holds function:file:line frames
(hotstack report --lines) and the lines of the main thread's chain are checked against the
workload's source.
"""
import re
import sys

MAIN = ["<main>", "Tree.run"] + ["Tree#recurse"] * 5 + [
    "Tree#leaf", "Array#map", "block in Tree#leaf", "Zlib::GzipFile.wrap",
    "block (2 levels) in Tree#leaf", "Spinner.spin", "Kernel#loop", "block in Spinner.spin"]
WORKER = ["block in <main>", "Object#worker", "Enumerable#sort_by", "Range#each",
          "block in Object#worker", "Spinner.spin", "Kernel#loop", "block in Spinner.spin"]
LEAF = "block in Spinner.spin"
RUBY_NAME = re.compile(r"(#|^block |^<|^[A-Z]\w*(::\w+)*\.\w)")


def source_lines(path):
    """The line of each frame of MAIN in the workload, found by what the line holds."""
    text = open(path, encoding="utf-8").read().split("\n")

    def at(pattern):
        for i, t in enumerate(text):
            if re.search(pattern, t):
                return i + 1
        raise SystemExit("ruby-check: no line /%s/ in %s" % (pattern, path))

    return ([at(r"^Tree\.run\(4\)"), at(r"new\.recurse\(depth\)")] + [at(r"^\s+recurse\(n - 1\)")] * 4 +
            [at(r"^\s+leaf$"), at(r"\[1\]\.map do"), None, at(r"^\s+Zlib::GzipWriter\.wrap"), None,
             at(r"Spinner\.spin\(\[now"), at(r"^\s+loop do"), None,
             # the block's first instruction is on the line of "loop do", its last on "end"
             set(range(at(r"^\s+loop do"), at(r"^\s+loop do") + 4))])


def main():
    path = sys.argv[1]
    internals = "--internals" in sys.argv
    lines = sys.argv[sys.argv.index("--lines") + 1] if "--lines" in sys.argv else None
    stacks = []
    for line in open(path, encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        stacks.append((st.split(";"), int(n)))
    errors = []

    def name(x):
        """A frame's function, without the :file:line --lines adds."""
        if lines:
            m = re.match(r"^(.*?):[^:;]*:(\d+)$", x)
            if m:
                return m.group(1)
        return x

    def ruby_part(f):
        """The Ruby frames of a stack (those named as Ruby names its functions), in order."""
        return [name(x) for x in f if RUBY_NAME.search(name(x)) or name(x) in MAIN or name(x) in WORKER]

    def leaf_samples(marker):
        return [(f, n) for f, n in stacks if f and name(f[-1]) == LEAF and any(name(x) == marker for x in f)]

    for label, chain, marker in (("main thread", MAIN, "Tree#leaf"), ("second thread", WORKER, "Object#worker")):
        samples = leaf_samples(marker)
        tot = sum(n for _, n in samples)
        if tot < 20:
            errors.append("%s: only %d samples in %s" % (label, tot, LEAF))
            continue
        # 1. the leaf's samples carry the exact chain from the thread's base down: with no
        # Ruby frame before it, and (unless internals are kept) no native frame inside it
        def exact(f):
            names = [name(x) for x in f]
            if internals:
                i = names.index(chain[0]) if chain[0] in names else -1
                return i >= 0 and ruby_part(f[i:]) == chain and not ruby_part(f[:i])
            return names[-len(chain):] == chain and not ruby_part(f[:-len(chain)])

        ok = sum(n for f, n in samples if exact(f))
        if ok < 0.95 * tot:
            bad = [";".join(f) for f, n in samples if not exact(f)][:2]
            errors.append("%s: %d of %d %s samples have the chain %s; e.g. %s" % (
                label, ok, tot, LEAF, ";".join(chain), bad))
        # 2. none looks whole and is wrong: a chain cut short says so with a [ruby...] mark
        wrong = sum(n for f, n in samples if ruby_part(f) != chain and not any(x.startswith("[ruby") for x in f))
        if wrong:
            bad = [";".join(f) for f, n in samples if ruby_part(f) != chain
                   and not any(x.startswith("[ruby") for x in f)][:2]
            errors.append("%s: %d of %d samples complete but wrong; e.g. %s" % (label, wrong, tot, bad))
        # 3. the interpreter's loop between the Ruby frames only with --ruby-internals
        loops = sum(n for f, n in samples if "rb_vm_exec" in f)
        if internals and loops < 0.95 * tot:
            errors.append("%s: --ruby-internals: only %d of %d samples show rb_vm_exec" % (label, loops, tot))
        if not internals and loops > 0.05 * tot:
            errors.append("%s: %d of %d samples still show rb_vm_exec" % (label, loops, tot))

    # 4. the extension's native frames (zlib's deflate) sit under the C method that called them,
    # under its Ruby caller
    write = "Zlib::GzipWriter#write"
    under = [(f, n) for f, n in stacks if write in f and f[-1] != write]
    tot = sum(n for _, n in under)
    ok = sum(n for f, n in under if any(x == "deflate" or x.startswith("deflate") or "libz" in x
                                        for x in f[f.index(write) + 1:]))
    if tot < 5 or ok < 0.5 * tot:
        errors.append("only %d of %d samples in %s have zlib's frames above it" % (ok, tot, write))
    # (a stack read while GC.compact moved the frames says so with a [ruby...] mark: cut, not
    # wrong; on a busy machine, compaction takes a larger share of the samples)
    marked = [(f, n) for f, n in stacks if write in f and any(x.startswith("[ruby") for x in f)]
    caller = sum(n for f, n in stacks if write in f and (f, n) not in marked and
                 ruby_part(f[:f.index(write)]) == MAIN[:-3])
    allw = sum(n for f, n in stacks if write in f and (f, n) not in marked)
    if allw and caller < 0.95 * allw:
        bad = [";".join(f[:f.index(write) + 1]) for f, n in stacks if write in f and (f, n) not in marked
               and ruby_part(f[:f.index(write)]) != MAIN[:-3]][:2]
        errors.append("%d of %d %s samples are under the main chain; e.g. %s" % (caller, allw, write, bad))

    # 5. lines: each frame of the main chain at the line it runs
    if lines:
        want = source_lines(lines)
        samples = leaf_samples("Tree#leaf")
        tot = sum(n for _, n in samples)

        def at_lines(f):
            part = f[-len(MAIN):]
            for x, w in zip(part, want):
                m = re.match(r"^.*:(\d+)$", x)
                got = int(m.group(1)) if m and w is not None else None
                if w is None:
                    continue
                if isinstance(w, set) and got not in w or not isinstance(w, set) and got != w:
                    return False
            return True

        ok = sum(n for f, n in samples if at_lines(f))
        if tot and ok < 0.95 * tot:
            bad = [";".join(f[-len(MAIN):]) for f, n in samples if not at_lines(f)][:1]
            errors.append("lines: %d of %d samples at the lines %s; e.g. %s" % (ok, tot, want, bad))
    for e in errors:
        print("ruby: %s" % e)
    return 1 if errors else 0


sys.exit(main())
