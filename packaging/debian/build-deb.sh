#!/usr/bin/env bash
# build-deb.sh SRC OUT [VERSION]: build the Debian package of the nodetopo tree SRC with debhelper
# (`dpkg-buildpackage -b -us -uc`) and leave nodetopo_*.deb, .changes and .buildinfo in OUT.
#
# debian/ is kept in packaging/debian rather than at the repository root: upstream source trees
# that carry their own debian/ get in the way of distribution packagers, and dpkg-buildpackage
# writes its results into the parent of the tree it builds. So the tree is copied (without build
# output, .git, node_modules or shared/) to OUT/staging/nodetopo-VERSION, this directory is put there
# as debian/, and the results are moved into OUT. The copy's path stays the same from run to run,
# so ccache (when installed) serves a rebuild. VERSION, when given (the ctest entry passes CMake's
# PROJECT_VERSION), must equal the version of debian/changelog.
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: build-deb.sh SRC OUT [VERSION]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
here="$src/packaging/debian"
for tool in dpkg-buildpackage dpkg-parsechangelog dpkg-checkbuilddeps dh; do
  command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool not found (scripts/install-deps.sh installs debhelper and dpkg-dev)" >&2; exit 1; }
done
version=$(dpkg-parsechangelog -l "$here/changelog" -S Version)
if [[ $# -eq 3 && $3 != "$version" ]]; then
  echo "build-deb.sh: $here/changelog is at version $version but the project (CMakeLists.txt) is at $3: add a changelog entry (dch -v $3)" >&2
  exit 1
fi
start=$(date +%s)
staging="$out/staging"
tree="$staging/nodetopo-$version"
rm -rf "$staging" "$out"/nodetopo_* "$out"/nodetopo-dbgsym_*
mkdir -p "$tree"
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./shared \
  --exclude=node_modules --exclude=./.cache --exclude=./debian -cf - . | tar -C "$tree" -xf -
cp -r "$here" "$tree/debian"
rm -f "$tree/debian/build-deb.sh"

cd "$tree"
if ! missing=$(dpkg-checkbuilddeps 2>&1); then
  echo "build-deb.sh: $missing (scripts/install-deps.sh installs the build dependencies)" >&2
  exit 1
fi
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  # debhelper points HOME at a directory inside the build tree, where ccache would find neither
  # its configuration nor its cache: name both as this user has them.
  CCACHE_DIR=$(ccache -k cache_dir)
  CCACHE_BASEDIR=$(ccache -k base_dir)
  export CCACHE_DIR CCACHE_BASEDIR
fi
export DEB_BUILD_OPTIONS="parallel=${NODETOPO_DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}"
if ! dpkg-buildpackage -b -us -uc >"$staging/build.log" 2>&1; then
  tail -n 60 "$staging/build.log" >&2
  echo "build-deb.sh: dpkg-buildpackage failed; full log: $staging/build.log" >&2
  exit 1
fi
mv "$staging"/nodetopo_"$version"_* "$out"/
mv "$staging"/nodetopo-dbgsym_"$version"_* "$out"/ 2>/dev/null || true
ls -l "$out"/*.deb
dpkg-deb --contents "$out/nodetopo_${version}_$(dpkg --print-architecture).deb"
echo "build-deb.sh: built nodetopo $version in $(($(date +%s) - start)) s"
