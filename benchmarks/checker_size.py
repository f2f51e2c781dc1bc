r"""Benchmark: how much code a fresh process loads to verify a certificate of arrays.

Writes a small problem (``Phi``, ``U_K`` in an ``.npz``) and its certificate in both forms
(JSON and binary ``.npz``), then in a fresh subprocess for each of

* ``api``: ``relu_gating.checker.verify(CERT, Phi, U_K, "bias")`` (a pattern certificate as JSON
  and as ``.npz``, and a tree certificate);
* ``cli``: ``relu-gating verify CERT INPUT --features bias`` (``relu_gating.cli.main``),

lists the ``relu_gating`` modules in ``sys.modules``, counts their code lines (docstrings,
comments and blank lines not counted), prints the total, and asserts that nothing of
``relu_gating.search``, ``relu_gating.patterns``, ``solvers`` or ``cvxpy`` was loaded.

Usage::

    python benchmarks/checker_size.py [--limit 1500] [--list]
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import subprocess
import sys
import tempfile
import tokenize

FORBIDDEN = ("relu_gating.search", "relu_gating.patterns", "solvers", "cvxpy")
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}

_CHILD = r"""
import json, sys
mode, cert, inp = sys.argv[1:4]
if mode == "api":
    import numpy as np
    from relu_gating.checker import verify
    with np.load(inp) as z:
        rep = verify(cert, z["Phi"], z["U_K"], "bias")
    assert rep.valid and rep.certified, rep.reasons
else:
    from relu_gating.cli import main
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["verify", cert, inp, "--features", "bias", "--quiet"])
    assert code == 0, code
mods = {name: getattr(m, "__file__", None) for name, m in list(sys.modules.items())}
print(json.dumps(mods))
"""


def code_lines(path: str) -> int:
    """Lines of ``path`` holding code: not blank, not a comment, not part of a docstring."""
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    doc: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            doc.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in _SKIP:
            lines.update(r for r in range(tok.start[0], tok.end[0] + 1) if r not in doc)
    return len(lines)


def _files(root: str) -> tuple[str, str, str, str]:
    """A small problem, its certificate as JSON and as ``.npz``, a tree certificate, and the input file."""
    import numpy as np

    sys.path.insert(0, os.getcwd())
    import relu_gating as rg
    from relu_gating.certificate import save_binary

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    Phi = np.c_[X, np.ones(40)]
    U = np.linalg.qr(rng.normal(size=(40, 3)))[0]
    res = rg.best_neuron(Phi, U, features="bias")
    cj, cb, ct, inp = (os.path.join(root, f) for f in ("c.json", "c.npz", "t.json", "x.npz"))
    with open(cj, "w") as fh:
        json.dump(res.to_dict(), fh)
    save_binary(res, cb)
    with open(ct, "w") as fh:
        json.dump(rg.best_neuron(Phi, U, features="bias", strategy="branch-and-bound").to_dict(), fh)
    np.savez(inp, Phi=Phi, U_K=U)
    return cj, cb, ct, inp


def measure(mode: str, cert: str, inp: str) -> tuple[int, dict, list[str]]:
    """(code lines of relu_gating loaded, {module: lines}, forbidden modules loaded) in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), env_path()]))
    out = subprocess.run([sys.executable, "-c", _CHILD, mode, cert, inp], capture_output=True, text=True,
                         env=env, check=True, timeout=600).stdout
    mods = json.loads(out.strip().splitlines()[-1])
    ours = {k: code_lines(f) for k, f in mods.items() if (k == "relu_gating" or k.startswith("relu_gating.")) and f}
    bad = sorted(k for k in mods if any(k == f or k.startswith(f + ".") for f in FORBIDDEN))
    return sum(ours.values()), ours, bad


def env_path() -> str:
    return os.environ.get("PYTHONPATH", "")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=1500, help="largest code-line count accepted for the api mode")
    ap.add_argument("--list", action="store_true", help="list the modules and their code lines")
    a = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as root:
        cj, cb, ct, inp = _files(root)
        for mode in ("api", "cli"):
            for kind, cert in (("json", cj), ("npz", cb), ("tree", ct)):
                total, ours, bad = measure(mode, cert, inp)
                out[(mode, kind)] = total
                print(f"{mode:4s} {kind:5s} {total:6d} code lines of relu_gating in {len(ours)} modules; "
                      f"forbidden loaded: {bad or 'none'}")
                if a.list:
                    for k in sorted(ours):
                        print(f"      {ours[k]:5d}  {k}")
                assert not bad, bad
    assert max(out[("api", "json")], out[("api", "npz")], out[("api", "tree")]) <= a.limit, out
    return out


if __name__ == "__main__":
    main()
