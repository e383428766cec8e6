#!/usr/bin/env bash
# systemd_unit_test.sh verify UNIT MANDIR | security UNIT MAX
#   verify:   `systemd-analyze verify` prints nothing and succeeds (MANDIR holds man1/topo.1,
#             which the unit's Documentation= names; the unit's ExecStart must exist).
#   security: `systemd-analyze security --offline=true` exposure <= MAX; prints the score and
#             every setting that still costs exposure.
set -uo pipefail
mode=$1
unit=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found (package systemd)" >&2; exit 1; }
case $mode in
  verify)
    out=$(MANPATH="$3" systemd-analyze verify "$unit" 2>&1)
    rc=$?
    if [[ $rc -ne 0 || -n $out ]]; then
      echo "systemd-analyze verify $unit: exit $rc" >&2
      echo "$out" >&2
      exit 1
    fi
    echo "systemd-analyze verify $(basename "$unit"): clean" ;;
  security)
    max=$3
    out=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1)
    score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
    if [[ -z $score ]]; then
      echo "systemd-analyze security gave no score for $unit:" >&2
      echo "$out" >&2
      exit 1
    fi
    grep '✗' <<<"$out"
    echo "exposure of $(basename "$unit"): $score (target <= $max)"
    if awk -v s="$score" -v m="$max" 'BEGIN {exit !(s > m)}'; then
      echo "exposure $score is above $max" >&2
      exit 1
    fi ;;
  *)
    echo "usage: systemd_unit_test.sh verify UNIT MANDIR | security UNIT MAX" >&2
    exit 2 ;;
esac
