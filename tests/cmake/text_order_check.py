#!/usr/bin/env python3
"""Checks that topo was linked in the order cmake/text_order.py recorded.

    text_order_check.py ORDER TOPO UNORDERED

ORDER is the recorded list; TOPO the ordered link, UNORDERED its twin linked the usual way.
The functions of the list that TOPO defines must lie together: the stretch of text from the
first to the last of them may hold little else (at most half as much again as their own size:
alignment, and code that shares their sections), while in UNORDERED the same functions are spread over most of the text. A link
that ignored the order file (GNU ld, a lost option) fails the first condition. Every name part
of text_order.py's VARIANTS must still be in one of the twin's functions.
"""

import importlib.util
import pathlib
import subprocess
import sys


def functions(binary):
    """name -> (address, size) of the defined functions, from nm."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                         text=True, check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            table.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    return table


def stretch(table, names):
    """(span from the first to the end of the last, total size, count) of `names` in `table`."""
    found = {table[n] for n in names if n in table and table[n][1] > 0}
    if not found:
        return 0, 0, 0
    start = min(a for a, _ in found)
    end = max(a + s for a, s in found)
    return end - start, sum(s for _, s in found), len(found)


def recorder_variants():
    """cmake/text_order.py's VARIANTS: the CPU-feature variants it lists together."""
    path = pathlib.Path(__file__).resolve().parents[2] / "cmake" / "text_order.py"
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    spec = importlib.util.spec_from_file_location("text_order", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VARIANTS


def main():
    order_path, topo, unordered = sys.argv[1:4]
    with open(order_path, encoding="utf-8") as f:
        names = [line.strip() for line in f if line.strip()]
    if len(names) < 100:
        sys.exit(f"{order_path}: {len(names)} functions recorded; a dump runs hundreds")

    twin = functions(unordered)
    # A variant renamed in the source would silently drop out of the order.
    for group in recorder_variants():
        for part in group:
            if not any(part in name for name in twin):
                sys.exit(f"cmake/text_order.py: VARIANTS names {part}, which {unordered} does not "
                         "define: renamed? Update VARIANTS")

    span, size, count = stretch(functions(topo), names)
    span_twin, size_twin, _ = stretch(twin, names)
    print(f"{count} of {len(names)} recorded functions in {topo}: {size} bytes of code in "
          f"{span} bytes of text (twin linked without the order: {span_twin})")
    if count < len(names) * 0.9:
        sys.exit(f"{topo}: only {count} of the {len(names)} recorded functions defined")
    if span > size * 1.5:
        sys.exit(f"{topo}: the recorded functions are not together ({span} bytes of text for "
                 f"{size} bytes of code): the order was not applied")
    if span_twin < size_twin * 2:
        sys.exit(f"{unordered}: the recorded functions are already together without an order; "
                 "this check can no longer tell an ordered link from another")


if __name__ == "__main__":
    main()
