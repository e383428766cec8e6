#!/usr/bin/env bash
# The sanitizer short mode of CI (docs/reliability.md#sanitizers): configures a second build of
# this source tree with ASan+UBSan (NODETOPO_SANITIZE) in BUILD_DIR and builds only the fuzz
# targets, i.e. the parsers and readers they link, as replay programs. The ctest entries
# sanitize.fuzz.<target>.replay then run them over the committed corpora. ccache is used when
# the environment asks for it (CMAKE_CXX_COMPILER_LAUNCHER), as in the outer build.
# Usage: sanitize_build.sh SOURCE_DIR BUILD_DIR TARGET...
set -euo pipefail
src=$1
bin=$2
shift 2
start=$(date +%s)
# -O0: the replays take well under a second, so compile time is all that counts; -g1 gives the
# reports file and line without the cost of full debug info.
cmake -S "$src" -B "$bin" -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" \
  -DNODETOPO_SANITIZE=ON -DNODETOPO_WERROR=OFF -DNODETOPO_BUILD_BENCH=OFF \
  -DNODETOPO_SANITIZE_SHORT=OFF -DNODETOPO_TEST_CAPTURES=OFF >"$bin.configure.log" 2>&1 ||
  { cat "$bin.configure.log"; exit 1; }
configured=$(date +%s)
cmake --build "$bin" --target "$@" -- -j"${NODETOPO_SANITIZE_JOBS:-2}"
echo "sanitizer short build: configure $((configured - start)) s, build $(($(date +%s) - configured)) s"
