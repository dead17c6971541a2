#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""tools/layers.py, on a copy of src/ with one line added: an #include that points up, a system
header a layer may not use, or a directory in no layer fails `check` with the file and line; an
include tree holds a layer and those below it, nothing more; the real src/ passes.

  test-layers.py LAYERS_PY SRC"""
import os
import shutil
import subprocess
import sys
import tempfile

LAYERS_PY, SRC = sys.argv[1], sys.argv[2]
n = 0
failed = 0


def ok(cond, name):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, name))
    if not cond:
        failed += 1


def check(src):
    r = subprocess.run([sys.executable, LAYERS_PY, "check", src], capture_output=True, text=True)
    return r.returncode, r.stderr


def with_line(tmp, rel, line):
    """A copy of SRC under tmp with LINE appended to REL."""
    copy = os.path.join(tmp, "src")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(SRC, copy)
    if rel:
        with open(os.path.join(copy, rel), "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return copy


with tempfile.TemporaryDirectory() as tmp:
    rc, err = check(SRC)
    ok(rc == 0 and err == "", "src/ as it is passes")

    rc, err = check(with_line(tmp, "plan/plan.c", '#include "unit/unit-build.h"'))
    ok(rc == 1 and "src/plan/plan.c:" in err and "unit/unit-build.h" in err,
       "plan including unit is refused with file and line")

    rc, err = check(with_line(tmp, "util/log.c", '#include "net/net-rule.h"'))
    ok(rc == 1 and "src/util/log.c:" in err, "util including net is refused")

    rc, err = check(with_line(tmp, "cli/verb-run.c", '#include "bpfd/filter.h"'))
    ok(rc == 1 and "bpfd/filter.h" in err, "a sideways include into a program is refused")

    rc, err = check(with_line(tmp, "plan/plan.c", "#include <systemd/sd-bus.h>"))
    ok(rc == 1 and "<systemd/sd-bus.h>" in err, "plan including sd-bus is refused")

    rc, err = check(with_line(tmp, "unit/unit-build.c", "#include <lua.h>"))
    ok(rc == 1 and "<lua.h>" in err, "Lua outside policy/ is refused")

    rc, err = check(with_line(tmp, "cli/verb-run.c", '#include "policy/policy.h"'))
    ok(rc == 0, "cli including policy passes")

    copy = with_line(tmp, None, None)
    os.mkdir(os.path.join(copy, "extra"))
    rc, err = check(copy)
    ok(rc == 1 and "extra/: a directory in no layer" in err, "a directory in no layer is refused")

    trees = os.path.join(tmp, "layers")
    r = subprocess.run([sys.executable, LAYERS_PY, "include-trees", SRC, trees])
    ok(r.returncode == 0, "include-trees runs")
    ok(sorted(os.listdir(os.path.join(trees, "plan"))) == ["net", "plan", "util"],
       "plan's tree holds plan, net and util alone")
    ok(os.path.realpath(os.path.join(trees, "plan", "net")) == os.path.realpath(os.path.join(SRC, "net")),
       "a link of the tree leads to the layer's directory")
    ok(not os.path.exists(os.path.join(trees, "util", "plan")), "util's tree has no plan")
    cc = shutil.which("cc")
    if cc:
        def compiles(header):
            c = os.path.join(tmp, "probe.c")
            with open(c, "w", encoding="utf-8") as f:
                f.write('#include "%s"\n' % header)
            return subprocess.run([cc, "-fsyntax-only", "-D_GNU_SOURCE", "-I", os.path.join(trees, "plan"), c],
                                  capture_output=True).returncode == 0
        ok(compiles("util/macro.h"), "through plan's tree, a header below compiles")
        ok(not compiles("unit/unit-build.h"), "through plan's tree, a header above finds no file")
    else:
        print("ok %d # SKIP no cc" % (n + 1))
        n += 1
    r = subprocess.run([sys.executable, LAYERS_PY, "configure", SRC, os.path.join(tmp, "conf")],
                       capture_output=True, text=True)
    order = [l.split(":") for l in r.stdout.split()]
    seen, ordered = set(), True
    for layer, below in order:
        ordered = ordered and all(b in seen for b in below.split(",") if b)
        seen.add(layer)
    ok(r.returncode == 0 and ordered and {"util", "plan", "cli"} <= seen,
       "configure lists each library after the layers below it")
    ok(not seen & {"bpfd", "confine"}, "configure lists no program as a library")
    ok(dict(order).get("plan") == "net,util", "configure links plan with net and util alone")
    os.symlink(SRC, os.path.join(trees, "util", "stale"))
    subprocess.run([sys.executable, LAYERS_PY, "include-trees", SRC, trees], check=True)
    ok(os.listdir(os.path.join(trees, "util")) == ["util"], "a second run removes what is not the layer's")

print("1..%d" % n)
sys.exit(1 if failed else 0)
