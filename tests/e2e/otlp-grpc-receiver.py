#!/usr/bin/python3
"""An OTLP/gRPC profiles receiver for the push tests: the unary method
opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export, served with
Debian's grpcio (python3-grpcio). The metadata otlp-profiles-development-version must be there
once and 1, else INVALID_ARGUMENT, as a receiver that checks it answers. Each request taken is
saved as DIR/N.otlp.pb (the message, decompressed by gRPC) with DIR/N.json beside it (its
metadata), and answered with an empty ExportProfilesServiceResponse.

    otlp-grpc-receiver.py PORT DIR [--fail-first N]

--fail-first N: the first N calls answered UNAVAILABLE. Writes DIR/ready once it listens."""
import argparse
import json
import os
import threading
from concurrent import futures

import grpc

ap = argparse.ArgumentParser()
ap.add_argument('port', type=int)
ap.add_argument('out')
ap.add_argument('--fail-first', type=int, default=0)
args = ap.parse_args()
lock = threading.Lock()
count = {'n': 0, 'calls': 0}


def export(request, context):
    with lock:
        count['calls'] += 1
        if count['calls'] <= args.fail_first:
            context.abort(grpc.StatusCode.UNAVAILABLE, 'busy')
    md = context.invocation_metadata()
    versions = [v for k, v in md if k == 'otlp-profiles-development-version']
    if versions != ['1']:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      'otlp-profiles-development-version is not 1: %r' % versions)
    with lock:
        count['n'] += 1
        n = count['n']
    with open(os.path.join(args.out, '%d.otlp.pb' % n), 'wb') as f:
        f.write(request)
    with open(os.path.join(args.out, '%d.json' % n), 'w') as f:
        json.dump({'metadata': {k: v for k, v in md if isinstance(v, str)}}, f)
    return b''


handler = grpc.method_handlers_generic_handler(
    'opentelemetry.proto.collector.profiles.v1development.ProfilesService',
    {'Export': grpc.unary_unary_rpc_method_handler(export)})
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[handler])
server.add_insecure_port('127.0.0.1:%d' % args.port)
server.start()
open(os.path.join(args.out, 'ready'), 'w').close()
server.wait_for_termination()
