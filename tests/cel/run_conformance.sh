#!/bin/sh
# One ctest entry per cel-spec conformance suite: converts the suite from the npm package
# (tests/cel/node_modules, installed by scripts/install-deps.sh) and runs it through the C++
# evaluator. usage: run_conformance.sh NODE RUNNER WORKDIR SUITE
set -eu
node=$1 runner=$2 work=$3 suite=$4
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/@bufbuild/cel-spec" ]; then
  echo "tests/cel/node_modules is missing: run scripts/install-deps.sh" >&2
  exit 1
fi
mkdir -p "$work"
"$node" "$here/conformance_to_jsonl.js" "$suite" >"$work/$suite.jsonl"
exec "$runner" "$work/$suite.jsonl"
