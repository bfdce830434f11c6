"""Checks a folded profile of tests/workloads/calltree.pl: the Perl frames in it.

usage: perl-check.py FILE.folded [--internals] [--fork]
Exits 1 with one line per failed property. --fork: the program ran with "fork", and its child
is in the profile too.
"""
import sys

LEAF = "main::leaf"
CHAIN = ["main", "main::__ANON__", "Worker::run"] + ["main::rec"] * 5 + [LEAF]
THREAD = ["main::__ANON__", "main::md5loop"]
CHILD = ["main", "main::child_spin", LEAF]
# what else the program's top level calls
OTHERS = [["main", "Worker::new"]]


def is_perl(x):
    return "::" in x or x in ("main", "(eval)", "(require)")


def perl_part(f):
    """The Perl frames of a stack and whether it is whole: from the top level (after perl_run)
    or the thread's base (after start_thread), none of them marked as read in part."""
    if "perl_run" in f:
        rest = f[f.index("perl_run") + 1:]
    elif "start_thread" in f:
        rest = f[f.index("start_thread") + 1:]
    else:
        return [], False
    return [x for x in rest if is_perl(x)], not any(x.startswith("[perl:") for x in f)


def prefix_of(p, whole):
    return len(p) <= len(whole) and whole[: len(p)] == p


def main():
    path = sys.argv[1]
    internals = "--internals" in sys.argv
    forked = "--fork" in sys.argv
    stacks = []
    for line in open(path, encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        stacks.append((st.split(";"), int(n)))
    errors = []

    def share(pred, among):
        tot = sum(n for f, n in stacks if among(f))
        ok = sum(n for f, n in stacks if among(f) and pred(f))
        return ok, tot

    main_thread = lambda f: "perl_run" in f and "main::child_spin" not in f

    # 1. the leaf's samples carry the exact chain from the top level down, and the top level
    # stands on perl_run (with the loop's frame between them when internals are kept)
    def exact(f):
        p, whole = perl_part(f)
        i = f.index(LEAF)
        base = f[f.index("perl_run") + 1:f.index("perl_run") + 3]
        ok_base = base == ["Perl_runops_standard", "main"] if internals else base[:1] == ["main"]
        return whole and p[: len(CHAIN)] == CHAIN and f[i - 1] in (CHAIN[-2], "Perl_runops_standard") and ok_base

    ok, tot = share(exact, lambda f: LEAF in f and main_thread(f))
    summary = ["%s %d of %d exact" % (LEAF, ok, tot)]
    if tot < 20:
        errors.append("only %d samples in %s" % (tot, LEAF))
    elif ok < 0.95 * tot:
        bad = [";".join(f) for f, n in stacks if LEAF in f and main_thread(f) and not exact(f)][:2]
        errors.append("%d of %d %s samples have the chain %s; e.g. %s" % (ok, tot, LEAF, ";".join(CHAIN), bad))
    # ...and the interpreter's machinery only when asked for
    if internals:
        ok, tot = share(lambda f: f.count("Perl_runops_standard") == 2 and "Perl_pp_sort" in f,
                        lambda f: LEAF in f and main_thread(f))
        if ok < 0.95 * tot:
            errors.append("--perl-internals: only %d of %d leaf samples show both runs of the loop" % (ok, tot))
    else:
        inner = sum(n for f, n in stacks if LEAF in f and any(
            x.startswith("Perl_runops_") or x.startswith("Perl_pp_") for x in f))
        if inner > 0.05 * max(tot, 1):
            errors.append("%d leaf samples still show the interpreter's loop or ops" % inner)

    # 2. the second thread: its sub under the thread's native base, no top level under it, and
    # the XS extension's native frames above its Perl caller
    def thread_ok(f):
        p, whole = perl_part(f)
        return whole and p == THREAD

    in_thread = lambda f: "main::md5loop" in f
    ok, tot = share(thread_ok, in_thread)
    summary.append("md5loop %d of %d" % (ok, tot))
    if tot < 20:
        errors.append("only %d samples in main::md5loop" % tot)
    elif ok < 0.95 * tot:
        bad = [";".join(f) for f, n in stacks if in_thread(f) and not thread_ok(f)][:2]
        errors.append("%d of %d md5loop samples are %s under start_thread; e.g. %s" % (ok, tot, ";".join(THREAD), bad))
    ok, tot = share(lambda f: any("MD5.so" in x or "MD5" in x for x in f[f.index("main::md5loop") + 1:]), in_thread)
    if ok < 0.5 * max(tot, 1):
        errors.append("only %d of %d md5loop samples have Digest::MD5's native frames above it" % (ok, tot))
    ok, tot = share(lambda f: any("MD5" in x for x in f[:f.index("main::md5loop")]), in_thread)
    if ok:
        errors.append("%d md5loop samples have Digest::MD5's frames under it" % ok)

    # 3. the forked child is read
    if forked:
        ok, tot = share(lambda f: perl_part(f) == (CHILD, True), lambda f: "main::child_spin" in f and LEAF in f)
        if tot < 20:
            errors.append("only %d samples of the child in %s" % (tot, LEAF))
        elif ok < 0.95 * tot:
            errors.append("%d of %d samples of the child have %s" % (ok, tot, ";".join(CHILD)))

    # 4. never a chain that looks whole and is not one the program has
    wrong = []
    perl_total = 0
    for f, n in stacks:
        p, whole = perl_part(f)
        if not p:
            continue
        perl_total += n
        if not whole:
            continue
        if "start_thread" in f and "perl_run" not in f:
            good = prefix_of(p, THREAD)
        else:
            good = prefix_of(p, CHAIN) or prefix_of(p, CHILD) or any(prefix_of(p, o) for o in OTHERS)
        if not good:
            wrong.append((n, ";".join(f)))
    summary.append("%d of %d complete but wrong" % (sum(n for n, _ in wrong), perl_total))
    print("perl-check: %s: %s" % (path.rsplit("/", 1)[-1], ", ".join(summary)), file=sys.stderr)
    if wrong:
        errors.append("%d of %d samples with Perl frames are complete but wrong; e.g. %s" % (
            sum(n for n, _ in wrong), perl_total, [s for _, s in wrong[:2]]))
    for e in errors:
        print("perl: %s" % e)
    return 1 if errors else 0


sys.exit(main())
