#!/usr/bin/env bash
# make-topo-man.sh TOPO OUT: generate the man page topo(1) from the program's own help.
#
# help2man writes NAME, SYNOPSIS, DESCRIPTION and the global OPTIONS from `topo --help` and
# `topo --version`; this script adds a COMMANDS section with the `--help` of every command and
# subcommand, found by walking the "Subcommands:" lists, so a new command appears in the page
# without anyone editing it. The static sections (EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO) come
# from topo.h2m beside this script.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: make-topo-man.sh TOPO OUT" >&2
  exit 2
fi
topo=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v help2man >/dev/null || { echo "make-topo-man.sh: help2man not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

# Subcommand names listed in the help text of `topo WORDS...`.
subcommands() {
  "$topo" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}

# roff-safe verbatim text: backslashes doubled, a leading dot or quote protected.
roff_verbatim() {
  sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\\&\1/"
}

include=$(mktemp)
trap 'rm -f "$include"' EXIT
{
  echo "[COMMANDS]"
  echo "Each command's options follow; \\fBtopo\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR prints the same."
  walk() {
    local sub
    for sub in $(subcommands "$@"); do
      echo ".SS \"topo $* $sub\"" | sed 's/  */ /g'
      echo ".nf"
      "$topo" "$@" "$sub" --help | roff_verbatim
      echo ".fi"
      walk "$@" "$sub"
    done
  }
  walk
  cat "$here/topo.h2m"
} >"$include"

help2man --no-info --no-discard-stderr --section=1 \
  --name="node hardware topology discovery for Kubernetes (nodetopo)" \
  --include="$include" --output="$out.tmp" "$topo"
mv "$out.tmp" "$out"
