#!/usr/bin/env python3
"""Checks the requests to Pyroscope's push API a receiver saved (DIR/N.push.pb), decoded by protoc
as push.v1.PushRequest:

    push-check.py PROTO DIR [--unit NAME --script PATH] [--container ID --pod NAME]
                  [--label K=V ...] [--no-label K ...]

- each series' labels have unique names, __name__ process_cpu, __delta__ false (a period's
  samples, not a running total), service_name, and the labels asked for;
- each sample is a gzipped pprof with a UUID, no two (series, period) alike;
- the unit's series names the script's leaf; the container's series has its id and pod.
Exits 1 on the first failure."""
import argparse
import glob
import gzip
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protobuf_text import decode, one  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('proto')
ap.add_argument('dir')
ap.add_argument('--unit')
ap.add_argument('--script')
ap.add_argument('--container')
ap.add_argument('--pod')
ap.add_argument('--label', action='append', default=[])
ap.add_argument('--no-label', action='append', default=[])
args = ap.parse_args()


def fail(msg):
    print('push-check: ' + msg)
    sys.exit(1)


files = glob.glob(os.path.join(args.dir, '*.push.pb'))
if not files:
    fail('the receiver took no push request')
ids = {}
series_seen = {}
unit_leaf = False
for path in files:
    req = decode(os.path.dirname(args.proto), os.path.basename(args.proto), 'push.v1.PushRequest',
                 open(path, 'rb').read())
    for ser in req.get('series', []):
        labels = {}
        for lp in ser.get('labels', []):
            k, v = one(lp, 'name').decode(), one(lp, 'value', b'').decode()
            if k in labels:
                fail('%s: label %s twice' % (path, k))
            labels[k] = v
        if labels.get('__name__') != 'process_cpu' or labels.get('__delta__') != 'false':
            fail('%s: __name__ and __delta__ are %r' % (path, labels))
        service = labels.get('service_name')
        if not service:
            fail('%s: a series without service_name: %r' % (path, labels))
        series_seen[service] = labels
        for smp in ser.get('samples', []):
            uid = one(smp, 'ID', b'').decode()
            if not re.fullmatch(r'[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}', uid):
                fail('%s: the sample id %r is not a UUID' % (path, uid))
            key = tuple(sorted(labels.items()))
            if uid in ids and ids[uid] != key:
                fail('%s: the id %s of two series' % (path, uid))
            ids[uid] = key
            raw = one(smp, 'raw_profile', b'')
            try:
                pprof = gzip.decompress(raw)
            except (OSError, EOFError):
                fail('%s: a raw_profile is not gzipped' % path)
            if service == args.unit and b'leaf' in pprof and (not args.script or args.script.encode() in pprof):
                unit_leaf = True
print('push-check: %d requests, series %s' % (len(files), sorted(series_seen)))
if args.unit and not unit_leaf:
    fail('the unit %s has no pprof naming leaf in %s' % (args.unit, args.script))
for kv in args.label:
    k, v = kv.split('=', 1)
    for service, labels in series_seen.items():
        if labels.get(k) != v:
            fail('the series of %s has %s=%r, not %r' % (service, k, labels.get(k), v))
for k in args.no_label:
    for service, labels in series_seen.items():
        if k in labels:
            fail('the series of %s has %s' % (service, k))
if args.container:
    found = [lb for lb in series_seen.values() if lb.get('container_id') == args.container]
    if not found or (args.pod and found[0].get('k8s_pod_name') != args.pod):
        fail('no series with container_id %s and k8s_pod_name %s: %r' % (args.container, args.pod, series_seen))
print('push-check: ok')
