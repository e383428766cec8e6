#!/usr/bin/env bash
# completion_test.sh COMPLETION TOPO: the bash completion of topo, driven as bash drives it
# (COMP_WORDS/COMP_CWORD, then _topo), against the built binary. Exit 1 on any mismatch.
set -uo pipefail
completion=$1
topo=$2
# The completion runs `topo` from COMP_WORDS[0], as typed: put the binary under test on the PATH.
PATH="$(cd "$(dirname "$topo")" && pwd):$PATH"
# shellcheck source=/dev/null
source "$completion"
failures=0

# complete WORDS...: the candidates for the last word.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _topo
  printf '%s\n' "${COMPREPLY[@]}" | sort
}

# expect "LINE" WANT... : every WANT is among the candidates.
expect() {
  local line=$1 got want
  shift
  read -ra words <<<"$line"
  [[ $line == *" " ]] && words+=("")
  got=$(complete_words "${words[@]}")
  for want in "$@"; do
    if ! grep -qxF -- "$want" <<<"$got"; then
      echo "FAIL '$line<TAB>': missing $want; got: $(tr '\n' ' ' <<<"$got")"
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   '$line<TAB>': $(tr '\n' ' ' <<<"$got")"
}

# expect_none "LINE" UNWANTED...
expect_none() {
  local line=$1 got bad
  shift
  read -ra words <<<"$line"
  [[ $line == *" " ]] && words+=("")
  got=$(complete_words "${words[@]}")
  for bad in "$@"; do
    if grep -qxF -- "$bad" <<<"$got"; then
      echo "FAIL '$line<TAB>': offers $bad"
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   '$line<TAB>': none of $*"
}

# Every subcommand the binary lists is offered at the top level.
mapfile -t top < <("$topo" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
((${#top[@]} >= 4)) || { echo "FAIL topo --help lists ${#top[@]} subcommands"; exit 1; }
expect "topo " "${top[@]}"
# Every command and subcommand, however deep (walked from the binary's help, so a command added
# later is covered without editing this test): a command with subcommands offers all of them,
# and after each command every long option its --help lists is offered.
subcommands() {
  "$topo" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}
commands=0
walk() {
  local sub
  local -a subs
  mapfile -t subs < <(subcommands "$@")
  ((${#subs[@]} == 0)) && return
  (($# > 0)) && expect "topo $* " "${subs[@]}"
  for sub in "${subs[@]}"; do
    local -a options
    mapfile -t options < <("$topo" "$@" "$sub" --help |
      awk '/^  -/ {n = split($1, names, ","); for (i = 1; i <= n; i++) if (names[i] ~ /^--/) print names[i]}')
    expect "topo${*:+ $*} $sub --" "${options[@]}"
    commands=$((commands + 1))
    walk "$@" "$sub"
  done
}
walk
((commands >= 10)) || { echo "FAIL the walk found only $commands commands"; failures=$((failures + 1)); }
expect "topo d" dump
expect_none "topo d" matrix export
expect "topo export " resourceslices labels nrt shape autoscaler-template
expect "topo mock " list build
expect "topo dump --" --root --mock --format --output --help
expect "topo dump --format " text json dot
expect "topo export labels --format " plain nfd nodefeature patch
expect "topo dump --mock dgx" dgx-h100
expect "topo --log-level " debug info error
# An option's value is not taken for a command: --mock's value does not change the path.
expect "topo dump --mock dgx-h100 --" --format --output
expect_none "topo dump --mock dgx-h100 --" --log-level
tmp=$(mktemp -d)
mkdir "$tmp/rootdir"
expect "topo dump --root $tmp/ro" "$tmp/rootdir"
rm -rf "$tmp"
if ((failures)); then
  echo "completion_test: $failures failure(s)" >&2
  exit 1
fi
echo "completion: every case holds"
