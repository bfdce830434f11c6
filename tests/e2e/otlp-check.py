#!/usr/bin/env python3
"""Checks the OTLP requests a receiver saved (DIR/N.otlp.pb, decompressed) against the official
profiles .proto files, decoded by protoc, and against the same recording's pprof:

    otlp-check.py PROTO_DIR DIR FOLDED [--unit NAME --script PATH --thread NAME]
                  [--container ID --pod NAME --namespace NS --k8s-container NAME]
                  [--label K=V ...] [--no-label K ...]

- every dictionary table starts with its zero entry, every index is in range;
- one resource per service (service.name) in each request, with the labels asked for;
- every profile has its sample and period types, period, time and duration;
- every location with lines says its profile.frame.type; the unit's Python frames are cpython,
  named with the script's file and lines, over native frames, and kernel frames are there;
- every sample of the unit, and nine in ten of all, has thread.id and thread.name (a task
  sampled as it exits has no tid); a thread of the unit is named --thread;
- some mapping has a GNU build-id;
- the samples counted are within 10% of FOLDED's (the recording's pprof, as folded lines).
Prints what it found; exits 1 on the first failure."""
import argparse
import glob
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protobuf_text import decode, one  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('proto')
ap.add_argument('dir')
ap.add_argument('folded')
ap.add_argument('--unit')
ap.add_argument('--script')
ap.add_argument('--thread')
ap.add_argument('--container')
ap.add_argument('--pod')
ap.add_argument('--namespace')
ap.add_argument('--k8s-container')
ap.add_argument('--label', action='append', default=[])
ap.add_argument('--no-label', action='append', default=[])
args = ap.parse_args()
REQUEST = 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest'
SERVICE = 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto'


def fail(msg):
    print('otlp-check: ' + msg)
    sys.exit(1)


def attr_value(any_value):
    if 'string_value' in any_value:
        return one(any_value, 'string_value').decode()
    if 'int_value' in any_value:
        return one(any_value, 'int_value')
    return None


files = sorted(glob.glob(os.path.join(args.dir, '*.otlp.pb')), key=lambda f: int(os.path.basename(f).split('.')[0]))
if not files:
    fail('the receiver took no OTLP request')
total = threadless = 0
seen_services = set()
unit_leaf = unit_leaf_ok = 0
kernel_frames = cpython_over_native = 0
thread_names = set()
build_ids = 0
resources_seen = {}
for path in files:
    req = decode(args.proto, SERVICE, REQUEST, open(path, 'rb').read())
    d = one(req, 'dictionary')
    if d is None:
        fail('%s: no dictionary' % path)
    tables = {t: d.get(t, []) for t in ('mapping_table', 'location_table', 'function_table', 'link_table',
                                          'string_table', 'attribute_table', 'stack_table')}
    for t, v in tables.items():
        if not v:
            fail('%s: %s is empty (its zero entry must be there)' % (path, t))
    strings = tables['string_table']
    if strings[0] != b'':
        fail('%s: string_table[0] is %r, not ""' % (path, strings[0]))
    for t in ('mapping_table', 'location_table', 'function_table', 'attribute_table', 'stack_table'):
        if tables[t][0] != {}:
            fail('%s: %s[0] is %r, not the zero entry' % (path, t, tables[t][0]))
    link0 = tables['link_table'][0]
    if one(link0, 'trace_id', b'') != bytes(16) or one(link0, 'span_id', b'') != bytes(8):
        fail('%s: link_table[0] is not the zero link with ids of 16 and 8 bytes' % path)

    def s(ix):
        if not 0 <= ix < len(strings):
            fail('%s: string index %d out of range' % (path, ix))
        return strings[ix].decode(errors='replace')

    attrs = []
    for a in tables['attribute_table']:
        attrs.append((s(one(a, 'key_strindex', 0)), attr_value(one(a, 'value', {}))))

    def attr(ix):
        if not 0 < ix < len(attrs):
            fail('%s: attribute index %d out of range' % (path, ix))
        return attrs[ix]

    funcs = tables['function_table']
    locs = []
    for i, l in enumerate(tables['location_table']):
        m = one(l, 'mapping_index', 0)
        if not 0 <= m < len(tables['mapping_table']):
            fail('%s: location %d: mapping %d out of range' % (path, i, m))
        lines = []
        for ln in l.get('lines', []):
            f = one(ln, 'function_index', 0)
            if not 0 < f < len(funcs):
                fail('%s: location %d: function %d out of range' % (path, i, f))
            lines.append((s(one(funcs[f], 'name_strindex', 0)), s(one(funcs[f], 'filename_strindex', 0)),
                          one(ln, 'line', 0)))
        kinds = [v for k, v in map(attr, l.get('attribute_indices', [])) if k == 'profile.frame.type']
        if i and lines and not kinds and not lines[-1][0].startswith('['):
            fail('%s: location %d (%s) has no profile.frame.type' % (path, i, lines[-1][0]))
        locs.append((lines, kinds[0] if kinds else None))
    for m in tables['mapping_table'][1:]:
        for k, v in map(attr, m.get('attribute_indices', [])):
            if k == 'process.executable.build_id.gnu':
                if not re.fullmatch(r'[0-9a-f]{8,}', v or ''):
                    fail('%s: a mapping\'s build-id is %r' % (path, v))
                build_ids += 1
    stacks = []
    for st in tables['stack_table']:
        ixs = st.get('location_indices', [])
        for ix in ixs:
            if not 0 < ix < len(locs):
                fail('%s: stack location %d out of range' % (path, ix))
        stacks.append(ixs)

    services = set()
    for rp in req.get('resource_profiles', []):
        rattrs = {one(kv, 'key').decode(): attr_value(one(kv, 'value', {}))
                  for kv in one(rp, 'resource', {}).get('attributes', [])}
        service = rattrs.get('service.name')
        if not service:
            fail('%s: a resource without service.name: %r' % (path, rattrs))
        if service in services:
            fail('%s: two resources of service %s' % (path, service))
        services.add(service)
        seen_services.add(service)
        resources_seen.setdefault(service, rattrs)
        for sp in rp.get('scope_profiles', []):
            if one(one(sp, 'scope', {}), 'name') != b'hotstack':
                fail('%s: the scope is not hotstack\'s' % path)
            for prof in sp.get('profiles', []):
                st = one(prof, 'sample_type', {})
                stype = (s(one(st, 'type_strindex', 0)), s(one(st, 'unit_strindex', 0)))
                pt = one(prof, 'period_type', {})
                if not one(pt, 'type_strindex') or not one(prof, 'period', 0) > 0:
                    fail('%s: a profile without its period type or period' % path)
                t0 = one(prof, 'time_unix_nano', 0) / 1e9
                if abs(t0 - time.time()) > 86400 or not one(prof, 'duration_nano', 0) > 0:
                    fail('%s: a profile\'s time %s or duration is wrong' % (path, t0))
                if len(one(prof, 'profile_id', b'')) != 16:
                    fail('%s: a profile id is not 16 bytes' % path)
                for smp in prof.get('samples', []):
                    vals = smp.get('values', [])
                    if len(vals) != 1 or vals[0] <= 0:
                        fail('%s: a sample\'s values are %r' % (path, vals))
                    sattrs = dict(map(attr, smp.get('attribute_indices', [])))
                    # a sample of a task as it exits has no pid or tid (the kernel's -1): no
                    # thread attributes; the unit's program runs throughout
                    if ('thread.id' in sattrs) != ('thread.name' in sattrs) or \
                            (service == args.unit and 'thread.id' not in sattrs):
                        fail('%s: a sample of %s without thread.id and thread.name: %r' % (path, service, sattrs))
                    si = one(smp, 'stack_index', 0)
                    if not 0 < si < len(stacks):
                        fail('%s: stack index %d out of range' % (path, si))
                    if stype != ('samples', 'count'):
                        continue
                    total += vals[0]
                    if 'thread.id' not in sattrs:
                        threadless += vals[0]
                    frames = [(ln, locs[ix][1]) for ix in stacks[si] for ln in locs[ix][0]]
                    kinds = [k for _, k in frames]
                    if 'kernel' in kinds:
                        kernel_frames += vals[0]
                    if service != args.unit:
                        continue
                    thread_names.add(sattrs['thread.name'])
                    if 'cpython' in kinds and 'native' in kinds[kinds.index('cpython'):]:
                        cpython_over_native += vals[0]
                    leaf = [f for f in frames if f[0][0] == 'leaf']
                    if leaf:
                        unit_leaf += vals[0]
                        (name, file, line), kind = leaf[0]
                        if kind == 'cpython' and file == args.script and line > 0:
                            unit_leaf_ok += vals[0]

folded = 0
for line in open(args.folded):
    stack, _, count = line.rstrip('\n').rpartition(' ')
    if stack:
        folded += int(count)
print('otlp-check: %d requests, services %s; %d samples (pprof %d); unit: leaf %d/%d named, %d over native; '
      'kernel %d; threads %s; %d build-ids' % (len(files), sorted(seen_services), total, folded, unit_leaf_ok,
                                              unit_leaf, cpython_over_native, kernel_frames,
                                              sorted(thread_names), build_ids))
if threadless > 0.1 * total:
    fail('%d of %d samples without a thread' % (threadless, total))
if not folded or abs(total - folded) > folded * 0.1:
    fail('%d samples sent, %d in the pprof: not within 10%%' % (total, folded))
if args.unit:
    if args.unit not in resources_seen:
        fail('no resource of the unit %s' % args.unit)
    if not unit_leaf or unit_leaf_ok < unit_leaf * 0.95:
        fail('leaf: %d of %d samples named cpython in %s with a line' % (unit_leaf_ok, unit_leaf, args.script))
    if not cpython_over_native:
        fail('no Python frames over native ones in the unit')
    if args.thread and args.thread not in thread_names:
        fail('no thread named %s in the unit' % args.thread)
if not kernel_frames:
    fail('no kernel frames')
if not build_ids:
    fail('no mapping with a build-id')
for kv in args.label:
    k, v = kv.split('=', 1)
    for service, rattrs in resources_seen.items():
        if str(rattrs.get(k)) != v:
            fail('the resource of %s has %s=%r, not %r' % (service, k, rattrs.get(k), v))
for k in args.no_label:
    for service, rattrs in resources_seen.items():
        if k in rattrs:
            fail('the resource of %s has %s (it should not)' % (service, k))
if args.container:
    want = {'container.id': args.container, 'k8s.pod.name': args.pod, 'k8s.namespace.name': args.namespace,
            'k8s.container.name': args.k8s_container}
    found = [r for r in resources_seen.values() if r.get('container.id') == args.container]
    if not found:
        fail('no resource with container.id %s: %r' % (args.container, resources_seen))
    for k, v in want.items():
        if v and found[0].get(k) != v:
            fail('the container\'s resource has %s=%r, not %r' % (k, found[0].get(k), v))
print('otlp-check: ok')
