#!/usr/bin/env bash
# Benchmarks topo against lstopo and lspci on the same host roots (docs/performance.md).
#
#   bench/run.sh [--short] [--check | --no-check] [--build DIR] [--runs N] [--out DIR]
#                [--captures DIR]
#
# Full mode: mock hosts dgx-h100, hgx-a100, mi300x (AMD: the KFD tree) and synthetic machines of
# 8, 16, 32 and 64 GPUs, plus every real capture of ../shared/fixtures and the machine itself
# (root /, `this-machine`, when lspci can read its PCI bus: there config space is the kernel's,
# every dword a configuration cycle); 21 interleaved runs each; strace file-system profile;
# the agent's refresh (nodetopo_refresh_bench) against lstopo on the mock roots; the targets are
# checked (--check, the default in full mode: exit 1 when one is missed). Then the
# micro-benchmarks. The machine (CPU model, kernel, CPUs) and the load average before and after
# are printed with the figures.
# --short (CI): two small roots, 3 runs, micro-benchmarks for a few milliseconds each — it proves
# the harness works; shared CI machines are too noisy for the thresholds, so they are not checked
# (the check logic itself has its own ctest, bench.check_logic).
# --captures DIR adds every *.tar.bz2 and *.tar.gz in DIR as a real capture, in either mode (for
# example hwloc's own tests/hwloc/linux, or archives of `topo capture`): each must hold one top
# directory, the machine's root; one whose PCI bus lspci cannot read is left out, saying so (one
# without a PCI bus is timed against lstopo alone). These are roots
# the project has not tuned for; their ratios are checked like the shared captures'.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
build="$repo/build/release"
runs=21
short=0
check=1
out=""
captures=""
while (($#)); do
  case "$1" in
    --short) short=1; runs=3; check=0 ;;
    --check) check=1 ;;
    --build) build="$(cd "$2" && pwd)"; shift ;;
    --runs) runs="$2"; shift ;;
    --out) out="$2"; shift ;;
    --captures)
      [[ -d "${2:-}" ]] || { echo "bench/run.sh: --captures needs a directory" >&2; exit 2; }
      captures="$(cd "$2" && pwd)"; shift ;;
    --no-check) check=0 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
out="${out:-$build/bench-results}"

topo="$build/topo"
compare="$build/bench/nodetopo_bench_compare"
refresh="$build/bench/nodetopo_refresh_bench"
micro="$build/bench/nodetopo_micro_bench"
for f in "$topo" "$compare" "$refresh" "$micro"; do
  [[ -x "$f" ]] || { echo "bench/run.sh: $f is missing: build first (cmake --build --preset release)" >&2; exit 1; }
done
for tool in lstopo-no-graphics lspci strace; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool not found: run scripts/install-deps.sh" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/nodetopo-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

roots=()
add_mock() {  # name profile-spec
  "$topo" mock build "$2" "$work/$1" >/dev/null
  roots+=("$1=$work/$1")
}
synthetic() {  # GPUs: one NIC per GPU behind the same two-level switch tree, 8 VFs per NIC
  add_mock "synthetic-$1" "synthetic:gpus=$1,nics=$1,switch_depth=2,nic_vfs=8"
}

if ((short)); then
  add_mock dgx-h100 dgx-h100
  synthetic 8
else
  add_mock dgx-h100 dgx-h100
  add_mock hgx-a100 hgx-a100
  # AMD: the KFD tree (partitions, xGMI links) that no NVIDIA root has.
  add_mock mi300x mi300x
  for n in 8 16 32 64; do synthetic "$n"; done
  shared="${NODETOPO_SHARED_DIR:-}"
  for candidate in "$repo/shared" "$repo/../shared"; do
    [[ -z "$shared" && -d "$candidate/fixtures/hwloc/linux" ]] && shared="$(cd "$candidate" && pwd)"
  done
  if [[ -n "$shared" ]]; then
    for tar in "$shared"/fixtures/hwloc/linux/*.tar.bz2; do
      name="$(basename "$tar" .tar.bz2)"
      mkdir -p "$work/captures" && tar -xjf "$tar" -C "$work/captures"
      # nvidiagpunumanodes has no PCI config files: lspci fails on it, nothing to compare.
      [[ "$name" == nvidiagpunumanodes ]] && continue
      roots+=("$name=$work/captures/$name")
    done
  else
    echo "bench/run.sh: ../shared/fixtures not found: real captures skipped" >&2
  fi
  # The live machine: a real root no capture stands for (its config space is read by the kernel
  # one configuration cycle per dword, a VM exit under a hypervisor).
  if compgen -G "/sys/bus/pci/devices/*" >/dev/null && lspci -A linux-sysfs >/dev/null 2>&1; then
    roots+=("this-machine=/")
  else
    echo "bench/run.sh: this machine shows no PCI bus lspci can read: its own root left out" >&2
  fi
fi
if [[ -n "$captures" ]]; then
  added=0
  for tar in "$captures"/*.tar.bz2 "$captures"/*.tar.gz; do
    [[ -f "$tar" ]] || continue
    name="$(basename "$tar")"
    name="${name%.tar.bz2}"
    name="${name%.tar.gz}"
    known=0
    for spec in "${roots[@]}"; do [[ "${spec%%=*}" == "$name" ]] && known=1; done
    ((known)) && continue
    dest="$work/extra/$name"
    mkdir -p "$dest"
    if ! tar -xaf "$tar" -C "$dest" 2>/dev/null; then
      echo "bench/run.sh: $tar: not a readable archive: left out" >&2
      continue
    fi
    # The top directory is the machine's root, whatever its name (hwloc's archives do not
    # always name it after the file).
    tops=("$dest"/*)
    if ((${#tops[@]} != 1)) || [[ ! -d "${tops[0]}" ]]; then
      echo "bench/run.sh: $tar: not one top directory: left out" >&2
      continue
    fi
    # Without a PCI bus lspci is not compared (nodetopo_bench_compare); with one it must read it.
    if [[ -d "${tops[0]}/sys/bus/pci" ]] &&
      ! lspci -A linux-sysfs -O "sysfs.path=${tops[0]}/sys/bus/pci" >/dev/null 2>&1; then
      echo "bench/run.sh: $name: lspci cannot read its PCI bus (no config files): left out" >&2
      continue
    fi
    roots+=("$name=${tops[0]}")
    added=$((added + 1))
  done
  ((added)) || echo "bench/run.sh: no capture added from $captures" >&2
fi

machine() {
  local model
  model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "machine: ${model:-unknown CPU}, $(nproc) CPUs, kernel $(uname -r), $(uname -m)"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
machine | tee "$out/machine.txt"
echo "load average before: $(load)" | tee -a "$out/machine.txt"
echo

args=(--topo "$topo" --runs "$runs" --strace --json "$out/compare.json")
echo "## topo vs lstopo vs lspci ($runs interleaved runs, medians)"
echo
status=0
"$compare" "${args[@]}" "${roots[@]}" | tee "$out/compare.md" || status=$?
echo "load average after the comparison: $(load)" | tee -a "$out/machine.txt"
# Every root must have its row: the harness measured all three tools on it.
for spec in "${roots[@]}"; do
  name="${spec%%=*}"
  if ! grep -q "^| $name |" "$out/compare.md"; then
    echo "bench/run.sh: no result for $name" >&2
    status=1
  fi
done

echo
echo "## agent refresh vs lstopo ($runs interleaved runs, medians)"
echo
refresh_roots=()
for spec in "${roots[@]}"; do
  name="${spec%%=*}"
  [[ "$name" == dgx-h100 || "$name" == hgx-a100 || "$name" == mi300x || "$name" == synthetic-* ]] &&
    refresh_roots+=("$spec")
done
"$refresh" --runs "$runs" --json "$out/refresh.json" "${refresh_roots[@]}" \
  | tee "$out/refresh.md" || status=$?
echo "load average after the refresh: $(load)" | tee -a "$out/machine.txt"
if ((check)); then
  echo
  "$compare" --check-report "$out/compare.json" --refresh-report "$out/refresh.json" \
    --rss-baseline "$here/rss-baseline.json" || status=1
fi

echo
echo "## micro-benchmarks"
min_time=0.5
((short)) && min_time=0.001
"$micro" --benchmark_min_time="$min_time" --benchmark_out="$out/micro.json" \
  --benchmark_out_format=json | tee "$out/micro.txt" || status=$?
echo
echo "results: $out"
exit "$status"
