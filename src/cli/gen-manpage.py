#!/usr/bin/env python3
"""Writes hotstack's man page, hotstack.1, from the built binary's own help: `hotstack --help`
for the command list and `hotstack CMD --help` for each command's section, so that the page
says what --help says.

usage: gen-manpage.py HOTSTACK OUT VERSION
"""
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def roff(text):
    """Text as roff reads it literally: backslashes escaped, dashes as hyphen-minus, no line
    taken for a request."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def main():
    hotstack, out, version = sys.argv[1:4]
    top = run(hotstack, "--help")
    commands = re.findall(r"^  (\w+)\s+(.*)$", top.split("commands:", 1)[1], re.M)
    if not commands:
        sys.exit("gen-manpage.py: no commands in '%s --help'" % hotstack)
    page = [
        '.TH HOTSTACK 1 "" "hotstack %s" "User Commands"' % version,
        ".SH NAME",
        "hotstack \\- sampling CPU profiler for Linux: record stacks, report, flame graphs",
        ".SH SYNOPSIS",
        ".B hotstack",
        ".I command",
        "[\\fIoptions\\fR]",
        ".br",
        ".B hotstack help",
        ".I command",
        ".SH COMMANDS",
    ]
    for name, desc in commands:
        page += [".TP 10", ".B " + name, roff(desc)]
    for name, _ in commands:
        page += [
            '.SH "HOTSTACK %s"' % name.upper(),
            ".nf",
            roff(run(hotstack, name, "--help")),
            ".fi",
        ]
    page += [
        ".SH SEE ALSO",
        ".BR perf-record (1),",
        ".BR perf-report (1)",
        "",
    ]
    with open(out, "w") as f:
        f.write("\n".join(page))


if __name__ == "__main__":
    main()
