"""Messages as protoc --decode prints them (the protobuf text format), read into Python: a
message is a dict from field name to the list of its values (a repeated field's in order), a
value an int, a bytes string, or a message. For the push tests' checkers, which decode what
hotstack sends with protoc against the protocol's own .proto files."""
import re
import subprocess

TOKEN = re.compile(rb'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(:)?\s*|(\{)|(\})|("(?:[^"\\]|\\.)*")|(-?[0-9][0-9A-Za-z_.+-]*))')


def _unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != 0x5c:
            out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if 0x30 <= n <= 0x37:  # octal, as protoc writes bytes past ASCII
            j = i + 1
            while j < len(s) and j < i + 4 and 0x30 <= s[j] <= 0x37:
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
            continue
        out += {ord('n'): b'\n', ord('t'): b'\t', ord('r'): b'\r', ord('"'): b'"', ord("'"): b"'",
                ord('\\'): b'\\'}.get(n, bytes([n]))
        i += 2
    return bytes(out)


def parse(text):
    """The message of protoc's text output."""
    pos = 0
    stack = [{}]
    name = None
    while True:
        while pos < len(text) and text[pos:pos + 1].isspace():
            pos += 1
        if pos >= len(text):
            break
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError('cannot read the text at %d: %r' % (pos, text[pos:pos + 40]))
        pos = m.end()
        ident, _colon, opening, closing, string, number = m.groups()
        if closing:
            stack.pop()
            continue
        if opening:
            msg = {}
            stack[-1].setdefault(name, []).append(msg)
            stack.append(msg)
            name = None
            continue
        if ident is not None and name is None:
            name = ident.decode()
            continue
        if string is not None:
            value = _unescape(string[1:-1])
        elif number is not None:
            value = int(number, 0)
        else:  # an enum's name
            value = ident.decode()
        stack[-1].setdefault(name, []).append(value)
        name = None
    return stack[0]


def decode(proto_dir, proto_file, message, data):
    """data (bytes) decoded as message by protoc against proto_file under proto_dir."""
    out = subprocess.run(['protoc', '-I' + proto_dir, '--decode=' + message, proto_file], input=data,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if out.returncode:
        raise ValueError('protoc --decode=%s: %s' % (message, out.stderr.decode(errors='replace').strip()))
    return parse(out.stdout)


def one(msg, field, default=None):
    """A singular field's value, or default where it is not set."""
    v = msg.get(field)
    return v[0] if v else default
