#!/usr/bin/env bash
# ctest bench.check_logic: `nodetopo_bench_compare --check-report` on hand-written reports (no
# timing): the good ones pass; each report that misses one target fails with exit 1 and names it.
#   bench/testdata/check_logic_test.sh BUILD/bench/nodetopo_bench_compare
set -euo pipefail
compare="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/nodetopo-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
failures=0

"$compare" --check-report "$here/compare-good.json" --refresh-report "$here/refresh-good.json" \
  --rss-baseline "$here/rss-baseline.json" 2>"$work/err" || {
  echo "FAIL: the good reports were refused:"; cat "$work/err"; failures=$((failures + 1)); }

# expect_miss NAME "python expression editing r (compare) and f (refresh)" "message part"
expect_miss() {
  local name="$1" edit="$2" want="$3"
  "$py" - "$here" "$work" <<PY
import json, sys
here, work = sys.argv[1], sys.argv[2]
r = json.load(open(here + "/compare-good.json"))
f = json.load(open(here + "/refresh-good.json"))
$edit
json.dump(r, open(work + "/compare.json", "w"))
json.dump(f, open(work + "/refresh.json", "w"))
PY
  local rc=0
  "$compare" --check-report "$work/compare.json" --refresh-report "$work/refresh.json" \
    --rss-baseline "$here/rss-baseline.json" 2>"$work/err" || rc=$?
  if [[ "$rc" != 1 ]] || ! grep -qF "$want" "$work/err"; then
    echo "FAIL: $name: exit $rc, expected 1 with '$want':"; cat "$work/err"
    failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

expect_miss dgx-ratio 'r[0]["ratio_topo_lstopo"] = 0.80' "topo/lstopo on dgx-h100 is 0.80 (> 0.75)"
expect_miss hgx-ratio 'r[1]["ratio_topo_lstopo"] = 0.76' "topo/lstopo on hgx-a100 is 0.76"
expect_miss largest-synthetic 'r[3]["ratio_topo_lstopo"] = 0.9' "topo/lstopo on synthetic-64"
expect_miss capture-ratio 'r[4]["ratio_topo_lstopo"] = 1.05' "topo/lstopo on 2pa-pcidomain32bits is 1.05 (> 1.00)"
expect_miss read-twice 'r[2]["topo"]["files_read_twice"] = ["sys/bus/pci/devices/0000:00:00.0/config"]' "synthetic-8: files read twice (1)"
expect_miss no-strace 'del r[0]["topo"]["files_read_twice"]' "dgx-h100: no strace profile"
expect_miss rss-grew 'r[3]["topo"]["max_rss_kib"] = 12500' "peak RSS on synthetic-64 is 12500 KiB (was 11571 KiB)"
expect_miss failed-run 'r[1]["lspci"]["failed_runs"] = 2' "lspci failed on hgx-a100"
expect_miss per-function 'r[3]["topo_us_per_function"] = 170.0' "time per PCI function grows"
expect_miss refresh-ratio 'f[0]["ratio_pci_refresh_lstopo"] = 0.45' "agent refresh after a PCI uevent on dgx-h100 is 0.45x lstopo"
expect_miss noop-writes 'f[0]["noop_digest_unchanged"] = False' "a no-op refresh changed the digest"
expect_miss cached-differs 'f[0]["cached_equals_fresh"] = False' "a cached refresh differs"
# A small synthetic root is not held to the 0.75 target (only the largest is).
"$compare" --check-report "$here/compare-good.json" 2>"$work/err" || {
  echo "FAIL: synthetic-8 at 0.94 must not miss"; cat "$work/err"; failures=$((failures + 1)); }

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every check behaves"
