#!/usr/bin/python3
"""debian_mirror.py [SUITE]: the Debian archive this machine's apt uses, for a chroot of SUITE.

Reads /etc/apt/sources.list and /etc/apt/sources.list.d/*.list and *.sources (one-line and
deb822 formats), keeps the `deb` entries of SUITE and its companion suites (SUITE-updates,
SUITE-security), and prints:

    the URI of the entry for SUITE itself (debootstrap's mirror), on the first line;
    then one sources.list line per kept entry (for apt inside the chroot).

Nothing is hard-coded: the mirror is whatever this machine is configured with. Exit status 1
with a message naming the files read when no entry for SUITE exists.
"""
import glob
import sys

suite = sys.argv[1] if len(sys.argv) > 1 else "bookworm"


def one_line_entries(path):
    for line in open(path, encoding="utf-8"):
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "deb":
            continue
        words = [w for w in words[1:] if not (w.startswith("[") or w.endswith("]"))]
        if len(words) >= 2:
            yield words[0], [words[1]], words[2:]


def deb822_entries(path):
    stanza = {}
    key = None
    lines = open(path, encoding="utf-8").read().splitlines() + [""]
    for line in lines:
        if line.startswith("#"):
            continue
        if not line.strip():
            if stanza:
                if "deb" in stanza.get("types", "").split() and stanza.get("enabled", "yes") != "no":
                    for uri in stanza.get("uris", "").split():
                        yield uri, stanza.get("suites", "").split(), stanza.get("components", "").split()
            stanza, key = {}, None
        elif line[0] in " \t" and key:
            stanza[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            stanza[key] = value.strip()


files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
sources = sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
entries = []
for path in files:
    try:
        entries += list(one_line_entries(path))
    except FileNotFoundError:
        pass
for path in sources:
    entries += list(deb822_entries(path))

mirror = None
lines = []
for uri, suites, components in entries:
    for s in suites:
        if s == suite or s.startswith(suite + "-"):
            lines.append(f"deb {uri} {s} {' '.join(components) or 'main'}")
            if s == suite and mirror is None:
                mirror = uri
if mirror is None:
    print(f"debian_mirror.py: no 'deb' entry for suite {suite} in {', '.join(files + sources)}",
          file=sys.stderr)
    sys.exit(1)
print(mirror)
print("\n".join(dict.fromkeys(lines)))
