"""Checks a folded profile of tests/workloads/calltree.py: the Python frames in it.

usage: python-check.py FILE.folded VERSION [--internals]
Exits 1 with one line per failed property. VERSION is 3.8 ... 3.13: before 3.11 code objects
have no qualified name, so the method is "parse" rather than "Parser.parse".
"""
import sys


def main():
    path, version = sys.argv[1], sys.argv[2]
    internals = "--internals" in sys.argv
    minor = int(version.split(".")[1])
    parse = "Parser.parse" if minor >= 11 else "parse"
    run = "Thread.run" if minor >= 11 else "run"
    chain = ["<module>", "main", parse] + ["rec"] * 7 + ["leaf_work"]
    stacks = []
    for line in open(path, encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        stacks.append((st.split(";"), int(n)))
    errors = []

    def share(pred, among):
        tot = sum(n for f, n in stacks if among(f))
        ok = sum(n for f, n in stacks if among(f) and pred(f))
        return ok, tot

    def python_part(f, leaf):
        """The frames from <module> (or the thread's base) to leaf, with the interpreter's left
        out when internals were kept."""
        i = f.index(leaf)
        part = f[: i + 1]
        if internals:
            part = [x for x in part if not x.startswith("_PyEval_EvalFrameDefault")]
        return part

    # 1. the leaf function's samples carry the exact chain from <module> down
    ok, tot = share(lambda f: python_part(f, "leaf_work")[-len(chain):] == chain,
                    lambda f: "leaf_work" in f)
    if tot < 20:
        errors.append("only %d samples in leaf_work" % tot)
    elif ok < 0.95 * tot:
        bad = [";".join(f) for f, n in stacks if "leaf_work" in f
               and python_part(f, "leaf_work")[-len(chain):] != chain][:2]
        errors.append("%d of %d leaf_work samples have the chain %s; e.g. %s" % (ok, tot, ";".join(chain), bad))
    # ...and nothing of the interpreter inside the chain unless asked for
    if not internals:
        inner = sum(n for f, n in stacks if "leaf_work" in f and any(
            x.startswith("_PyEval_EvalFrameDefault") for x in f))
        if inner > 0.05 * max(tot, 1):
            errors.append("%d leaf_work samples still show _PyEval_EvalFrameDefault" % inner)
    else:
        ok, tot = share(lambda f: "_PyEval_EvalFrameDefault" in f, lambda f: "leaf_work" in f)
        if ok < 0.95 * tot:
            errors.append("--python-internals: only %d of %d leaf_work samples show the eval loop" % (ok, tot))
    # 2. the extension's native frames sit under their Python caller
    def zlib_under(f):
        i = f.index("compress_blob")
        return any(x in ("deflate", "zlib_compress", "zlib_compress_impl") or "libz" in x for x in f[i + 1:])

    ok, tot = share(zlib_under, lambda f: "compress_blob" in f and f[-1] != "compress_blob")
    if not ok:
        errors.append("no sample of compress_blob has zlib's frames above it")
    ok, tot = share(lambda f: f[f.index("compress_blob") - 2:f.index("compress_blob")] == ["<module>", "main"],
                    lambda f: "compress_blob" in f)
    if tot and ok < 0.95 * tot:
        errors.append("%d of %d compress_blob samples are under <module>;main" % (ok, tot))
    # 3. the second thread shows its function, under the thread's Python base
    def under_run(f):
        before = f[:f.index("spin")]
        return run in before if internals else before[-1:] == [run]

    ok, tot = share(under_run, lambda f: "spin" in f)
    if tot < 20:
        errors.append("only %d samples in the thread's spin" % tot)
    elif ok < 0.95 * tot:
        errors.append("%d of %d spin samples are under %s" % (ok, tot, run))
    # 5. the Python frames stand on the process's native base, not beside it: complete-looking
    # but wrong would be the chain above _start or with the native base after <module>
    base = ("_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
            "Py_BytesMain", "Py_Main", "Py_RunMain")

    def on_base(f):
        i = f.index("<module>")
        return any(x in base for x in f[:i]) and not any(x in base for x in f[i:])

    ok, tot = share(on_base, lambda f: "leaf_work" in f and "<module>" in f)
    if tot and ok < 0.95 * tot:
        bad = [";".join(f) for f, n in stacks if "leaf_work" in f and "<module>" in f and not on_base(f)][:1]
        errors.append("%d of %d leaf_work samples have <module> on the native base; e.g. %s" % (ok, tot, bad))
    # 4. no -X perf trampoline next to the frames read at sample time (samples taken before
    # the process was known, as it starts, have only the trampolines)
    dup = sum(n for f, n in stacks if any(x.startswith("py::") for x in f) and "<module>" in f)
    if dup and not internals:
        errors.append("%d samples keep py:: trampoline frames" % dup)
    for e in errors:
        print("python %s: %s" % (version, e))
    return 1 if errors else 0


sys.exit(main())
