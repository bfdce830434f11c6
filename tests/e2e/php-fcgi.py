"""Sends one request to a FastCGI server (PHP-FPM) over a unix socket, and prints its output.

usage: php-fcgi.py SOCKET SCRIPT [QUERY]
The request is a GET of SCRIPT (an absolute path) with QUERY as its query string; what the
script wrote to its standard output (headers, then body) is printed, what it wrote to its
standard error goes to ours. Exits 1 when the server closes the connection before it ends the
request. FastCGI 1.0: each record is an 8-byte header (version 1, type, request id, content
length, padding length) and its content.
"""
import socket
import struct
import sys

BEGIN_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 3, 4, 5, 6, 7
RESPONDER = 1
REQUEST_ID = 1


def record(rtype, content=b""):
    pad = -len(content) % 8
    return struct.pack(">BBHHBx", 1, rtype, REQUEST_ID, len(content), pad) + content + b"\0" * pad


def length(n):
    # lengths under 128 take a byte; longer ones four, with the top bit set
    return struct.pack(">B", n) if n < 128 else struct.pack(">I", n | 0x80000000)


def pairs(params):
    out = b""
    for k, v in params.items():
        k, v = k.encode(), v.encode()
        out += length(len(k)) + length(len(v)) + k + v
    return out


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def main():
    path, script = sys.argv[1], sys.argv[2]
    query = sys.argv[3] if len(sys.argv) > 3 else ""
    params = {
        "GATEWAY_INTERFACE": "CGI/1.1",
        "SERVER_SOFTWARE": "php-fcgi.py",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "REQUEST_METHOD": "GET",
        "SCRIPT_FILENAME": script,
        "SCRIPT_NAME": "/" + script.rsplit("/", 1)[-1],
        "REQUEST_URI": "/" + script.rsplit("/", 1)[-1] + ("?" + query if query else ""),
        "QUERY_STRING": query,
        "DOCUMENT_ROOT": script.rsplit("/", 1)[0] or "/",
        "CONTENT_LENGTH": "0",
    }
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    body = struct.pack(">HB5x", RESPONDER, 0)  # role, flags: the server closes when done
    sock.sendall(record(BEGIN_REQUEST, body) + record(PARAMS, pairs(params)) + record(PARAMS) + record(STDIN))
    while True:
        head = read_exact(sock, 8)
        if head is None:
            print("php-fcgi.py: the connection closed before the request ended", file=sys.stderr)
            return 1
        _, rtype, _, clen, plen = struct.unpack(">BBHHBx", head)
        content = read_exact(sock, clen + plen)
        if content is None:
            print("php-fcgi.py: a record cut short", file=sys.stderr)
            return 1
        content = content[:clen]
        if rtype == STDOUT:
            sys.stdout.buffer.write(content)
        elif rtype == STDERR:
            sys.stderr.buffer.write(content)
        elif rtype == END_REQUEST:
            app_status, proto_status = struct.unpack(">IB3x", content)
            sys.stdout.flush()
            return 0 if proto_status == 0 else 1


sys.exit(main())
