#!/usr/bin/env bash
# man_page_test.sh PAGE TOPO: topo(1) renders without a groff warning and has a section for every
# command and subcommand that TOPO lists in its help, and for each static section.
set -uo pipefail
page=$1
topo=$2
[[ -f $page ]] || { echo "$page: no man page (built by target nodetopo_man)" >&2; exit 1; }
failures=0
warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
if [[ -n $warnings ]]; then
  echo "FAIL $page: groff warnings:"; echo "$warnings"; failures=$((failures + 1))
fi
subcommands() {
  "$topo" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}
count=0
walk() {
  local sub
  for sub in $(subcommands "$@"); do
    local heading=".SS \"topo${*:+ $*} $sub\""
    if grep -qxF -- "$heading" "$page"; then
      count=$((count + 1))
    else
      echo "FAIL $page: no section for topo $* $sub"; failures=$((failures + 1))
    fi
    walk "$@" "$sub"
  done
}
walk
for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"; do
  grep -qx ".SH \"\\?$section\"\\?" "$page" || { echo "FAIL $page: no section $section"; failures=$((failures + 1)); }
done
grep -qF "$("$topo" --version | awk '{print $NF}')" "$page" || { echo "FAIL $page: not the version of $topo"; failures=$((failures + 1)); }
((count >= 4)) || { echo "FAIL only $count command sections"; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo "topo(1): $count command sections, no groff warnings"
