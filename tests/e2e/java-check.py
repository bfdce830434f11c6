"""Checks a folded profile of tests/workloads/java/Hot.java: the Java frames in it.

usage: java-check.py FILE.folded [--no-compiled] [--no-inlined]
Prints one line of figures, and exits 1 with one line per failed property:
  1. of the samples whose innermost Hot method is Hot.fib, at least 95% carry the exact Java
     chain from the thread's first Hot method (Hot.main, Hot$Side.run) down, above the native
     frames that started the thread (start_thread, and JavaMain for the main thread);
  2. no sample is complete-but-wrong: a stack with no placeholder frame ("[...]") whose Hot
     methods do not follow the workload's call tree, or that does not start at the thread's
     native base;
  3. interpreted frames (_[0]) are present, and compiled ones (_[1], _[j]) and inlined ones
     (_[i]) unless the run cannot have them.
"""
import re
import sys

MAIN = "void Hot.main(java.lang.String[])"
SIDE = "void Hot$Side.run()"
SLEEPER = "void Hot$Sleeper.run()"
FIB = "long Hot.fib(int)"
# caller -> callees, among Hot's own methods (library frames between them are skipped)
EDGES = {
    MAIN: {"void Hot.work()", "void Hot$Side.<init>()", "void Hot$Sleeper.<init>()"},
    "void Hot.work()": {FIB, "double Hot.shapes(Hot$Shape[], int)", "long Hot.streams(int)",
                        "void Hot$Square.<init>()", "void Hot$Circle.<init>()"},
    FIB: {FIB},
    "double Hot.shapes(Hot$Shape[], int)": {"double Hot$Square.area(int)", "double Hot$Circle.area(int)"},
    "double Hot$Square.area(int)": {"int Hot.square(int)"},
    "double Hot$Circle.area(int)": {"int Hot.square(int)"},
    "long Hot.streams(int)": {"int Hot.lambda$streams$0(int)", "boolean Hot.lambda$streams$1(int)"},
    "int Hot.lambda$streams$0(int)": {"int Hot.square(int)"},
    SIDE: {FIB, "int Hot.square(int)"},
    SLEEPER: {"void Hot$Sleeper.doze()"},
    "void Hot$Sleeper.doze()": {"void Hot$Sleeper.nap()"},
}
SUFFIX = re.compile(r"_\[[0-9a-z]\]$")


def name(frame):
    return SUFFIX.sub("", frame)


def is_hot(frame):
    n = name(frame)
    return re.match(r"^\S+ Hot[.$]", n) is not None and "$$Lambda" not in n


def main():
    path = sys.argv[1]
    compiled = "--no-compiled" not in sys.argv
    inlined = "--no-inlined" not in sys.argv and compiled
    stacks = []
    for line in open(path, encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        stacks.append((st.split(";"), int(n)))
    errors = []

    def base_ok(frames, first_hot):
        native = [name(f) for f in frames[1:first_hot]]
        if "start_thread" not in native and "_start" not in native:
            return False
        if name(frames[first_hot]) == MAIN and "JavaMain" not in native:
            return False
        return not any(f.startswith("[") for f in native)

    def hot_chain(frames):
        """Hot's methods from the root, or None when a placeholder or a native frame breaks the
        Java frames between them."""
        idx = [i for i, f in enumerate(frames) if is_hot(f)]
        if not idx:
            return None, None
        for i in range(idx[0], idx[-1] + 1):
            if frames[i].startswith("["):
                return None, idx[0]
        return [name(frames[i]) for i in idx], idx[0]

    fib_total = fib_whole = wrong = total = 0
    worst = {}
    for frames, n in stacks:
        total += n
        chain, first = hot_chain(frames)
        placeholder = any(f.startswith("[") for f in frames)
        if chain is None:
            continue
        follows = chain[0] in (MAIN, SIDE, SLEEPER) and all(b in EDGES.get(a, ()) for a, b in zip(chain, chain[1:]))
        whole = follows and base_ok(frames, first) and not placeholder
        if chain[-1] == FIB:
            fib_total += n
            fib_whole += n if whole else 0
            if not whole:
                worst[";".join(frames)] = worst.get(";".join(frames), 0) + n
        if not placeholder and not whole and base_ok(frames, first):
            wrong += n
            worst["WRONG " + ";".join(frames)] = n
    kinds = {k: sum(n for f, n in stacks if any(x.endswith(k) and is_hot(x) for x in f))
             for k in ("_[0]", "_[1]", "_[j]", "_[i]")}
    share = 100.0 * fib_whole / fib_total if fib_total else 0.0
    print("java-check: fib leaf %d of %d whole (%.1f%%); complete-but-wrong %d of %d; kinds %s"
          % (fib_whole, fib_total, share, wrong, total, " ".join("%s=%d" % kv for kv in kinds.items())))
    if fib_total < 50:
        errors.append("only %d samples with Hot.fib innermost" % fib_total)
    elif share < 95:
        errors.append("only %.1f%% of Hot.fib's samples carry the whole chain" % share)
    if wrong:
        errors.append("%d samples complete but wrong" % wrong)
    if not kinds["_[0]"]:
        errors.append("no interpreted frame of Hot")
    if compiled and not (kinds["_[1]"] or kinds["_[j]"]):
        errors.append("no compiled frame of Hot")
    if inlined and not kinds["_[i]"]:
        errors.append("no inlined frame of Hot")
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        # the wrong ones first, then the most frequent of the others
        for st, n in sorted(worst.items(), key=lambda kv: (not kv[0].startswith("WRONG"), -kv[1]))[:3]:
            print("  %d %s ... %s" % (n, st[:200], st[-700:]), file=sys.stderr)
        sys.exit(1)


main()
