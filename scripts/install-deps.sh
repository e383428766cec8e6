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
  # topo agent: the D-Bus glue generator (sdbus-c++-xml2cpp) and the HTTP server library
  libsdbus-c++-bin libevent-dev
  # fit/: CEL matches() and the regex library use RE2
  libre2-dev
  # `topo capture` writes its .tar.gz with libarchive
  libarchive-dev
  # kube/: the Kubernetes API client (libcurl multi with OpenSSL); the tests' fake API server
  # gets its CA and certificates from openssl
  libcurl4-openssl-dev openssl
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev dbus
  # the agent's tests: promtool and a real Prometheus server scraping it, curl for its API
  prometheus curl
  # real tools used as test oracles: lstopo-no-graphics and lspci on the same fake roots
  hwloc-nox pciutils
  # `topo dump --format dot` is checked by rendering it with Graphviz
  graphviz
  # tests/docs/check_catalogues.py reads the golden YAML
  python3-yaml
  # the benchmark counts file-system calls of topo and lstopo with strace
  strace
  # the release and CI builds link topo with lld in the order callgrind saw a dump run its
  # functions (cmake/NodetopoTextOrder.cmake)
  lld valgrind
  # the hostile-root suite runs topo under timeout/prlimit and as nobody with setpriv
  coreutils util-linux
  # the fuzz preset: clang with libFuzzer and the sanitizer runtimes (docs/reliability.md)
  clang-14 libclang-rt-14-dev
  # packaging (packaging/, docs/operations.md): the Debian package and its checks, the man page,
  # the unit's verify and security score, the bus policy test's clients, the Debian 12 chroot and
  # the OCI image
  dpkg-dev debhelper lintian help2man systemd python3-dbus python3-gi debootstrap curl buildah
  # the unit under a booted systemd (packaging/tests/systemd_boot_test.sh: systemd-nspawn --boot)
  systemd-container
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
# node with the npm package kubernetes-models; the fake API server of tests/kube
# (tests/fakes/kube-apiserver) imports the same modules from there. Debian's nodejs and npm are installed only when no
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

# The Kubernetes manifests (packaging/kubernetes) are rendered with `kubectl kustomize`. Debian's
# kubernetes-client is installed only when no kubectl is on the PATH (the overlays keep to what
# its kustomize v2 understands).
if ! command -v kubectl >/dev/null 2>&1; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: kubectl is missing; run this script as root to install kubernetes-client" >&2
    exit 1
  fi
  echo "install-deps: installing kubernetes-client"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends kubernetes-client
fi

# npm ci from the committed lock files, each skipped when node_modules already matches it:
# tests/validate (kubernetes-models), tests/cel (@bufbuild/cel-spec conformance data and the
# @bufbuild/cel reference evaluator for fit/'s CEL tests), packaging/tests/node (manifest checks).
repo="$(cd "$(dirname "$0")/.." && pwd)"
for node_dir in tests/validate tests/cel packaging/tests/node; do
  stamp="$repo/$node_dir/node_modules/.nodetopo-lock.sha256"
  lock_sum="$(sha256sum "$repo/$node_dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
    echo "install-deps: $node_dir node modules up to date"
  else
    echo "install-deps: npm ci in $node_dir"
    (cd "$repo/$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" >"$stamp"
  fi
done
