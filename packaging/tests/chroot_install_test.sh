#!/usr/bin/env bash
# chroot_install_test.sh DEBDIR CACHE [--agent]: install the nodetopo package of DEBDIR into a
# fresh Debian 12 chroot, its dependencies resolved by apt there, and run it.
#
# The base is `debootstrap --variant=minbase bookworm` from the mirror this machine's apt uses
# (packaging/tests/debian_mirror.py reads /etc/apt/sources.list*). Its result is kept as a tarball
# in CACHE, with apt's downloaded packages and lists, so a rerun unpacks it in seconds; delete
# CACHE to debootstrap again. Each run unpacks a new root, so nothing of a previous run remains.
# Mounts (proc, the apt caches) live in a private mount namespace and vanish with it.
# In the chroot: topo --version, topo dump --mock dgx-h100, topo matrix --mock dgx-h100 (NVLinks
# prove the installed mock NVML library is found), the installed files, each helper executable in
# /usr/libexec/nodetopo and its command's --help through topo, and a purge; with
# --agent also `topo agent --check-config /etc/nodetopo/agent.yaml`.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: chroot_install_test.sh DEBDIR CACHE [--agent]" >&2
  exit 2
fi
debdir=$(cd "$1" && pwd)
mkdir -p "$2"
cache=$(cd "$2" && pwd)
agent=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm
start=$(date +%s)

fail() { echo "chroot_install_test: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot, mounts); CI runs as root"
for tool in debootstrap unshare chroot curl tar; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps.sh installs it)"
done
deb=$(ls "$debdir"/nodetopo_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
[[ -n $deb ]] || fail "no nodetopo_*.deb in $debdir (built by the ctest entry packaging.deb.build)"

sources=$(/usr/bin/python3 "$here/debian_mirror.py" "$suite") || fail "cannot tell which Debian mirror to use"
mirror=$(head -n 1 <<<"$sources")
# Everything below needs the archive: debootstrap, and apt resolving the package's dependencies.
if ! curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" 2>"$cache/curl.err"; then
  fail "the Debian mirror $mirror (from this machine's /etc/apt/sources.list*) cannot be reached: $(cat "$cache/curl.err"). This test debootstraps Debian 12 from it and lets apt resolve the package's dependencies from it; connect the machine to the mirror, or change the mirror in /etc/apt/sources.list*"
fi

arch=$(dpkg --print-architecture)
base="$cache/$suite-minbase-$arch.tar.gz"
if [[ ! -f $base ]]; then
  echo "debootstrap --variant=minbase $suite from $mirror (cached as $base)"
  rm -rf "$cache/debootstrap"
  t0=$(date +%s)
  if ! debootstrap --variant=minbase "$suite" "$cache/debootstrap" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -n 20 "$cache/debootstrap.log" >&2
    fail "debootstrap failed (log: $cache/debootstrap.log)"
  fi
  tar -C "$cache/debootstrap" -czf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$cache/debootstrap"
  echo "debootstrap took $(($(date +%s) - t0)) s"
fi

root=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xzf "$base"
tail -n +2 <<<"$sources" >"$root/etc/apt/sources.list"
rm -f "$root"/etc/apt/sources.list.d/*
cp "$deb" "$root/tmp/"
mkdir -p "$cache/apt-archives/partial" "$cache/apt-lists/partial"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# Runs in the chroot; a failing step names itself.
cat >"$root/tmp/run-test.sh" <<EOF
#!/bin/sh
set -eu
step() { echo "--- \$*"; }
step apt-get update
apt-get update -qq
step apt-get install ./$(basename "$deb") with its dependencies
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb") >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
grep -E '^(Setting up|Unpacking) ' /tmp/apt.log | sed 's/^/    /'
step topo --version
topo --version
step topo dump --mock dgx-h100
topo dump --mock dgx-h100 >/tmp/dump.txt
head -n 8 /tmp/dump.txt
grep -q 'H100' /tmp/dump.txt || { echo "no H100 in the dump"; exit 1; }
step topo matrix --mock dgx-h100 "(NVLinks come from the installed mock NVML library)"
topo matrix --mock dgx-h100 >/tmp/matrix.txt
head -n 3 /tmp/matrix.txt
grep -q 'NV18' /tmp/matrix.txt || { echo "no NV18 in the matrix: the mock NVML library was not found"; exit 1; }
step installed files
for f in /lib/systemd/system/nodetopo.service /usr/lib/sysusers.d/nodetopo.conf \
         /usr/lib/tmpfiles.d/nodetopo.conf /usr/share/dbus-1/system.d/dev.nodetopo.Topology1.conf \
         /etc/nodetopo/agent.yaml /usr/share/man/man1/topo.1.gz \
         /usr/share/bash-completion/completions/topo; do
  test -f "\$f" || { echo "missing \$f"; exit 1; }
  echo "    \$f"
done
grep -qx '/etc/nodetopo/agent.yaml' /var/lib/dpkg/info/nodetopo.conffiles || { echo "agent.yaml is not a conffile"; exit 1; }
step "the helper executables topo execs into (docs/cli.md#executables), each command's own --help"
for cmd in capture:--output cleanup:--kubeconfig kubelet-plugin:--plugins-dir agent:--check-config; do
  name=\${cmd%%:*} option=\${cmd#*:}
  test -x /usr/libexec/nodetopo/topo-\$name || { echo "missing /usr/libexec/nodetopo/topo-\$name"; exit 1; }
  topo \$name --help >/tmp/help.txt || { cat /tmp/help.txt; echo "topo \$name --help failed"; exit 1; }
  grep -q -- "\$option" /tmp/help.txt || { echo "topo \$name --help does not show \$option"; exit 1; }
  echo "    /usr/libexec/nodetopo/topo-\$name"
done
if [ "${agent}" = "--agent" ]; then
  step topo agent --check-config /etc/nodetopo/agent.yaml
  topo agent --check-config /etc/nodetopo/agent.yaml
fi
step "maintainer scripts with systemd-sysusers and systemd-tmpfiles present"
! getent passwd nodetopo >/dev/null || { echo "user nodetopo created without systemd-sysusers"; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd-standalone-sysusers systemd-standalone-tmpfiles >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall /tmp/$(basename "$deb") >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
getent passwd nodetopo || { echo "postinst did not create the user nodetopo"; exit 1; }
owner=\$(stat -c '%U:%G %a' /var/lib/nodetopo) && echo "    /var/lib/nodetopo \$owner"
[ "\$owner" = "nodetopo:nodetopo 750" ] || { echo "/var/lib/nodetopo is \$owner, expected nodetopo:nodetopo 750"; exit 1; }
step apt-get purge nodetopo
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nodetopo >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
test ! -e /usr/bin/topo || { echo "topo still installed after purge"; exit 1; }
test ! -e /etc/nodetopo/agent.yaml || { echo "agent.yaml left after purge"; exit 1; }
echo "--- ok"
EOF
chmod +x "$root/tmp/run-test.sh"

unshare --mount --propagation private --fork /bin/sh -eu -c '
  root=$1 cache=$2
  mount -t proc proc "$root/proc"
  mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
  mount --bind "$cache/apt-lists" "$root/var/lib/apt/lists"
  exec chroot "$root" /tmp/run-test.sh
' sh "$root" "$cache" || fail "the package failed in the Debian 12 chroot (see the step above)"
if [[ $agent != --agent ]]; then
  echo "note: topo agent --check-config not run: this build has no agent (target nodetopo_daemon)"
fi
echo "chroot_install_test: ok in $(($(date +%s) - start)) s"
