#!/usr/bin/env bash
# lintian_test.sh DEBDIR: lintian on the nodetopo package built in DEBDIR; fails on any error tag
# (warnings and infos are printed, so that they stay visible).
set -uo pipefail
command -v lintian >/dev/null || { echo "lintian not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
deb=$(ls "$1"/nodetopo_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
[[ -n $deb ]] || { echo "no nodetopo_*.deb in $1 (built by packaging.deb.build)" >&2; exit 1; }
out=$(lintian --fail-on error --display-info --pedantic --no-tag-display-limit "$deb" 2>&1)
rc=$?
echo "$out"
errors=$(grep -c '^E: ' <<<"$out")
echo "lintian $(basename "$deb"): $errors error(s), $(grep -c '^W: ' <<<"$out") warning(s), $(grep -c '^[IP]: ' <<<"$out") info/pedantic"
[[ $rc -eq 0 && $errors -eq 0 ]]
