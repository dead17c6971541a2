# SPDX-License-Identifier: MIT OR Apache-2.0
"""Text past LUAL_BUFFERSIZE, where a luaL_Buffer in the policy engine's C primitives leaves
the C frame for a box on the Lua stack: an untrusted project file given to `scudo check` and
`scudo trust`, a hook, and the literal text of a path before a variable. Run against the ASan
build (as CI does), a misuse of the buffer is a sanitizer report and a failed command; the plan
is checked to be the right one too, not only that nothing crashed."""
import json
import os
import shlex
import subprocess
import tempfile

import pytest


def lual_buffersize():
    """LUAL_BUFFERSIZE as the Lua headers scudo is built with define it."""
    cflags = subprocess.run(["pkg-config", "--cflags", "lua5.4"], capture_output=True, text=True,
                            check=True).stdout.split()
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "b.c"), os.path.join(d, "b")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include <lauxlib.h>\n'
                    'int main(void) { printf("%d\\n", (int) LUAL_BUFFERSIZE); return 0; }\n')
        subprocess.run(["cc", *cflags, src, "-o", exe], check=True, capture_output=True)
        return int(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)


B = lual_buffersize()


def text(n, kind):
    """n bytes: letters or digits, over and over."""
    return "".join((chr(ord("a") + i % 26) if kind == "x" else chr(ord("0") + i % 10)) for i in range(n))


def write(tb, path, content):
    r = tb.dev("mkdir -p $(dirname %s) && cat > %s" % (shlex.quote(path), shlex.quote(path)),
               input=content.encode())
    assert r.rc == 0, r


def no_sanitizer_report(r):
    assert "Sanitizer" not in r.err and "runtime error" not in r.err, r


SIZES = range(B - 3, B + 4)


def test_untrusted_file_check_trust_then_the_plan(tb, work):
    # A first profile of 30,000 empty tables fills the engine's arena, so that the buffers
    # after it come from malloc(), where ASan sees a misuse; then one profile per size whose
    # unit.Description has two elements of that size before its separators. Each evaluation
    # stays far inside its 5 s deadline, on a loaded machine too.
    fill = ["[fill]", 'match = ["nothing-matches-this"]',
            "unit.Description = [" + ",".join(["{}"] * 30000) + "]", ""]
    lines = []
    want = {}
    for n in SIZES:
        x, y = text(n, "x"), text(n, "y")
        lines += ["[p%d]" % n, 'match = ["true p%d"]' % n,
                  'unit.Description = ["%s", "b", "%s", "d"]' % (x, y), ""]
        want[n] = "%s b %s d" % (x, y)
    write(tb, work + "/.scudo.toml", "\n".join(fill + lines))

    r = tb.scudo(["check"], cwd=work)
    no_sanitizer_report(r)
    # Only the list of tables is refused (line 3); every list of long elements passes.
    assert r.rc == 1 and ".scudo.toml:3: unit.Description: a list may not hold tables" in r.out, r
    assert "1 error(s)" in r.out, r

    # scudo trust reads all of it too before it refuses the file for that one error.
    r = tb.scudo(["trust", "--yes"], cwd=work)
    no_sanitizer_report(r)
    assert r.rc == 125 and "has errors, fix them first" in r.err, r
    assert ".scudo.toml:3: unit.Description: a list may not hold tables" in r.err, r
    assert ".scudo.toml:%d:" % (len(fill) + 3) not in r.err, r

    # Without the list of tables, scudo trust shows each list as the text it becomes.
    write(tb, work + "/.scudo.toml", "\n".join(lines))
    r = tb.scudo(["trust", "--yes"], cwd=work)
    no_sanitizer_report(r)
    assert r.rc == 0 and "trusted %s/.scudo.toml" % work in r.out, r
    for n in SIZES:
        assert "unit: Description = %s\n" % want[n] in r.out, (n, r)

    for n in SIZES:
        r = tb.scudo(["explain", "--json", "true", "p%d" % n], cwd=work)
        no_sanitizer_report(r)
        assert r.rc == 0, r
        d = json.loads(r.out)
        got = [u["value"] for u in d["unit"] if u["name"] == "Description"]
        assert got == [want[n]], (n, [len(g) for g in got])


def test_hook_sets_a_list_of_long_elements(tb, work):
    body = ["return {"]
    want = {}
    for n in SIZES:
        x, y = text(n, "x"), text(n, "y")
        body.append("  p%d = { match = { 'true p%d' }, hook = function()\n"
                    "    local v = { '%s', 'b', '%s', 'd' }\n"
                    "    assert(scudo.unit.text(v) == table.concat(v, ' '))\n"
                    "    scudo.unit.set('Description', v)\n"
                    "  end }," % (n, n, x, y))
        want[n] = "%s b %s d" % (x, y)
    body.append("}\n")
    write(tb, work + "/.scudo.lua", "\n".join(body))
    r = tb.scudo(["trust", "--yes", ".scudo.lua"], cwd=work)
    assert r.rc == 0, r
    for n in SIZES:
        r = tb.scudo(["explain", "--json", "true", "p%d" % n], cwd=work)
        no_sanitizer_report(r)
        assert r.rc == 0, r
        got = [u["value"] for u in json.loads(r.out)["unit"] if u["name"] == "Description"]
        assert got == [want[n]], (n, [len(g) for g in got])


def test_long_text_before_a_variable_gives_the_path(tb, work):
    # The report's profile, in components short enough to be file names: the literal text
    # before ${PWD} past LUAL_BUFFERSIZE, the path in the plan exactly that text and the
    # start directory.
    for n in (B - 1, B, B + 1, 2 * B + 1):
        lit = ""
        while len(lit) < n:
            lit += "/" + "a" * 60
        lit = lit[:n - 1] + "z"
        write(tb, "/home/dev/.config/scudo/config.toml",
              '[long]\nmatch = ["true long"]\nfilesystem.write = ["%s/${PWD}/x"]\n' % lit)
        try:
            r = tb.scudo(["explain", "--json", "true", "long"], cwd=work)
        finally:
            tb.dev("rm -f ~/.config/scudo/config.toml")
        no_sanitizer_report(r)
        assert r.rc == 0, r
        d = json.loads(r.out)
        path = lit + work + "/x"
        got = [f for f in d["filesystem"] if f["written"].endswith("/${PWD}/x")]
        assert [(f["access"], f["path"]) for f in got] == [("write", path)], (n, got, d["dropped"])
