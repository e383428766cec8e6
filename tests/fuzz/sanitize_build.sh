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
# reports file and line without the cost of full debug info. clang (installed by install-deps.sh
# for the fuzz preset) compiles this build in 0.57x GCC's time (fit/src/alloc/load.cpp under
# ASan+UBSan at -O0: 10.3 s against 18.1 s on a 2-vCPU VM; the whole build 204 s against 323 s),
# and its sanitizers are those the fuzz preset runs; GCC is the fallback where clang is missing.
# Full paths: CMake stores a compiler given by name as its full path, and a later run given the
# bare name again would count as a change of compiler (a new cache, everything rebuilt).
compilers=()
if cxx=$(command -v clang++-14) && cc=$(command -v clang-14); then
  compilers=(-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx")
else
  echo "sanitizer short build: clang-14 not found, building with the default compiler" >&2
fi
# A build directory configured with another compiler (an older checkout's gcc build) is started
# afresh rather than through CMake's own switch of compilers, which warns and reconfigures twice.
if [[ ${#compilers[@]} -gt 0 && -f "$bin/CMakeCache.txt" ]] &&
  [[ $(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$bin/CMakeCache.txt") != "$cxx" ]]; then
  rm -rf "$bin"
fi
cmake -S "$src" -B "$bin" -G Ninja "${compilers[@]}" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" \
  -DNODETOPO_SANITIZE=ON -DNODETOPO_WERROR=OFF -DNODETOPO_BUILD_BENCH=OFF \
  -DNODETOPO_SANITIZE_SHORT=OFF -DNODETOPO_TEST_CAPTURES=OFF >"$bin.configure.log" 2>&1 ||
  { cat "$bin.configure.log"; exit 1; }
configured=$(date +%s)
cmake --build "$bin" --target "$@" -- -j"${NODETOPO_SANITIZE_JOBS:-2}"
echo "sanitizer short build: configure $((configured - start)) s, build $(($(date +%s) - configured)) s"
