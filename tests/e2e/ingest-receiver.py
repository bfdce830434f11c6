#!/usr/bin/env python3
"""A profile store's endpoints, for the push tests:

- Pyroscope's ingest API: POST /ingest with the query parameters name, from and until
  (required; unix seconds), format (pprof here), sampleRate, spyName; the body either the
  profile itself or multipart/form-data with the profile in a part named "profile". Saved as
  DIR/N.pb.gz.
- Pyroscope's push API (Connect, unary): POST /push.v1.PusherService/Push, Content-Type
  application/proto, the body a push.v1.PushRequest. Saved as DIR/N.push.pb.
- OTLP/HTTP profiles: POST /v1development/profiles, Content-Type application/x-protobuf, the
  body gzipped (Content-Encoding: gzip), the header OTLP-Profiles-Development-Version once and
  1 (the version whose messages this checks): else 400, as a receiver that checks it does.
  Saved, decompressed, as DIR/N.otlp.pb.

Each request taken is saved with DIR/N.json beside it (its query parameters and headers); a
request that breaks the contract gets 400 and is saved nowhere.

    ingest-receiver.py PORT DIR [MODE]

MODE, how the store misbehaves:
    --fail-first N   the first N requests answered 503
    --redirect CODE  an endpoint answered CODE (301, 302, 307, 308) with Location /moved and
                     its path, where the profile is taken
    --hang           each profile taken (saved), then no answer at all: the connection is
                     held open for an hour
    --endless        each profile taken, then 200 with a body that never ends
Writes DIR/ready once it listens."""
import argparse
import email.parser
import gzip
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument('port', type=int)
ap.add_argument('out')
ap.add_argument('--fail-first', type=int, default=0)
ap.add_argument('--redirect', type=int, default=0)
ap.add_argument('--hang', action='store_true')
ap.add_argument('--endless', action='store_true')
args = ap.parse_args()
lock = threading.Lock()
OTLP_PATH = '/v1development/profiles'
PUSH_PATH = '/push.v1.PusherService/Push'
ENDPOINTS = ('/ingest', OTLP_PATH, PUSH_PATH)
count = {'n': 0, 'requests': 0}


def profile_of(content_type, body):
    """The profile in a request's body: the body, or its multipart part "profile"."""
    if not content_type.startswith('multipart/form-data'):
        return body
    msg = email.parser.BytesParser().parsebytes(
        b'Content-Type: ' + content_type.encode() + b'\r\n\r\n' + body)
    for part in msg.get_payload() if msg.is_multipart() else []:
        disposition = part.get('Content-Disposition', '')
        if 'name="profile"' in disposition:
            return part.get_payload(decode=True)
    return None


class Ingest(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def answer(self, code, text, headers=()):
        data = text.encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        with lock:
            count['requests'] += 1
            if count['requests'] <= args.fail_first:
                return self.answer(503, 'busy')
        path = url.path
        if args.redirect:
            if path in ENDPOINTS:
                return self.answer(args.redirect, 'moved', [('Location', '/moved' + path + '?' + url.query)])
            if path.startswith('/moved/'):
                path = path[len('/moved'):]
        if path == OTLP_PATH:
            return self.otlp(body)
        if path == PUSH_PATH:
            return self.push(body)
        if path != '/ingest':
            return self.answer(404, 'no such endpoint')
        q = dict(urllib.parse.parse_qsl(url.query))
        for k in ('name', 'from', 'until'):
            if k not in q:
                return self.answer(400, 'missing ' + k)
        if not q['from'].isdigit() or not q['until'].isdigit() or int(q['from']) > int(q['until']):
            return self.answer(400, 'bad from/until')
        if q.get('format', 'folded') != 'pprof':
            return self.answer(400, 'format is not pprof')
        profile = profile_of(self.headers.get('Content-Type', ''), body)
        if not profile:
            return self.answer(400, 'no profile in the body')
        return self.taken(profile, 'pb.gz', q)

    def otlp(self, body):
        if self.headers.get('Content-Type') != 'application/x-protobuf':
            return self.answer(400, 'Content-Type is not application/x-protobuf')
        versions = self.headers.get_all('OTLP-Profiles-Development-Version') or []
        if versions != ['1']:
            return self.answer(400, 'OTLP-Profiles-Development-Version is not 1: %r' % versions)
        if self.headers.get('Content-Encoding') == 'gzip':
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError):
                return self.answer(400, 'the body is not gzip')
        return self.taken(body, 'otlp.pb', {}, 'application/x-protobuf')

    def push(self, body):
        if self.headers.get('Content-Type') != 'application/proto':
            return self.answer(400, 'Content-Type is not application/proto')
        return self.taken(body, 'push.pb', {}, 'application/proto')

    def taken(self, data, ext, q, answer_type=None):
        with lock:
            count['n'] += 1
            n = count['n']
        with open(os.path.join(args.out, '%d.%s' % (n, ext)), 'wb') as f:
            f.write(data)
        meta = {'query': q, 'headers': {k.lower(): v for k, v in self.headers.items()}}
        with open(os.path.join(args.out, '%d.json' % n), 'w') as f:
            json.dump(meta, f)
        if args.hang:
            time.sleep(3600)
            return None
        if args.endless:
            self.send_response(200)
            self.send_header('Content-Type', 'text/plain')
            self.send_header('Connection', 'close')
            self.end_headers()
            chunk = b'ok ' * 1024
            try:
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return None
        if answer_type: # an empty message: all taken
            return self.answer(200, '', [('Content-Type', answer_type)])
        return self.answer(200, '')

    def log_message(self, *args):
        pass


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(('127.0.0.1', args.port), Ingest)
open(os.path.join(args.out, 'ready'), 'w').close()
server.serve_forever()
