#!/usr/bin/env bash
# Installs what nodetopo needs to build, test and benchmark on Debian 12, and nothing that is
# already there. Safe to run any number of times: it only calls apt-get for missing packages.
# Used by both README commands and by CI, so no dependency lives only on one machine.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates bzip2
  # libraries the code links
  libhwloc-dev libpci-dev libsdbus-c++-dev libsystemd-dev libspdlog-dev libfmt-dev
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev
  # the mock NVML library parses its fixture with simdjson (docs/mock-nvml.md)
  libsimdjson-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev dbus
  # real tools used as test oracles: lstopo-no-graphics and lspci on the same fake roots
  hwloc-nox pciutils
  # `topo dump --format dot` is checked by rendering it with Graphviz
  graphviz
  # the benchmark counts file-system calls of topo and lstopo with strace
  strace
  # kubelet/: the DRA kubelet plugin's gRPC services, code generated at build time; the fake
  # kubelet of tests/kubelet is Python with Debian's grpcio and grpc_tools (protoc)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc python3-grpcio
  python3-grpc-tools
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run this script as root (or with sudo) to install them" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} Debian packages present"
fi

# The independent validator of the Kubernetes objects nodetopo renders (tests/validate) runs on
# node with the npm package kubernetes-models. Debian's nodejs and npm are installed only when no
# node/npm is on the PATH (a NodeSource nodejs already bundles npm and conflicts with Debian's).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: node and npm are missing; run this script as root to install them" >&2
    exit 1
  fi
  echo "install-deps: installing nodejs npm"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm
fi

# npm ci from the committed lock file, skipped when node_modules already matches it.
validate_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/validate"
stamp="$validate_dir/node_modules/.nodetopo-lock.sha256"
lock_sum="$(sha256sum "$validate_dir/package-lock.json" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
  echo "install-deps: tests/validate node modules up to date"
else
  echo "install-deps: npm ci in tests/validate"
  (cd "$validate_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$stamp"
fi
