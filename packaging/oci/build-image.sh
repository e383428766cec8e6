#!/usr/bin/env bash
# build-image.sh DEBDIR OUT [CACHE]: the nodetopo OCI image, built with buildah from a Debian 12
# root file system made here by debootstrap (no image from a registry).
#
#   1. base: `debootstrap --variant=minbase bookworm` from the mirror this machine's apt uses,
#      cached as a tarball in CACHE (default OUT/cache; the chroot test's cache works too);
#   2. the package of DEBDIR installed there by apt (dependencies resolved from the mirror,
#      no recommends), the user nodetopo (uid/gid 10001, the DaemonSet's runAsUser) created, apt's
#      lists, caches, docs and man pages removed;
#   3. smoke run: `topo --version` and `topo dump --mock dgx-h100` in a chroot of that root file
#      system, as uid 10001 (and again in the committed image with `buildah run`, as its user,
#      with `topo agent --help` and `topo kubelet-plugin --help`: their helper executables);
#   4. `buildah from scratch`, the root file system added, entrypoint `topo agent`, user 10001,
#      HOST_ROOT=/host; committed as localhost/nodetopo:VERSION and written to
#      OUT/nodetopo-VERSION.oci.tar (load it with `podman load`, `skopeo copy` or
#      `ctr images import`).
# buildah runs with its own storage under OUT (vfs driver), nothing in /var/lib/containers.
# Needs root. Prints the image's size.
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: build-image.sh DEBDIR OUT [CACHE]" >&2
  exit 2
fi
debdir=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
cache=${3:-$out/cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm
uid=10001
start=$(date +%s)

fail() { echo "build-image.sh: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot, buildah)"
for tool in debootstrap buildah unshare chroot curl; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps.sh installs it)"
done
deb=$(ls "$debdir"/nodetopo_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
[[ -n $deb ]] || fail "no nodetopo_*.deb in $debdir (packaging/debian/build-deb.sh builds it)"
version=$(dpkg-deb -f "$deb" Version)

sources=$(/usr/bin/python3 "$here/../tests/debian_mirror.py" "$suite") || fail "cannot tell which Debian mirror to use"
mirror=$(head -n 1 <<<"$sources")
curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" ||
  fail "the Debian mirror $mirror (from /etc/apt/sources.list*) cannot be reached: the image's base is debootstrapped from it and apt resolves the package's dependencies from it"

arch=$(dpkg --print-architecture)
base="$cache/$suite-minbase-$arch.tar.gz"
if [[ ! -f $base ]]; then
  echo "debootstrap --variant=minbase $suite from $mirror"
  rm -rf "$cache/debootstrap"
  debootstrap --variant=minbase "$suite" "$cache/debootstrap" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
  tar -C "$cache/debootstrap" -czf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$cache/debootstrap"
fi

rootfs="$out/rootfs"
rm -rf "$rootfs"
mkdir -p "$rootfs"
tar -C "$rootfs" -xzf "$base"
tail -n +2 <<<"$sources" >"$rootfs/etc/apt/sources.list"
cp "$deb" "$rootfs/tmp/"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf" 2>/dev/null || true
cat >"$rootfs/tmp/setup.sh" <<EOF
#!/bin/sh
set -eu
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb") >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
groupadd --gid $uid nodetopo
useradd --uid $uid --gid $uid --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin nodetopo
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log /tmp/* \
       /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/*
: >/etc/resolv.conf
EOF
chmod +x "$rootfs/tmp/setup.sh"
unshare --mount --propagation private --fork /bin/sh -eu -c '
  mount -t proc proc "$1/proc"
  exec chroot "$1" /tmp/setup.sh
' sh "$rootfs" || fail "installing the package into the image's root file system failed"

echo "--- smoke run in a chroot of the image's root file system (uid $uid)"
unshare --mount --propagation private --fork /bin/sh -eu -c '
  mount -t proc proc "$1/proc"
  mount -t tmpfs tmpfs "$1/tmp"
  chroot --userspec="$2:$2" "$1" topo --version
  chroot --userspec="$2:$2" "$1" topo dump --mock dgx-h100 >"$3/smoke-dump.txt"
' sh "$rootfs" "$uid" "$out" || fail "topo does not run in the image's root file system"
head -n 5 "$out/smoke-dump.txt"
grep -q H100 "$out/smoke-dump.txt" || fail "topo dump --mock dgx-h100 in the image shows no H100"

echo "--- buildah"
storage=(--root "$out/storage" --runroot "$out/run" --storage-driver vfs)
tar -C "$rootfs" -cf "$out/rootfs.tar" --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* .
ctr=$(buildah "${storage[@]}" from scratch)
trap 'buildah "${storage[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah "${storage[@]}" add "$ctr" "$out/rootfs.tar" / >/dev/null
buildah "${storage[@]}" config \
  --entrypoint '["/usr/bin/topo", "agent"]' --cmd '' --user "$uid:$uid" --workingdir / \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env HOST_ROOT=/host \
  --label org.opencontainers.image.title=nodetopo \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.description="node hardware topology agent for Kubernetes" \
  "$ctr"
buildah "${storage[@]}" commit --quiet "$ctr" "localhost/nodetopo:$version" >/dev/null
rm -f "$out/nodetopo-$version.oci.tar"
buildah "${storage[@]}" push --quiet "localhost/nodetopo:$version" "oci-archive:$out/nodetopo-$version.oci.tar:localhost/nodetopo:$version"
buildah "${storage[@]}" inspect --type image --format '{{.OCIv1.Config.Entrypoint}} user={{.OCIv1.Config.User}} env={{.OCIv1.Config.Env}}' "localhost/nodetopo:$version"
echo
rm -f "$out/rootfs.tar"

echo "--- smoke run of the committed image (its user, environment and entrypoint's binary)"
run=$(buildah "${storage[@]}" from "localhost/nodetopo:$version")
trap 'buildah "${storage[@]}" rm "$ctr" "$run" >/dev/null 2>&1 || true' EXIT
[[ $(buildah "${storage[@]}" run --isolation chroot "$run" -- id -u) == "$uid" ]] || fail "the image does not run as uid $uid"
buildah "${storage[@]}" run --isolation chroot "$run" -- topo dump --mock dgx-h100 >"$out/smoke-image.txt" ||
  fail "topo dump --mock dgx-h100 fails in the image"
grep -q H100 "$out/smoke-image.txt" || fail "topo dump --mock dgx-h100 in the image shows no H100"
echo "topo dump --mock dgx-h100 as uid $uid in the image: $(wc -l <"$out/smoke-image.txt") lines"
# The DaemonSet's two long-running commands run as executables of their own
# (/usr/libexec/nodetopo/topo-agent, topo-kubelet-plugin; docs/cli.md#executables).
for cmd in agent:--check-config kubelet-plugin:--plugins-dir; do
  name=${cmd%%:*} option=${cmd#*:}
  buildah "${storage[@]}" run --isolation chroot "$run" -- topo "$name" --help >"$out/smoke-$name.txt" ||
    fail "topo $name --help fails in the image (is /usr/libexec/nodetopo/topo-$name there?)"
  grep -q -- "$option" "$out/smoke-$name.txt" || fail "topo $name --help in the image does not show $option"
done
echo "topo agent --help, topo kubelet-plugin --help in the image: ok"

echo "image localhost/nodetopo:$version: root file system $(du -sh "$rootfs" | cut -f1), archive $(du -h "$out/nodetopo-$version.oci.tar" | cut -f1) ($out/nodetopo-$version.oci.tar)"
echo "build-image.sh: done in $(($(date +%s) - start)) s"
