#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Turns text files into a C source holding them as string constants.

Used by lua/meson.build (our Lua library, registered as package.preload loaders) and
policies/meson.build (the recommended configuration). The generated file defines one
`const EmbeddedFile SYMBOL[]` array (see src/policy/embedded.h), ended by a NULL entry.

  embed-files.py --symbol NAME [--modules] [--luac LUAC | --code CODE...] --output OUT.c FILE...

With --modules an entry is named after the Lua module the file provides
(lua/scudo/match.lua -> "scudo.match"); otherwise after the file's basename.
With --luac each file is also compiled to bytecode, which loads several times faster
than the source; the source stays embedded too, for when the bytecode does not fit the
Lua library at run time. The bytecode keeps its line information (so tracebacks of internal
errors still say file:line) and the upvalue name _ENV (so that they still say `global 'x'`),
but not the names of local variables and of other upvalues (an error says "attempt to index
a nil value" without "(local 'x')"): interning those names was most of the time spent
loading a module (see drop_names).
With --code the bytecode is given, one file per input (policies: their definitions,
checked and frozen at build time by tools/policy-freeze.c).
"""
import argparse
import os
import subprocess
import sys
import tempfile


def module_name(path):
    parts = os.path.normpath(path).split(os.sep)
    # the module path starts at the directory called "scudo"
    i = len(parts) - 1 - parts[::-1].index("scudo")
    name = ".".join(parts[i:])
    return name[:-len(".lua")] if name.endswith(".lua") else name


class _Chunk:
    """A reader of Lua 5.4 bytecode (lundump.c) that copies what it reads, less the names
    of local variables and of upvalues other than _ENV."""

    def __init__(self, data):
        self.data, self.pos, self.out = data, 0, bytearray()

    def take(self, n, keep=True):
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        if keep:
            self.out += self.data[self.pos:self.pos + n]
        self.pos += n

    def size(self, keep=True):
        # lundump.c loadSize: 7 bits a byte, most significant first, the last byte has 0x80
        start, x = self.pos, 0
        while True:
            self.take(1, False)
            b = self.data[self.pos - 1]
            x = (x << 7) | (b & 0x7F)
            if b & 0x80:
                break
        if keep:
            self.out += self.data[start:self.pos]
        return x

    def string(self, keep=True):
        n = self.size(keep)     # 0: no string, else length + 1
        if n:
            self.take(n - 1, keep)

    def function(self):
        self.string()                   # source
        self.size()                     # linedefined
        self.size()                     # lastlinedefined
        self.take(3)                    # numparams, is_vararg, maxstacksize
        self.take(4 * self.size())      # code
        for _ in range(self.size()):    # constants
            self.take(1)
            tag = self.data[self.pos - 1]
            if tag in (0x03, 0x13):     # integer, float
                self.take(8)
            elif tag in (0x04, 0x14):   # short, long string
                self.string()
            elif tag not in (0x00, 0x01, 0x11):
                raise ValueError("constant tag %#x" % tag)
        self.take(3 * self.size())      # upvalues: instack, idx, kind
        for _ in range(self.size()):    # nested functions
            self.function()
        self.take(self.size())          # lineinfo
        for _ in range(self.size()):    # abslineinfo: pc, line
            self.size()
            self.size()
        n = self.size(False)            # locvars: dropped, an empty list written
        self.out += b"\x80"
        for _ in range(n):
            self.string(False)
            self.size(False)
            self.size(False)
        for _ in range(self.size()):    # upvalue names: only _ENV's kept, the others empty
            start = self.pos
            self.string(False)
            name = self.data[start:self.pos]
            self.out += name if name == b"\x85_ENV" else b"\x80"


# lua.h LUA_SIGNATURE, version 5.4, official format, LUAC_DATA, then the sizes of
# Instruction, lua_Integer and lua_Number that the layout above assumes
_HEADER = b"\x1bLua\x54\x00\x19\x93\r\n\x1a\n\x04\x08\x08"
_HEADER_SIZE = len(_HEADER) + 8 + 8 + 1     # + LUAC_INT, LUAC_NUM, number of upvalues


def drop_names(code):
    """The bytecode without the names of local variables and upvalues (but _ENV), or as it
    is if it is not the Lua 5.4 format we know (the result must then still load, as luac
    made it)."""
    if not code.startswith(_HEADER):
        return code
    c = _Chunk(code)
    try:
        c.take(_HEADER_SIZE)
        c.function()
    except (ValueError, IndexError):
        return code
    return bytes(c.out) if c.pos == len(code) else code


def c_string(data):
    out, line = [], []
    for b in data:
        if b == 0x0A:
            line.append("\\n")
            out.append('"%s"' % "".join(line))
            line = []
        elif b in (0x22, 0x5C):
            line.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F and b != 0x3F:   # '?' escaped: no trigraphs
            line.append(chr(b))
        else:
            line.append("\\%03o" % b)
    if line or not out:
        out.append('"%s"' % "".join(line))
    return "\n        ".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbol", required=True)
    ap.add_argument("--modules", action="store_true")
    ap.add_argument("--output", required=True)
    ap.add_argument("--luac")
    ap.add_argument("--code", nargs="+", default=[],
                    help="bytecode made at build time, one file per input in order "
                         "(the built-in policies' frozen definitions)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.code and len(a.code) != len(a.files):
        sys.exit("embed-files: --code needs one file per input")

    names = set()
    body = ["/* Generated by tools/embed-files.py: do not edit. */",
            '#include "policy/embedded.h"', ""]
    entries = []
    for n, path in enumerate(a.files):
        name = module_name(path) if a.modules else os.path.basename(path)
        if name in names:
            sys.exit("embed-files: duplicate name %r" % name)
        names.add(name)
        with open(path, "rb") as f:
            data = f.read()
        body.append("static const char file_%d[] =\n        %s;" % (n, c_string(data)))
        if a.code:
            with open(a.code[n], "rb") as f:
                code = f.read()
            body.append("static const char code_%d[] =\n        %s;" % (n, c_string(code)))
            entries.append('        { "%s", file_%d, sizeof(file_%d) - 1, code_%d, sizeof(code_%d) - 1 },'
                           % (name, n, n, n, n))
        elif a.luac:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "out.luac")
                subprocess.run([a.luac, "-o", out, path], check=True)
                with open(out, "rb") as f:
                    code = drop_names(f.read())
            body.append("static const char code_%d[] =\n        %s;" % (n, c_string(code)))
            entries.append('        { "%s", file_%d, sizeof(file_%d) - 1, code_%d, sizeof(code_%d) - 1 },'
                           % (name, n, n, n, n))
        else:
            entries.append('        { "%s", file_%d, sizeof(file_%d) - 1, NULL, 0 },' % (name, n, n))
    body.append("")
    body.append("const EmbeddedFile %s[] = {" % a.symbol)
    body.extend(entries)
    body.append("        { NULL, NULL, 0, NULL, 0 },")
    body.append("};")
    tmp = a.output + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(body) + "\n")
    os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
