#!/usr/bin/env python3
"""A profile store's ingest endpoint, as Pyroscope's HTTP API defines it, for the push tests.

POST /ingest with the query parameters name, from and until (required; unix seconds),
format (pprof here), sampleRate, spyName; the body either the profile itself or
multipart/form-data with the profile in a part named "profile". Each profile taken is saved as
DIR/N.pb.gz with DIR/N.json beside it (its query parameters and headers); a request that
breaks the contract gets 400 and is saved nowhere.

    ingest-receiver.py PORT DIR [--fail-first N]   (N: answer the first N requests 503)
Writes DIR/ready once it listens."""
import email.parser
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, out = int(sys.argv[1]), sys.argv[2]
fail_first = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == '--fail-first' else 0
lock = threading.Lock()
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
    def answer(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        with lock:
            count['requests'] += 1
            if count['requests'] <= fail_first:
                return self.answer(503, 'busy')
        if url.path != '/ingest':
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
        with lock:
            count['n'] += 1
            n = count['n']
        with open(os.path.join(out, '%d.pb.gz' % n), 'wb') as f:
            f.write(profile)
        meta = {'query': q, 'headers': {k.lower(): v for k, v in self.headers.items()}}
        with open(os.path.join(out, '%d.json' % n), 'w') as f:
            json.dump(meta, f)
        self.answer(200, '')

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(('127.0.0.1', port), Ingest)
open(os.path.join(out, 'ready'), 'w').close()
server.serve_forever()
