#!/usr/bin/python3
"""Every DRA attribute key and every node label the goldens contain is documented.

Usage: check_catalogues.py GOLDEN_EXPORT_DIR DRA_MD LABELS_MD

A key counts as documented when docs/dra.md (or docs/labels.md) names it in backquotes, either
whole (`nodetopo.dev/numa-nodes`) or, for attribute keys, without the domain (`pciDeviceID`).
Exit 1 listing what is missing, so that a new attribute or label cannot ship undocumented.
"""
import pathlib
import re
import sys

import yaml


def attribute_keys(golden_dir):
    keys = {}
    for path in sorted(golden_dir.glob("*.resourceslices.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            for item in doc.get("items", [doc]) if isinstance(doc, dict) else []:
                for device in (item.get("spec") or {}).get("devices") or []:
                    for key in (device.get("attributes") or {}):
                        keys.setdefault(key, path.name)
    return keys


def label_keys(golden_dir):
    keys = {}
    for path in sorted(golden_dir.glob("*.labels.txt")):
        for line in path.read_text().splitlines():
            if "=" in line:
                keys.setdefault(line.split("=", 1)[0], path.name)
    return keys


def documented(text):
    return set(re.findall(r"`([^`\n]+)`", text))


def main():
    golden_dir, dra_md, labels_md = map(pathlib.Path, sys.argv[1:4])
    missing = []
    dra = documented(dra_md.read_text())
    attrs = attribute_keys(golden_dir)
    if not attrs:
        missing.append(f"no attribute keys found in {golden_dir}/*.resourceslices.yaml")
    for key, golden in sorted(attrs.items()):
        if key not in dra and key.rsplit("/", 1)[-1] not in dra:
            missing.append(f"attribute {key} (in {golden}) is not in {dra_md}")
    labels_doc = documented(labels_md.read_text())
    labels = label_keys(golden_dir)
    if not labels:
        missing.append(f"no labels found in {golden_dir}/*.labels.txt")
    for key, golden in sorted(labels.items()):
        if key not in labels_doc and key.rsplit("/", 1)[-1] not in labels_doc:
            missing.append(f"label {key} (in {golden}) is not in {labels_md}")
    for m in missing:
        print(m)
    print(f"{len(attrs)} attribute keys, {len(labels)} labels checked")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
