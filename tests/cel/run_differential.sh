#!/bin/sh
# Differential test: random core-CEL expressions evaluated by the npm reference @bufbuild/cel
# (tests/cel/differential.js) and by nodetopo's evaluator must agree.
# usage: run_differential.sh NODE RUNNER WORKDIR SEED COUNT
set -eu
node=$1 runner=$2 work=$3 seed=$4 count=$5
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/@bufbuild/cel" ]; then
  echo "tests/cel/node_modules is missing: run scripts/install-deps.sh" >&2
  exit 1
fi
mkdir -p "$work"
"$node" "$here/differential.js" "$seed" "$count" >"$work/differential-$seed.jsonl"
exec "$runner" "$work/differential-$seed.jsonl"
