#!/usr/bin/env bash
# kustomize_render.sh KUBECTL DIR OUT: render every overlay of DIR/overlays with
# `kubectl kustomize` into OUT/<overlay>.yaml. Fails naming the overlay that does not render, and
# when one of the shipped overlays (labels-only, dra, hami-lab) is missing.
set -uo pipefail
kubectl=$1
dir=$2
out=$3
command -v "$kubectl" >/dev/null || { echo "kustomize_render: $kubectl not found (scripts/install-deps.sh installs kubernetes-client when no kubectl is on the PATH)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
failed=0
for overlay in "$dir"/overlays/*/; do
  name=$(basename "$overlay")
  if "$kubectl" kustomize "$overlay" >"$out/$name.yaml" 2>"$out/$name.err"; then
    echo "rendered $name: $(grep -c '^kind:' "$out/$name.yaml") objects"
    rm -f "$out/$name.err"
  else
    echo "kustomize_render: overlay $name does not render: $(cat "$out/$name.err")" >&2
    rm -f "$out/$name.yaml"
    failed=1
  fi
done
for want in labels-only dra hami-lab; do
  [[ -d $dir/overlays/$want ]] || { echo "kustomize_render: overlay $want is missing" >&2; failed=1; }
done
exit $failed
