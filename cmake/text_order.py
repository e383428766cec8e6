#!/usr/bin/env python3
"""Writes the functions `topo dump` runs, one mangled name a line, for lld's
--symbol-ordering-file (cmake/NodetopoTextOrder.cmake).

    text_order.py --valgrind VALGRIND TOPO OUT

Why: a run of topo executes about 600 of its functions, spread over 4 MiB of text. The kernel
maps the page-cache pages around each page fault (64 KiB), so the run faults on about 30 text
windows, each a few microseconds on a VM: a fixed cost of every run, larger than what lstopo
spends on the smallest machines (docs/performance.md, round 18). Placed together by the
linker, the same functions fill a few windows.

The names are what callgrind saw executing in TOPO itself (not in the shared libraries) while
it dumps two of its own mock hosts, built first by `topo mock build` (so nothing outside the
build is needed): a machine without PCI devices and an 8-GPU one, in the text and the JSON
formats, through --root like a capture. A name the final link does not find is skipped by lld.

The list must be the same on every build machine, or the ordered executable is not
reproducible (the Debian package is built with it). So what made lists differ is held fixed:
- one CPU: with two, the probes overlap on a second thread (on the 8-GPU host) and which thread
  functions ran, and when, depended on timing; pinned, every run takes the same path (what only
  the overlap runs, a dozen functions, is left unordered);
- an environment of PATH, TMPDIR and LC_ALL=C only (no NODETOPO_* override of the caller's);
- the code chosen by the CPU's features (VARIANTS): where the recording saw one variant, every
  variant is listed beside it, so a build machine with AVX2 and one without give one list;
- the order: the names each run adds are sorted (callgrind writes them in an order of its own,
  which differed between this machine and a chroot on the same binary), the runs in the order
  of PROFILES and FORMATS, so that what the smallest host runs comes first.
A package built on the host and one built in a fresh chroot (packaging.deb.clean_build) had
byte-identical lists and byte-identical topo executables.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# The mock hosts recorded, each dumped in these formats. Every run must exit 0.
PROFILES = ["cpu-only", "dgx-h100"]
FORMATS = ["text", "json"]

# callgrind's compressed names: "fn=(12) name" defines id 12, a later "fn=(12)" reuses it; the
# same for objects ("ob=", and "cob=" or "cfn=" on call lines).
NAME_LINE = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")

# Functions of which one is chosen at run time by the CPU's features, as parts of their mangled
# names (the same length, so a name stays well-formed): probes/src/pci/pci_ids.cpp's line
# finders, AVX2 where the CPU has it, else SSE2. build.text_order fails when a name here is no
# longer one of topo's functions.
VARIANTS = [("14next_mark_avx2", "14next_mark_sse2")]


def with_variants(name):
    """`name`, and the names of its CPU-feature variants (VARIANTS) after it."""
    for group in VARIANTS:
        for part in group:
            if part in name:
                return [name] + [name.replace(part, other) for other in group if other != part]
    return [name]


def executed_functions(profile, binary):
    """Function names with cost in `binary`, in the order callgrind wrote them."""
    objects, functions = {}, {}
    current_object = None
    names = []
    with open(profile, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = NAME_LINE.match(line.rstrip("\n"))
            if not m:
                continue
            kind, ident, name = m.groups()
            table = objects if kind in ("ob", "cob") else functions
            if name is not None:
                table[ident] = name
            if kind == "ob":
                current_object = objects.get(ident)
            elif kind == "fn" and current_object is not None:
                if os.path.realpath(current_object) == binary:
                    names.append(functions[ident])
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--valgrind", default="valgrind")
    parser.add_argument("topo")
    parser.add_argument("out")
    args = parser.parse_args()
    binary = os.path.realpath(args.topo)
    # One CPU for this process and every child (see the module's text).
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    seen, order = set(), []
    with tempfile.TemporaryDirectory(prefix="nodetopo-text-order-") as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": tmp, "LC_ALL": "C"}
        runs = []
        for host in PROFILES:
            root = os.path.join(tmp, host)
            subprocess.run([binary, "mock", "build", host, root], stdout=subprocess.DEVNULL,
                           env=env, check=True)
            runs += [["dump", "--root", root, "--format", fmt] for fmt in FORMATS]
        for i, run in enumerate(runs):
            profile = os.path.join(tmp, f"callgrind.{i}")
            cmd = [args.valgrind, "--tool=callgrind", "--demangle=no", "--dump-instr=no",
                   "--trace-children=no", f"--callgrind-out-file={profile}", binary, *run]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, env=env, check=False)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                sys.exit(f"text_order.py: `topo {' '.join(run)}` under callgrind exited "
                         f"{done.returncode}")
            # The names new in this run, sorted (see the module's text).
            fresh = sorted({name for name in executed_functions(profile, binary)
                            # callgrind names code without a symbol by its address
                            if name not in seen and not name.startswith("0x")})
            for name in fresh:
                for each in with_variants(name):
                    if each not in seen:
                        seen.add(each)
                        order.append(each)
    if "main" not in seen:
        sys.exit(f"text_order.py: callgrind saw no function of {binary} run (is it stripped?)")

    tmp_out = args.out + ".tmp"
    with open(tmp_out, "w", encoding="utf-8") as f:
        f.write("".join(name + "\n" for name in order))
    os.replace(tmp_out, args.out)


if __name__ == "__main__":
    main()
