#!/usr/bin/env python3
"""Cross-checks the NVML probe against nvidia-smi on a host with a real NVIDIA driver.

Outside the default test run (CI machines have no GPU): on a GPU host configure with
-DNODETOPO_TEST_HARDWARE=ON and run `ctest -L hardware`, or run it by hand after building:

    python3 tests/hardware/nvml_real_driver_check.py build/ci/topo

nvidia-smi is built on NVIDIA's own nvml.h, so agreement on PCI bus ids, UUIDs, names, serials,
memory sizes, NVLink counts and fabric membership shows that nodetopo's hand-written ABI
declarations (probes/nvml_abi/include/nodetopo/nvml_abi.hpp) match the driver: a wrong struct
layout would garble the bus id or UUID, a wrong memory struct the size. Exit status: 0 all agree, 1 a mismatch, 2 the
check could not run.
"""
import json
import re
import subprocess
import sys


def run(argv, required=True):
    """stdout of argv; exits with 2 when a required command fails, else returns ""."""
    try:
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        print(f"{' '.join(argv)}: {e}", file=sys.stderr)
        if required:
            sys.exit(2)
        return ""


def norm_bdf(text):
    """'00000000:1B:00.0' -> '0000:1b:00.0' (the model's form)."""
    domain, rest = text.strip().lower().split(":", 1)
    return f"{int(domain, 16):04x}:{rest}"


def fabric_fields(section):
    """'key : value' lines directly under the 'Fabric' heading of one GPU's `nvidia-smi -q`."""
    lines = section.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != "Fabric":
            continue
        indent = len(line) - len(line.lstrip())
        fields, child_indent = {}, None
        for sub in lines[i + 1:]:
            if not sub.strip():
                continue
            sub_indent = len(sub) - len(sub.lstrip())
            if sub_indent <= indent:
                break
            child_indent = child_indent or sub_indent
            if sub_indent == child_indent and ":" in sub:
                key, value = sub.split(":", 1)
                fields[key.strip()] = value.strip()
        return fields
    return None


def walk(node):
    yield node
    for child in node.get("children", []):
        yield from walk(child)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    topo = sys.argv[1]
    model = json.loads(run([topo, "dump", "--format", "json"]))
    problems = []

    report = next((p for p in model["probes"] if p["name"] == "nvml"), None)
    if report is None:
        print("no nvml probe report in the model", file=sys.stderr)
        return 2
    print(f"nvml probe: {report['status']} {report.get('error', '')}")
    for w in report.get("warnings", []):
        print(f"  warning: {w}")
    if report["status"] not in ("ok", "warnings"):
        problems.append(f"nvml probe status {report['status']}")

    accels = {n["id"].split("/", 1)[1]: n for n in walk(model["machine"]) if n["kind"] == "accelerator"}
    smi = run(["nvidia-smi", "--query-gpu=index,pci.bus_id,uuid,name,serial,memory.total,driver_version",
               "--format=csv,noheader,nounits"])
    gpus = {}
    for line in smi.strip().splitlines():
        index, bus, uuid, name, serial, mem_mib, driver = [f.strip() for f in line.split(",")]
        bdf = norm_bdf(bus)
        gpus[int(index)] = bdf
        node = accels.get(bdf)
        if node is None:
            problems.append(f"GPU {index} ({bdf}): no accelerator/{bdf} node")
            continue
        expect = {"index": int(index), "uuid": uuid, "product": name, "driver_version": driver}
        if serial not in ("[N/A]", "N/A", ""):
            expect["serial"] = serial
        for key, value in expect.items():
            if node.get(key) != value:
                problems.append(f"GPU {index} ({bdf}): {key} is {node.get(key)!r}, nvidia-smi says {value!r}")
        mem = node.get("memory_bytes")
        if mem is None or mem // (1024 * 1024) != int(mem_mib):
            problems.append(f"GPU {index} ({bdf}): memory_bytes {mem} vs nvidia-smi {mem_mib} MiB")
        print(f"GPU {index} {bdf}: {node.get('product')} {node.get('uuid')} "
              f"{node.get('architecture', '?')} {mem} bytes")

    # NVLink: active links per GPU, as `nvidia-smi nvlink -s` lists them ("Link N: 26.562 GB/s";
    # inactive links say "<inactive>").
    active = {}
    current = None
    for line in run(["nvidia-smi", "nvlink", "-s"], required=False).splitlines():
        m = re.match(r"GPU (\d+):", line)
        if m:
            current = int(m.group(1))
            active[current] = 0
        elif current is not None and re.search(r"Link \d+: .*GB/s", line):
            active[current] += 1
    links = {}
    for link in model["links"]:
        if link["kind"] == "nvlink":
            links[link["from"]] = links.get(link["from"], 0) + link["value"]
            print(f"  {link['from']} -> {link['to']}: NV{link['value']}")
    for index, bdf in gpus.items():
        have = links.get(f"accelerator/{bdf}", 0)
        want = active.get(index, 0)
        if have != want:
            problems.append(f"GPU {index} ({bdf}): {have} NVLinks in the model, nvidia-smi lists {want} active")

    # Fabric membership, where the driver reports it (`nvidia-smi -q`, section "Fabric").
    query = run(["nvidia-smi", "-q"], required=False)
    parts = re.split(r"\nGPU ([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*\n", query)
    for bus, section in zip(parts[1::2], parts[2::2]):
        fields = fabric_fields(section)
        if fields is None:
            continue
        node = accels.get(norm_bdf(bus), {})
        index = node.get("index", bus)
        if fields.get("State") == "Completed" and fields.get("Status") == "Success":
            uuid = fields.get("ClusterUUID", "").lower()
            if uuid and uuid.strip("0-") and node.get("fabric_cluster_uuid") != uuid:
                problems.append(f"GPU {index}: fabric_cluster_uuid {node.get('fabric_cluster_uuid')!r} vs {uuid!r}")
            clique = fields.get("CliqueId")
            if uuid and uuid.strip("0-") and clique and str(node.get("fabric_clique_id")) != clique:
                problems.append(f"GPU {index}: fabric_clique_id {node.get('fabric_clique_id')} vs {clique}")
        print(f"GPU {index} fabric: {fields}")

    for p in problems:
        print(f"MISMATCH: {p}")
    print("all agree" if not problems else f"{len(problems)} mismatch(es)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
