"""Print the first N shell commands of a README (the lines of its ```bash / ```sh blocks), one a line.

CI runs them verbatim (``.ci/run``), so the commands a new user copies are the ones tested.
Exits 1 when the README has fewer than N commands (a renamed or reformatted README must not make CI
silently run nothing).
"""

import re
import sys


def commands(text: str) -> list[str]:
    """The non-empty, non-comment lines of the ```bash / ```sh / ```shell fenced blocks, in order."""
    out = []
    for block in re.findall(r"^```(?:bash|sh|shell|console)\s*\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:]
            if line and not line.startswith("#"):
                out.append(line)
    return out


def main(argv: list[str]) -> int:
    path, n = argv[1], int(argv[2])
    with open(path, encoding="utf-8") as fh:
        found = commands(fh.read())
    if len(found) < n:
        print(f"{path}: expected at least {n} shell commands in ```bash blocks, found {len(found)}", file=sys.stderr)
        return 1
    print("\n".join(found[:n]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
