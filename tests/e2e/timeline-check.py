#!/usr/bin/env python3
"""Checks a Firefox Profiler processed profile (.json.gz, .firefox.json) or a Chrome trace-event
file (.trace.json) that hotstack wrote, for what its viewers rely on:

    timeline-check.py firefox FILE [--thread NAME]... [--function NAME]... [--markers]
    timeline-check.py chrome FILE [--thread NAME]... [--function NAME]... [--markers]

firefox: meta has the processed format's version fields, categories with a grey default, an
interval; every table's columns are as long as its length, every index in range (stack prefixes
point backwards, frames, funcs, resources, sources, libs, strings, categories, subcategories);
each thread has a name, pid and tid, sample times that never decrease, CPU deltas where
sampleUnits says so, markers that end after they start and whose cause stacks exist.
chrome: a JSON object with traceEvents; every event has ph, pid and tid, every complete event
ts and dur >= 0, each thread's events in order of ts with a thread_name metadata event, and
the complete events of a thread nest (each inside the one it starts in).
Both: the threads named --thread are there; the functions named --function appear in the
stacks; --markers: some thread has off-CPU periods. Exits 1 on the first failure."""
import argparse
import gzip
import json
import sys


def fail(msg):
    print(f"timeline-check: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def table(name, t, columns):
    n = t.get("length")
    if not isinstance(n, int) or n < 0:
        fail(f"{name}: no length")
    for c in columns:
        if c not in t:
            fail(f"{name}: no column {c}")
        if len(t[c]) != n:
            fail(f"{name}.{c}: {len(t[c])} entries, length {n}")
    return n


def index(name, v, n, nullable=False, minus_one=False):
    if v is None and nullable:
        return
    if v == -1 and minus_one:
        return
    if not isinstance(v, int) or not 0 <= v < n:
        fail(f"{name}: index {v!r} out of range 0..{n - 1}")


def check_firefox(p, args):
    meta = p["meta"]
    for k in ("interval", "startTime", "version", "preprocessedProfileVersion", "categories", "markerSchema",
              "product"):
        if k not in meta:
            fail(f"meta has no {k}")
    if meta["preprocessedProfileVersion"] < 60 or meta["interval"] <= 0:
        fail(f"meta: version {meta['preprocessedProfileVersion']}, interval {meta['interval']}")
    cats = meta["categories"]
    if not any(c["color"] == "grey" for c in cats):
        fail("no grey (default) category")
    sh = p["shared"]
    strings = sh["stringArray"]
    ns = len(strings)
    nlib = len(p["libs"])
    nst = table("stackTable", sh["stackTable"], ["frame", "prefixOffset"])
    nfr = table("frameTable", sh["frameTable"], ["address", "lib", "inlineDepth", "category", "subcategory", "func",
                                                 "nativeSymbol", "innerWindowID", "line", "column"])
    nfn = table("funcTable", sh["funcTable"], ["name", "isJS", "relevantForJS", "resource", "source", "lineNumber",
                                               "columnNumber"])
    nres = table("resourceTable", sh["resourceTable"], ["name", "host", "type"])
    nsrc = table("sources", sh["sources"], ["id", "filename", "startLine", "startColumn", "sourceMapURL"])
    table("nativeSymbols", sh["nativeSymbols"], ["libIndex", "address", "name", "functionSize"])
    st, fr, fn = sh["stackTable"], sh["frameTable"], sh["funcTable"]
    for i in range(nst):
        off = st["prefixOffset"][i]
        if not isinstance(off, int) or off < 0 or off > i:
            fail(f"stack {i}: prefixOffset {off}")
        index(f"stack {i} frame", st["frame"][i], nfr)
    for i in range(nfr):
        index(f"frame {i} func", fr["func"][i], nfn)
        index(f"frame {i} lib", fr["lib"][i], nlib, minus_one=True)
        c = fr["category"][i]
        index(f"frame {i} category", c, len(cats), nullable=True)
        if c is not None:
            index(f"frame {i} subcategory", fr["subcategory"][i], len(cats[c]["subcategories"]))
    for i in range(nfn):
        index(f"func {i} name", fn["name"][i], ns)
        index(f"func {i} resource", fn["resource"][i], nres, minus_one=True)
        index(f"func {i} source", fn["source"][i], nsrc, nullable=True)
    for i in range(nres):
        index(f"resource {i} name", sh["resourceTable"]["name"][i], ns)
    for i in range(nsrc):
        index(f"source {i} filename", sh["sources"]["filename"][i], ns)

    cpu = (meta.get("sampleUnits") or {}).get("threadCPUDelta")
    names, used, nmarkers = [], set(), 0
    for ti, t in enumerate(p["threads"]):
        for k in ("name", "pid", "tid", "processType", "registerTime", "samples", "markers"):
            if k not in t:
                fail(f"thread {ti} has no {k}")
        if not t["name"]:
            fail(f"thread {ti} has no name")
        names.append(t["name"])
        s = t["samples"]
        cols = ["stack", "time"] + (["threadCPUDelta"] if cpu else []) + (["weight"] if s.get("weight") else [])
        n = table(f"thread {ti} samples", s, cols)
        last = None
        for i in range(n):
            index(f"thread {ti} sample {i} stack", s["stack"][i], nst)
            if last is not None and s["time"][i] < last:
                fail(f"thread {ti} ({t['name']}): sample {i} at {s['time'][i]} before {last}")
            last = s["time"][i]
            used.add(s["stack"][i])
        m = t["markers"]
        nm = table(f"thread {ti} markers", m, ["name", "startTime", "endTime", "phase", "category", "data"])
        for i in range(nm):
            index(f"thread {ti} marker {i} name", m["name"][i], ns)
            index(f"thread {ti} marker {i} category", m["category"][i], len(cats))
            if m["phase"][i] == 1 and m["endTime"][i] < m["startTime"][i]:
                fail(f"thread {ti} marker {i} ends before it starts")
            cause = (m["data"][i] or {}).get("cause")
            if cause:
                index(f"thread {ti} marker {i} cause", cause["stack"], nst)
        nmarkers += nm
    # the functions of the stacks the samples are in
    funcs = set()
    for s in used:
        while True:
            funcs.add(strings[fn["name"][fr["func"][st["frame"][s]]]])
            off = st["prefixOffset"][s]
            if not off:
                break
            s -= off
    return names, funcs, nmarkers, sum(t["samples"]["length"] for t in p["threads"])


def check_chrome(p, args):
    if not isinstance(p, dict) or not isinstance(p.get("traceEvents"), list):
        fail("not an object with traceEvents")
    names, funcs, last, stacks, nx, noff = {}, set(), {}, {}, 0, 0
    for i, e in enumerate(p["traceEvents"]):
        for k in ("ph", "pid", "tid"):
            if k not in e:
                fail(f"event {i} has no {k}: {e}")
        key = (e["pid"], e["tid"])
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[key] = e["args"]["name"]
            continue
        if e["ph"] != "X":
            fail(f"event {i}: phase {e['ph']}")
        if e.get("ts", -1) < 0 or e.get("dur", -1) < 0 or not e.get("name"):
            fail(f"event {i}: ts {e.get('ts')}, dur {e.get('dur')}, name {e.get('name')!r}")
        if key not in names:
            fail(f"event {i}: thread {key} has no thread_name before it")
        if e["ts"] < last.get(key, 0):
            fail(f"event {i}: ts {e['ts']} before {last[key]} on thread {key}")
        last[key] = e["ts"]
        # an event starting inside another ends inside it (rounding aside)
        open_ = stacks.setdefault(key, [])
        while open_ and open_[-1] <= e["ts"] + 0.002:
            open_.pop()
        end = e["ts"] + e["dur"]
        if open_ and end > open_[-1] + 0.002:
            fail(f"event {i} ({e['name']}): ends at {end}, after the event it starts in ({open_[-1]})")
        open_.append(end)
        funcs.add(e["name"])
        nx += 1
        noff += e.get("cat") == "off-cpu"
    return list(names.values()), funcs, noff, nx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["firefox", "chrome"])
    ap.add_argument("file")
    ap.add_argument("--thread", action="append", default=[])
    ap.add_argument("--function", action="append", default=[])
    ap.add_argument("--markers", action="store_true")
    args = ap.parse_args()
    p = load(args.file)
    names, funcs, nmarkers, nsamples = (check_firefox if args.kind == "firefox" else check_chrome)(p, args)
    for t in args.thread:
        if t not in names:
            fail(f"no thread named {t}: {sorted(set(names))}")
    for f in args.function:
        if f not in funcs:
            fail(f"no function {f} in the stacks")
    if args.markers and not nmarkers:
        fail("no off-CPU periods")
    print(f"timeline-check: {args.kind}: {len(names)} threads, {nsamples} samples or events, "
          f"{nmarkers} off-CPU periods, {len(funcs)} functions")


main()
