#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""No delegable built-in profile shows a tool's credentials file as it is (issue 28): with a home
that holds each file real tools keep credentials in, in its own format (the ones
src/plan/config-filter.c reads: INI-like, TOML, YAML, .properties, XML, sbt, netrc, JSON) and
the files that hold nothing but credentials, `scudo explain --json` of every delegable profile
of the built-in profiles' table (profile_table.py) must show each file hidden, or as a copy less its
credentials; never readable or writable as it is.

  test-credential-files.py SCUDO"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_table import TABLE, Tap, fake_machine  # noqa: E402

GH = "ghp_" + "C0ffeeBeef" * 4
# path below the home: what the tool writes there, a credential in it
FILES = {
    # by line: INI-like, TOML, YAML, .properties, XML, sbt, netrc
    ".npmrc": "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_%s\n" % GH[4:],
    ".pypirc": "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCredFile\n",
    ".pip/pip.conf": "[global]\nindex-url = https://dev:pipPw2024@pypi.example/simple\n",
    ".config/pip/pip.conf": "[global]\nindex-url = https://dev:pipPw2024@pypi.example/simple\n",
    ".netrc": "machine api.example.com\n  login dev\n  password netrcPw2024\n",
    ".git-credentials": "https://dev:%s@github.com\n" % GH,
    ".config/git/credentials": "https://dev:%s@github.com\n" % GH,
    ".m2/settings.xml": "<settings><servers><server><id>x</id>\n<password>mvnPw2024</password>\n"
                        "</server></servers></settings>\n",
    ".m2/settings-security.xml": "<settingsSecurity>\n<master>{jSMOWnoPFgsHVpMvz5VrIt5kRbzGpI8u+9EF1iFQyJQ=}"
                                 "</master>\n</settingsSecurity>\n",
    ".gradle/gradle.properties": "org.gradle.jvmargs=-Xmx2g\nmavenPassword=gradlePw2024\n",
    ".nuget/NuGet/NuGet.Config": "<configuration>\n<packageSourceCredentials>\n<feed>\n"
                                 "<add key=\"ClearTextPassword\" value=\"nugetPw2024\" />\n</feed>\n"
                                 "</packageSourceCredentials>\n</configuration>\n",
    ".config/NuGet/NuGet.Config": "<configuration>\n<add key=\"ClearTextPassword\" value=\"nugetPw2024\" />\n"
                                  "</configuration>\n",
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: gho_%s\n" % GH[4:],
    ".config/hub": "github.com:\n- user: dev\n  oauth_token: %s\n" % GH,
    ".gem/credentials": "---\n:rubygems_api_key: rubygems_0123456789abcdef0123456789abcdef0123456789abcdef\n",
    ".gemrc": "---\n:sources:\n- https://dev:gemrcPw2024@gems.example/\n",
    ".bundle/config": "---\nBUNDLE_GEMS__EXAMPLE__COM: \"dev:bundlePw2024\"\n",
    ".sbt/.credentials": "realm=Nexus\nhost=nexus.example\nuser=dev\npassword=sbtPw2024\n",
    ".sbt/1.0/global.sbt": "credentials += Credentials(\"Nexus\", \"nexus.example\", \"dev\", \"sbtPw2024\")\n",
    ".sbt/1.0/plugins/credentials.sbt": "credentials += Credentials(\n  \"Nexus\",\n  \"nexus.example\",\n"
                                        "  \"dev\",\n  \"sbtPw2024\")\n",
    ".sbt/1.0/.credentials": "realm=Nexus\nhost=nexus.example\nuser=dev\npassword=sbtPw2024\n",
    ".ivy2/.credentials": "realm=Nexus\nhost=nexus.example\nuser=dev\npassword=ivyPw2024\n",
    ".cargo/credentials.toml": "[registry]\ntoken = \"cio0123456789abcdefCredFile\"\n",
    ".cargo/config.toml": "[registries.x]\ntoken = \"cio0123456789abcdefCredFile\"\n",
    ".cabal/config": "repository hackage.haskell.org\n  password: cabalPw2024\n",
    ".config/cabal/config": "repository hackage.haskell.org\n  password: cabalPw2024\n",
    ".condarc": "channels:\n  - https://conda.anaconda.org/t/ab-0123456789abcdef/mychannel\n",
    ".config/go/env": "GOPROXY=https://dev:goPw2024@proxy.example/\n",
    ".stack/config.yaml": "hackage:\n  password: stackPw2024\n",
    ".config/pypoetry/auth.toml": "[http-basic.x]\npassword = \"poetryPw2024\"\n",
    ".config/uv/uv.toml": "[[index]]\nurl = \"https://dev:uvPw2024@pypi.example/simple\"\n",
    ".yarnrc.yml": "npmAuthToken: \"npm_%s\"\n" % GH[4:],
    ".aws/credentials": "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    ".kube/config": "users:\n- name: dev\n  user:\n    token: kube0123456789abcdefXYZ\n",
    ".hex/hex.config": "{'$write_key', <<\"hexKey2024\">>}.\n",
    # JSON
    ".docker/config.json": "{\"auths\": {\"ghcr.io\": {\"auth\": \"ZGV2OmRvY2tlclB3MjAyNA==\"}}}\n",
    ".composer/auth.json": "{\"http-basic\": {\"repo.example\": {\"password\": \"composerPw2024\"}}}\n",
    ".config/composer/auth.json": "{\"http-basic\": {\"repo.example\": {\"password\": \"composerPw2024\"}}}\n",
    ".composer/config.json": "{\"config\": {\"github-oauth\": {\"github.com\": \"%s\"}}}\n" % GH,
    ".config/composer/config.json": "{\"config\": {\"github-oauth\": {\"github.com\": \"%s\"}}}\n" % GH,
}


def governing(entries, path):
    """The entry that decides what the command can do to `path`: its own, or the closest above."""
    best = None
    for e in entries:
        p = e["path"]
        if (path == p or path.startswith(p.rstrip("/") + "/")) and (best is None or len(p) > len(best["path"])):
            best = e
    return best


def main():
    scudo = os.path.abspath(sys.argv[1])
    tap = Tap()
    check = tap.check

    with tempfile.TemporaryDirectory() as root:
        home, proj, env = fake_machine(root)
        for rel, text in FILES.items():
            p = os.path.join(home, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
            os.chmod(p, 0o600)

        delegable = {k: v for k, v in TABLE.items() if v[3]}
        check(len(delegable) >= 20, "the table has the delegable profiles (%d)" % len(delegable))
        for name, (argv, *_rest) in sorted(delegable.items()):
            r = subprocess.run([scudo, "explain", "--json"] + argv, cwd=proj, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            try:
                d = json.loads(r.stdout)
            except ValueError:
                check(False, "%s: explain" % name, r.stderr)
                continue
            shown = []
            for rel in FILES:
                path = os.path.join(home, rel)
                g = governing(d["filesystem"], path)
                if not g or g["access"] not in ("read", "write"):
                    continue
                copy = g["path"] == path and "a copy without them" in g.get("reason", "")
                if not copy:
                    shown.append((rel, g["access"], g["written"]))
            check(d["delegable"] and not shown,
                  "%s: every credentials file hidden or a copy less its credentials" % name, shown)
    tap.done()


if __name__ == "__main__":
    main()
