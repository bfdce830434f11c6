"""Checks a folded profile of tests/workloads/calltree.php: the PHP frames in it.

usage: php-check.py FILE.folded --expect [tree][,zip] [--fpm] [--master PID] [--internals]
FILE is folded with --root pid and --lines (frames as name:file:line). Each process (root) ran
the tree or the zip part; --expect says which must be there. --fpm: the tree ran as a request
of app.php, which requires calltree.php (one more top-level frame); --master PID: that
process (PHP-FPM's master) must show no PHP frame. --internals: the engine's frames were kept.
Exits 1 with one line per failed property.
"""
import re
import sys

ENGINE = ("execute_ex", "zend_execute", "zend_execute_scripts", "zend_call_function", "execute_internal")
# the top level: main at its call of array_map (or of Runner::zip), in calltree.php
TREE = [("main", 46), ("array_map", None), ("{closure}", 46), ("Runner::run", 28)] + [("rec", 25)] * 4 + [
    ("rec", 22), ("usort", None), ("zend_insert_sort", None), ("{closure}", 22), ("leaf", None)]
ZIP = [("main", 43), ("Runner::zip", 32), ("gzcompress", None)]
LEAF_LINES = range(11, 18)


def frame(s):
    """name, file, line of a frame as --lines prints it (file and line None when it has none)."""
    parts = s.rsplit(":", 2)
    if len(parts) == 3 and parts[2].isdigit() and parts[0]:
        return parts[0], parts[1], int(parts[2])
    return s, None, None


def main():
    path = sys.argv[1]
    args = sys.argv[2:]
    expect = [x for x in args[args.index("--expect") + 1].split(",") if x]
    fpm = "--fpm" in args
    internals = "--internals" in args
    master = args[args.index("--master") + 1] if "--master" in args else None
    procs = {}
    for line in open(path, encoding="utf-8"):
        st, _, n = line.rstrip("\n").rpartition(" ")
        fr = st.split(";")
        procs.setdefault(fr[0], []).append(([frame(x) for x in fr[1:]], int(n)))
    errors = []
    top = [("main", 2)] if fpm else []

    def script_part(f):
        """The frames after the native base (php_execute_script), the engine's left out when its
        internals were kept; None without the base."""
        names = [x[0] for x in f]
        if "php_execute_script" not in names:
            return None
        part = f[names.index("php_execute_script") + 1:]
        if internals:
            # the engine's functions without a symbol: [php8.2], or php8.2+0x1234 named by
            # their address alone (the stripped binary's .eh_frame)
            part = [x for x in part if x[0] not in ENGINE and not x[0].startswith("[php")
                    and not re.match(r"php[0-9.]*\+0x[0-9a-f]+$", x[0])]
        return part

    def chain_ok(f, want, upto):
        part = script_part(f)
        if part is None:
            return False
        names = [x[0] for x in part]
        if upto not in names:
            return False
        part = part[:names.index(upto) + 1]
        if len(part) != len(want):
            return False
        for (name, _, line), (wname, wline) in zip(part, want):
            if name != wname or (wline is not None and line != wline):
                return False
        return True

    def whole(f):
        """A stack that looks whole: from _start, with no mark of a cut or unknown frame."""
        return f and f[0][0] == "_start" and not any(x[0].startswith("[php:") or x[0] == "[unknown]" for x in f)

    seen = set()
    for root, stacks in sorted(procs.items()):
        if master and root.endswith("-" + master):
            php = sum(n for f, n in stacks if any(x[1] and x[1].endswith(".php") for x in f))
            if php:
                errors.append("%s: the master has %d samples with PHP frames" % (root, php))
            continue
        tree = sum(n for f, n in stacks if any(x[0] == "leaf" for x in f))
        zipped = sum(n for f, n in stacks if any(x[0] == "gzcompress" for x in f))
        if tree >= zipped and tree:
            kind, want, upto = "tree", top + TREE, "leaf"
        elif zipped:
            kind, want, upto = "zip", ZIP, "gzcompress"
        else:
            continue
        seen.add(kind)
        among = [(f, n) for f, n in stacks if any(x[0] == upto for x in f)]
        tot = sum(n for f, n in among)
        ok = sum(n for f, n in among if chain_ok(f, want, upto))
        # 1. the leaf's samples carry the exact chain from the top level down, lines too
        if tot < 20:
            errors.append("%s: only %d samples in %s" % (root, tot, upto))
        elif ok < 0.95 * tot:
            bad = [";".join("%s:%s" % (x[0], x[2]) for x in f) for f, n in among if not chain_ok(f, want, upto)][:2]
            errors.append("%s: %d of %d %s samples have the chain; e.g. %s" % (root, ok, tot, upto, bad))
        print("php-check: %s: %d of %d %s samples with the exact chain" % (root, ok, tot, upto))
        # 2. never a chain that looks whole and is wrong
        wrong = sum(n for f, n in among if whole(f) and not chain_ok(f, want, upto))
        if wrong:
            errors.append("%s: %d %s samples look whole but have another chain" % (root, wrong, upto))
        if kind == "tree":
            # the innermost frame's line is where the loop runs
            lines = sum(n for f, n in among if [x for x in f if x[0] == "leaf"][-1][2] in LEAF_LINES)
            if lines < 0.95 * tot:
                errors.append("%s: %d of %d leaf samples at leaf's lines" % (root, lines, tot))
        else:
            # 3. zlib's native frames under their PHP caller, never above it
            def under(f):
                names = [x[0] for x in f]
                rest = names[names.index("gzcompress") + 1:]
                return any(x in ("deflate", "adler32_z") or x.startswith("[libz") for x in rest)
            deflate = sum(n for f, n in among if under(f))
            if deflate < 0.5 * tot:
                errors.append("%s: %d of %d gzcompress samples have zlib's frames above it" % (root, deflate, tot))
            # (of the samples whose PHP frames were read)
            above = sum(n for f, n in stacks if "deflate" in [x[0] for x in f] and any(
                x[1] and x[1].endswith(".php") for x in f) and not any(
                x[0] == "gzcompress" for x in f[:[x[0] for x in f].index("deflate")]))
            if above:
                errors.append("%s: %d deflate samples not under gzcompress" % (root, above))
        if not internals:
            engine = sum(n for f, n in among if any(x[0] in ENGINE for x in f))
            if engine > 0.05 * max(tot, 1):
                errors.append("%s: %d %s samples still show the engine's frames" % (root, engine, upto))
        else:
            loop = sum(n for f, n in among if any(x[0] == "execute_ex" for x in f))
            if loop < 0.95 * tot:
                errors.append("%s: --php-internals: %d of %d samples show execute_ex" % (root, loop, tot))
    for kind in expect:
        if kind not in seen:
            errors.append("no process ran the %s part" % kind)
    for e in errors:
        print("php: %s" % e)
    return 1 if errors else 0


sys.exit(main())
