# SPDX-License-Identifier: MIT OR Apache-2.0
"""What the built-in profiles' tests share (test-default-profiles.py, test-credential-files.py):
the table of every profile with a match, the TAP reporter, and the fake machine explain runs
against (a home with a project, and a directory of stand-ins for every tool of the table)."""
import os
import sys

NPM = ["registry.npmjs.org:443", "nodejs.org:443"]
PYPI = ["pypi.org:443", "files.pythonhosted.org:443"]
MAVEN = ["repo.maven.apache.org:443", "repo1.maven.org:443"]
CRATES = ["crates.io:443", "index.crates.io:443", "static.crates.io:443"]
GO = ["proxy.golang.org:443", "sum.golang.org:443"]
JS_BASE = {"${XDG_CACHE_HOME}/node-gyp": "w+dir", "~/.nvm": "r"}
COREPACK = "${XDG_CACHE_HOME}/node/corepack"

# profile: (argv, grants {written: "w" | "r" | "w+dir" | "w+file" | "d"}, hosts (None: not
# filtered), delegable, extra checks)
TABLE = {
    "npm": (["npm", "install"], dict(JS_BASE, **{"~/.npm": "w+dir"}), NPM, True, {"absent": COREPACK}),
    "npm-publish": (["npm", "publish"], {"~/.npm": "w+dir", "~/.npmrc": "r"}, NPM, False,
                    {"allow_env": "NPM_TOKEN"}),
    "npm-login": (["npm", "login"], {"~/.npmrc": "w+file"}, NPM, False, {}),
    "yarn": (["yarn", "install"], dict(JS_BASE, **{"${XDG_CACHE_HOME}/yarn": "w+dir", "~/.yarn/berry": "w+dir", COREPACK: "w+dir"}),
             NPM + ["registry.yarnpkg.com:443", "repo.yarnpkg.com:443"], True, {}),
    "pnpm": (["pnpm", "install"], {"${XDG_DATA_HOME}/pnpm/store": "w+dir", "${XDG_CACHE_HOME}/pnpm": "w+dir",
                                   "${XDG_STATE_HOME}/pnpm": "w+dir", COREPACK: "w+dir"}, NPM, True, {}),
    "bun": (["bun", "install"], {"~/.bun/install/cache": "w+dir", "~/.bun/bin": "r"}, NPM, True, {}),
    "deno": (["deno", "run", "x.ts"], {"${XDG_CACHE_HOME}/deno": "w+dir", "~/.deno/bin": "r"},
             NPM + ["deno.land:443", "jsr.io:443"], True, {}),
    "corepack": (["corepack", "enable"], {"${XDG_CACHE_HOME}/node/corepack": "w+dir"},
                 NPM + ["repo.yarnpkg.com:443"], True, {}),
    "pip": (["python3", "-m", "pip", "install", "x"], {"${XDG_CACHE_HOME}/pip": "w+dir", "~/.pyenv": "r"},
            PYPI, True, {}),
    "pipx": (["pipx", "run", "x"], {"${XDG_CACHE_HOME}/pipx": "w+dir", "${XDG_DATA_HOME}/pipx": "r"},
             PYPI, True, {}),
    "pipx-install": (["pipx", "install", "x"], {"${XDG_DATA_HOME}/pipx": "w+dir", "~/.local/bin": "w+dir"},
                     PYPI, False, {}),
    "uv": (["uv", "sync"], {"${XDG_CACHE_HOME}/uv": "w+dir", "${XDG_DATA_HOME}/uv": "r", "~/.local/bin": "r"},
           PYPI, True, {}),
    "uv-install": (["uv", "tool", "install", "ruff"], {"${XDG_DATA_HOME}/uv": "w+dir", "~/.local/bin": "w+dir"},
                   PYPI, False, {}),
    "poetry": (["poetry", "install"], {"${XDG_CACHE_HOME}/pypoetry": "w+dir",
                                      "${XDG_CONFIG_HOME}/pypoetry/config.toml": "r"}, PYPI, True, {}),
    "pdm": (["pdm", "install"], {"${XDG_CACHE_HOME}/pdm": "w+dir"}, PYPI, True, {}),
    "hatch": (["hatch", "build"], {"${XDG_DATA_HOME}/hatch": "w+dir", "${XDG_CACHE_HOME}/hatch": "w+dir"},
              PYPI, True, {}),
    "conda": (["mamba", "install", "x"], {"~/.conda": "w+dir", "~/.condarc": "r", "~/miniconda3": "r"},
              ["conda.anaconda.org:443", "repo.anaconda.com:443"], True, {}),
    "cargo": (["cargo", "build"], {"~/.cargo/registry": "w+dir", "~/.cargo/git": "w+dir", "~/.rustup": "r"},
              CRATES, True, {}),
    "cargo-install": (["cargo", "install", "x"], {"~/.cargo/bin": "w+dir"}, CRATES, False, {}),
    "rustup": (["rustup", "update"], {"~/.rustup": "w+dir", "~/.cargo/bin": "w+dir"},
               ["static.rust-lang.org:443"], False, {}),
    "go": (["go", "build"], {"~/go/pkg": "w+dir", "${XDG_CACHE_HOME}/go-build": "w+dir",
                             "${XDG_CONFIG_HOME}/go": "r"}, GO, True, {}),
    "go-install": (["go", "install", "x@latest"], {"~/go/bin": "w+dir"}, GO, False, {}),
    "maven": (["mvn", "package"], {"~/.m2/repository": "w+dir", "~/.m2/wrapper": "w+dir",
                                   "~/.sdkman/candidates": "r"}, MAVEN, True, {}),
    "gradle": (["gradlew", "build"], {"~/.gradle/caches": "w+dir", "~/.gradle/wrapper": "w+dir"},
               MAVEN + ["services.gradle.org:443", "downloads.gradle.org:443", "plugins.gradle.org:443",
                        "plugins-artifacts.gradle.org:443", "maven.google.com:443", "dl.google.com:443"], True, {}),
    "sbt": (["sbt", "compile"], {"${XDG_CACHE_HOME}/coursier": "w+dir", "~/.sbt/boot": "w+dir"},
            MAVEN + ["repo.scala-sbt.org:443"], True, {}),
    "dotnet": (["dotnet", "build"], {"~/.nuget/packages": "w+dir", "${XDG_DATA_HOME}/NuGet": "w+dir"},
               ["api.nuget.org:443"], True, {}),
    "gem": (["gem", "list"], {"${XDG_CACHE_HOME}/gem": "w+dir", "~/.gemrc": "r"},
            ["rubygems.org:443", "index.rubygems.org:443"], True, {}),
    "gem-install": (["gem", "install", "x"], {"${XDG_DATA_HOME}/gem": "w+dir", "~/.gem/credentials": "d"},
                    ["rubygems.org:443", "index.rubygems.org:443"], False, {}),
    "bundler": (["bundle", "install"], {"~/.bundle/cache": "w+dir"},
                ["rubygems.org:443", "index.rubygems.org:443"], True, {}),
    "composer": (["composer", "install"], {"${XDG_CACHE_HOME}/composer": "w+dir",
                                           "${XDG_CONFIG_HOME}/composer/config.json": "r"},
                 ["repo.packagist.org:443", "packagist.org:443"], True, {}),
    "mix": (["mix", "deps.get"], {"~/.hex/packages": "w+dir", "${XDG_CACHE_HOME}/rebar3": "w+dir", "~/.mix": "r"},
            ["repo.hex.pm:443", "hex.pm:443", "builds.hex.pm:443"], True, {}),
    "mix-install": (["mix", "local.hex"], {"~/.mix": "w+dir"},
                    ["repo.hex.pm:443", "hex.pm:443", "builds.hex.pm:443"], False, {}),
    "cabal": (["cabal", "build"], {"${XDG_CACHE_HOME}/cabal": "w+dir", "${XDG_STATE_HOME}/cabal": "w+dir",
                                   "~/.ghcup": "r"}, ["hackage.haskell.org:443"], True, {}),
    "stack": (["stack", "build"], {"~/.stack/pantry": "w+dir", "~/.stack/snapshots": "w+dir",
                                   "~/.stack/programs": "w+dir", "~/.stack/config.yaml": "r"},
              ["hackage.haskell.org:443", "casa.stackage.org:443", "www.stackage.org:443",
               "downloads.haskell.org:443", "raw.githubusercontent.com:443"], True, {}),
    "make": (["make", "-C", "sub"], {"${XDG_CACHE_HOME}/ccache": "w+dir", "${arg_directory}": "w"}, [], True, {}),
    "ninja": (["ninja", "-C", "sub"], {"${arg_directory}": "w"}, [], True, {}),
    "meson": (["meson", "compile", "-C", "sub"], {"${arg_directory}": "w"}, [], True, {}),
    "cmake": (["cmake", "-B", "sub"], {"${arg_directory}": "w"}, [], True, {}),
    "git-remote": (["git", "-C", "sub", "push"], {"~/.ssh/known_hosts": "r", "~/.ssh/config": "r"}, [],
                   False, {}),
    "claude": (["claude"], {"~/.claude": "w+dir", "~/.claude.json": "w+json", "~/.local/bin": "r"},
               ["api.anthropic.com:443"], False, {"delegates": "npm", "allow_env": "ANTHROPIC_API_KEY"}),
    "opencode": (["opencode"], {"${XDG_CONFIG_HOME}/opencode": "w+dir", "${XDG_DATA_HOME}/opencode": "w+dir",
                                "${XDG_STATE_HOME}/opencode": "w+dir", "${XDG_CACHE_HOME}/opencode": "w+dir"},
                 ["api.anthropic.com:443", "api.openai.com:443", "generativelanguage.googleapis.com:443",
                  "openrouter.ai:443", "models.dev:443", "registry.npmjs.org:443"], False, {"delegates": "npm"}),
    "codex": (["codex"], {"~/.codex": "w+dir"}, ["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
              False, {"delegates": "npm", "allow_env": "OPENAI_API_KEY"}),
    "gemini": (["gemini"], {"~/.gemini": "w+dir"}, ["generativelanguage.googleapis.com:443",
                                                   "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"],
               False, {"delegates": "npm", "allow_env": "GEMINI_API_KEY"}),
    "aider": (["aider"], {"~/.aider": "w+dir", "~/.aider.conf.yml": "r"},
              ["api.openai.com:443", "api.anthropic.com:443", "generativelanguage.googleapis.com:443",
               "openrouter.ai:443", "api.deepseek.com:443"], False, {"delegates": "npm"}),
    "goose": (["goose", "session"], {"${XDG_CONFIG_HOME}/goose": "w+dir", "${XDG_DATA_HOME}/goose": "w+dir",
                                     "${XDG_STATE_HOME}/goose": "w+dir"},
              ["api.openai.com:443", "api.anthropic.com:443", "generativelanguage.googleapis.com:443",
               "openrouter.ai:443"], False, {"delegates": "npm"}),
    "cursor-agent": (["cursor-agent"], {"~/.cursor": "w+dir", "${XDG_CONFIG_HOME}/cursor": "w+dir"},
                     ["*.cursor.sh:443"], False, {"delegates": "npm"}),
    "copilot": (["copilot"], {"~/.copilot": "w+dir"},
                ["api.githubcopilot.com:443", "*.githubcopilot.com:443", "api.github.com:443"], False,
                {"delegates": "npm"}),
    "code": (["code", "--wait", "."], {"${XDG_CONFIG_HOME}/Code": "w+dir", "~/.vscode/extensions": "w+dir",
                                        "/tmp/.X11-unix": "r", "${XDG_RUNTIME_DIR}/${env:WAYLAND_DISPLAY}": "r"},
             None, False, {"dbus": "org.freedesktop.Notifications"}),
    "codium": (["codium", "--wait", "."], {"${XDG_CONFIG_HOME}/VSCodium": "w+dir",
                                            "~/.vscode-oss/extensions": "w+dir"},
               None, False, {"dbus": "org.freedesktop.Notifications"}),
}
# Profiles that match every command (sandbox) or none (the bases): applied through others.
NOT_MATCHED = {"sandbox", "git-project", "supply-chain", "javascript", "python", "jvm", "build", "agents",
               "electron-app"}


class Tap:
    """Numbered TAP lines; done() prints the plan."""

    def __init__(self):
        self.n = 0

    def check(self, ok, what, detail=""):
        self.n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        if not ok and detail:
            print("#   " + str(detail)[:3000].replace("\n", "\n#   "))

    def done(self):
        print("1..%d" % self.n)
        sys.stdout.flush()


def fake_machine(root, names=None):
    """Under root: home/src/proj (with a .git and a sub/) and bin/ holding an empty script for
    each of names (by default each tool of TABLE): commands the machine may not have, of which
    only the names matter to the profiles. Returns (home, proj, env): the environment explain
    runs with."""
    home = os.path.join(root, "home")
    proj = os.path.join(home, "src", "proj")
    os.makedirs(os.path.join(proj, ".git"))
    os.makedirs(os.path.join(proj, "sub"))
    bindir = os.path.join(root, "bin")
    os.makedirs(bindir)
    for name in names or [argv[0] for argv, *_ in TABLE.values()]:
        p = os.path.join(bindir, name)
        with open(p, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(p, 0o755)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "USER": "dev", "LANG": "C",
           "XDG_RUNTIME_DIR": "/run/user/4242"}
    return home, proj, env
