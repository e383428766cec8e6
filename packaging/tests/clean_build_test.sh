#!/usr/bin/env bash
# clean_build_test.sh SRC HOSTDEB OUT CACHE: build the package of the nodetopo tree SRC in a fresh
# Debian 12 chroot that has nothing but build-essential and debian/control's Build-Depends.
#
# packaging.deb.build builds on this machine, where everything is installed, so a library missing
# from Build-Depends goes unnoticed there; dpkg-checkbuilddeps only checks that what is listed is
# present. Here the list is the only source of packages: `apt-get build-dep` installs exactly
# Build-Depends (plus build-essential) into the minbase root of CACHE (chroot_install_test.sh's),
# then packaging/debian/build-deb.sh runs there as it does on a developer's machine, its own
# dpkg-checkbuilddeps included. The package built must declare the same Depends as the one
# in HOSTDEB (the shlibs of the same libraries).
#
# ccache is the one package added beyond Build-Depends (a compiler launcher: no header, no
# library), with this user's cache bind-mounted and the output placed at HOSTDEB's path inside the
# chroot, so that the compiler sees the same paths as packaging.deb.build did and a rebuild is
# served from the cache. NODETOPO_CLEAN_BUILD_NO_CCACHE=1 builds cold without it.
# Needs root and the Debian mirror (or CACHE's apt downloads). OUT receives the .deb and build.log.
set -euo pipefail
if [[ $# -ne 4 ]]; then
  echo "usage: clean_build_test.sh SRC HOSTDEB OUT CACHE" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2" "$3" "$4"
hostdeb=$(cd "$2" && pwd)
out=$(cd "$3" && pwd)
cache=$(cd "$4" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm
arch=$(dpkg --print-architecture)
start=$(date +%s)

fail() { echo "clean_build_test: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (chroot, mounts)"
for tool in debootstrap unshare chroot curl tar dpkg-deb; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps.sh installs it)"
done
host_pkg=$(ls "$hostdeb"/nodetopo_*_"$arch".deb 2>/dev/null | head -n 1)
[[ -n $host_pkg ]] || fail "no nodetopo_*.deb in $hostdeb (built by the ctest entry packaging.deb.build)"
version=$(dpkg-deb -f "$host_pkg" Version)

base="$cache/$suite-minbase-$arch.tar.gz"
sources=$(/usr/bin/python3 "$here/debian_mirror.py" "$suite") || fail "cannot tell which Debian mirror to use"
mirror=$(head -n 1 <<<"$sources")
curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" 2>"$cache/curl.err" ||
  fail "the Debian mirror $mirror (from this machine's /etc/apt/sources.list*) cannot be reached: $(cat "$cache/curl.err"). apt-get build-dep installs the Build-Depends from it"
if [[ ! -f $base ]]; then
  echo "debootstrap --variant=minbase $suite from $mirror (cached as $base)"
  rm -rf "$cache/debootstrap"
  debootstrap --variant=minbase "$suite" "$cache/debootstrap" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
  tar -C "$cache/debootstrap" -czf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$cache/debootstrap"
fi

root=$(mktemp -d "$cache/clean.XXXXXX")
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xzf "$base"
tail -n +2 <<<"$sources" >"$root/etc/apt/sources.list"
rm -f "$root"/etc/apt/sources.list.d/*
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$cache/apt-archives/partial" "$cache/apt-lists/partial"
# debian/control and changelog alone: what `apt-get build-dep DIR` reads.
mkdir -p "$root/var/tmp/control/debian"
cp "$src/packaging/debian/control" "$src/packaging/debian/changelog" "$root/var/tmp/control/debian/"

ccache_dir=
ccache_base=
if [[ ${NODETOPO_CLEAN_BUILD_NO_CCACHE:-0} != 1 ]] && command -v ccache >/dev/null; then
  ccache_dir=$(ccache -k cache_dir)
  ccache_base=$(ccache -k base_dir)
fi
result="$out/result"
rm -rf "$result" && mkdir -p "$result"

cat >"$root/var/tmp/build.sh" <<EOF
#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
step() { echo "--- \$*"; }
step apt-get build-dep: build-essential and the Build-Depends of debian/control
apt-get update -qq
apt-get build-dep -y -qq --no-install-recommends /var/tmp/control >/var/tmp/apt.log 2>&1 || { tail -n 40 /var/tmp/apt.log; exit 1; }
echo "    \$(grep -c '^Setting up ' /var/tmp/apt.log) packages installed"
if [ -n "$ccache_dir" ]; then
  apt-get install -y -qq --no-install-recommends ccache >/var/tmp/apt.log 2>&1 || { tail -n 20 /var/tmp/apt.log; exit 1; }
  export CCACHE_DIR="$ccache_dir" CCACHE_BASEDIR="$ccache_base"
fi
step build-deb.sh in the chroot
"$src/packaging/debian/build-deb.sh" "$src" "$hostdeb" "$version" >/var/tmp/build-deb.log 2>&1 || { tail -n 60 /var/tmp/build-deb.log; exit 1; }
tail -n 1 /var/tmp/build-deb.log
EOF
chmod +x "$root/var/tmp/build.sh"

# The source tree read-only at its own path, the output at HOSTDEB's path (backed by OUT/result),
# the ccache directory at its path: inside, the build sees the paths the host build saw.
t0=$(date +%s)
if ! unshare --mount --propagation private --fork /bin/sh -eu -c '
  root=$1 cache=$2 src=$3 hostdeb=$4 result=$5 ccache_dir=$6
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
  mount --bind "$cache/apt-lists" "$root/var/lib/apt/lists"
  mkdir -p "$root$src" "$root$hostdeb"
  mount --bind "$src" "$root$src"
  mount -o remount,bind,ro "$root$src"
  mount --bind "$result" "$root$hostdeb"
  if [ -n "$ccache_dir" ]; then
    mkdir -p "$root$ccache_dir"
    mount --bind "$ccache_dir" "$root$ccache_dir"
  fi
  exec chroot "$root" /var/tmp/build.sh
' sh "$root" "$cache" "$src" "$hostdeb" "$result" "$ccache_dir" 2>&1 | tee "$out/build.log"; then
  fail "the package does not build from Build-Depends alone (log: $out/build.log)"
fi
grep -q 'build-deb.sh: built nodetopo' "$out/build.log" || fail "no package built (log: $out/build.log)"
build_s=$(($(date +%s) - t0))

clean_pkg=$(ls "$result"/nodetopo_*_"$arch".deb 2>/dev/null | head -n 1)
[[ -n $clean_pkg ]] || fail "the chroot build left no nodetopo_*.deb in $result"
deps() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ *$//' | sort; }
if ! diff <(deps "$host_pkg") <(deps "$clean_pkg") >"$out/depends.diff"; then
  cat "$out/depends.diff" >&2
  fail "the package built from Build-Depends alone declares other Depends than $host_pkg (< host, > clean chroot)"
fi
echo "    Depends identical to the host build: $(deps "$clean_pkg" | wc -l) entries"
echo "clean_build_test: built from Build-Depends alone in ${build_s} s ($(($(date +%s) - start)) s in all)"
