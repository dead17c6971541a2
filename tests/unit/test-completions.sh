#!/bin/bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The shell completions (shell-completion/) against the scudo built here: bash and fish complete
# subcommands, options, profile and property names and hand over to the command's own
# completion; zsh's file is at least valid zsh. A shell that is not installed is skipped.
# Usage: test-completions.sh SCUDO SRCDIR
set -u
SCUDO=$1
SRC=$2
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
ln -s "$(realpath "$SCUDO")" "$BIN/scudo"
export PATH="$BIN:$PATH"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; failed=1; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
failed=0

# bash: words -> COMPREPLY, through the real bash-completion library
bash_complete() { # WORDS...
  bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$0"
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _scudo 2>/dev/null
    printf "%s\n" "${COMPREPLY[@]%% }"' "$SRC/shell-completion/scudo.bash" "$@"
}
expect_bash() { # WANT WORDS...
  local want=$1; shift
  if bash_complete "$@" | grep -qxF -- "$want"; then ok "bash: '$*' offers $want"; else notok "bash: '$*' offers $want"; fi
}
if [ -f /usr/share/bash-completion/bash_completion ]; then
  expect_bash doctor scudo doc
  expect_bash --profile scudo --pro
  expect_bash --no-probe scudo doctor --no
  expect_bash npm scudo -p np
  expect_bash --print-path scudo shim --print-p
  expect_bash MemoryMax= scudo --property MemoryM
  if [ -f /usr/share/bash-completion/completions/git ]; then
    expect_bash status scudo git stat
    expect_bash status scudo --fs-read /tmp git stat
  else
    skip "git's own bash completion is not installed"
  fi
else
  skip "bash-completion is not installed"
fi

if command -v fish >/dev/null; then
  fish_complete() { fish -c "source '$SRC/shell-completion/scudo.fish'; complete -C '$1'" 2>/dev/null | cut -f1; }
  for t in "doctor|scudo doc" "--profile|scudo --pro" "npm|scudo -p np" "MemoryMax=|scudo --property MemoryM"; do
    want=${t%%|*} line=${t#*|}
    if fish_complete "$line" | grep -qxF -- "$want"; then ok "fish: '$line' offers $want"; else notok "fish: '$line' offers $want"; fi
  done
else
  skip "fish is not installed"
fi

if command -v zsh >/dev/null; then
  if zsh -n "$SRC/shell-completion/_scudo"; then ok "zsh: _scudo parses"; else notok "zsh: _scudo parses"; fi
else
  skip "zsh is not installed"
fi
echo "1..$n"
exit $failed
