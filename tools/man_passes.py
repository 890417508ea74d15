#!/usr/bin/env python3
"""man_passes.py OPMIG: rewrite the pass catalogue of man/opmig-migrate.1
(between the BEGIN PASSES and END PASSES comment lines) from
`OPMIG migrate --list-passes`.  Run it after adding a pass; t1100 checks
that every listed pass is in the page."""
import subprocess
import sys


def esc(s):
    return s.replace("\\", "\\\\").replace("-", "\\-")


def catalogue(opmig):
    out = subprocess.run([opmig, "migrate", "--list-passes"], check=True,
                         capture_output=True, text=True).stdout
    passes, cur = [], None
    for line in out.splitlines():
        if not line.startswith(" "):
            cur = {"name": line[:24].strip(), "kind": line[25:37].strip(),
                   "sum": line[38:].strip(), "m": None, "v": []}
            passes.append(cur)
        elif line.strip().startswith("matches:"):
            cur["m"] = line.split(":", 1)[1].strip()
        elif line.strip().startswith("variant "):
            name, emits = line.strip()[len("variant "):].split(" emits: ")
            cur["v"].append((name, emits))
    lines = []
    for p in passes:
        lines += [".TP", ".B %s" % esc(p["name"]),
                  "(%s) %s." % (p["kind"], esc(p["sum"]))]
        if p["m"]:
            lines.append("Matches: %s." % esc(p["m"]))
            lines.append("Variants, in order of preference: " + "; ".join(
                "%s (%s)" % (esc(a), esc(b)) for a, b in p["v"]) + ".")
    return lines


def main():
    page = "man/opmig-migrate.1"
    text = open(page, encoding="utf-8").read().split("\n")
    b = text.index('.\\" BEGIN PASSES')
    e = text.index('.\\" END PASSES')
    text[b + 1:e] = catalogue(sys.argv[1])
    open(page, "w", encoding="utf-8").write("\n".join(text))


if __name__ == "__main__":
    main()
