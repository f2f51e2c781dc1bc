r"""Benchmark: how much code a fresh process loads to verify a certificate.

Writes a small problem (``Phi``, ``U_K`` in an ``.npz``; ``X`` alone in another) and its certificates
(a pattern certificate as JSON and as binary ``.npz``, a tree certificate as JSON and as binary ``.npz``,
kinds ``json``, ``npz``, ``tree``, ``treenpz``), then in a fresh
subprocess for each certificate and each of

* ``api``: ``relu_gating.verify(CERT, Phi, U_K, "bias")``, the public verify (the checker);
* ``cli``: ``relu-gating verify CERT INPUT --features bias`` (``relu_gating.cli.main``), INPUT
  holding ``Phi`` and ``U_K``;
* ``graph``: the same command with INPUT holding ``X`` only (the command builds the graph and
  ``U_K``: the spectral code loads too),

lists the ``relu_gating`` modules in ``sys.modules``, counts their code lines (docstrings,
comments and blank lines not counted), prints the total, and checks that nothing of ``FORBIDDEN`` was
loaded (the search, the enumerator, ``solvers``, cvxpy, and the code a verify does not need: the
certificate writers, ``coverage``, ``layers``, exact mode's modules, the checks of a caller's
graph) and every case's limit: the cases over it are listed last and the exit status is 1.

Usage::

    python benchmarks/checker_size.py [--limit 1500] [--cli-limit 2200] [--list]
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

FORBIDDEN = ("relu_gating.search", "relu_gating.patterns", "solvers", "cvxpy", "relu_gating.certificate",
             "relu_gating.coverage", "relu_gating.layers",
             # exact mode's code (verify --exact only) and the checks of a caller's graph (one built from X is valid)
             "relu_gating.checker._exact_mode", "relu_gating.checker._tree_exact", "relu_gating.checker._int_pencil",
             "relu_gating.spectral.checks")
#: The modes measured, and the limits (code lines of relu_gating) of the issue 38 brief.
MODES = ("api", "cli", "graph")
#: The certificate kinds: a pattern certificate as JSON and binary, a tree certificate as JSON and binary.
KINDS = ("json", "npz", "tree", "treenpz")
LIMITS = {"api": 1500, "cli": 2200, "graph": 2200}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}

_CHILD = r"""
import json, sys
mode, cert, inp = sys.argv[1:4]
if mode == "api":
    import numpy as np
    from relu_gating import verify
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


def _files(root: str) -> dict[str, str]:
    """A small problem's certificates (:data:`KINDS`) and inputs (``input``: ``Phi``
    and ``U_K``; ``x``: ``X`` alone, with the certificates of the problem the command builds from it)."""
    import numpy as np

    sys.path.insert(0, os.getcwd())
    import relu_gating as rg
    from relu_gating.certificate import save_binary
    from relu_gating.data.io import load_input, resolve_problem

    out = {k: os.path.join(root, f) for k, f in (("json", "c.json"), ("npz", "c.npz"), ("tree", "t.json"),
                                                  ("treenpz", "t.npz"), ("input", "x.npz"), ("x", "xonly.npz"))}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2))  # small: the certificates are built in a second or two (a tree of ~500 nodes)
    np.savez(out["x"], X=X)
    Phi, U = np.c_[X, np.ones(24)], np.linalg.qr(rng.normal(size=(24, 3)))[0]
    np.savez(out["input"], Phi=Phi, U_K=U)
    graph = resolve_problem(load_input(out["x"]))
    for tag, (P, Q) in (("", (Phi, U)), ("x-", (graph.Phi, graph.U_K))):
        res = rg.best_neuron(P, Q, features="bias", strategy="enumerate")
        name = {k: os.path.join(root, tag + os.path.basename(out[k])) for k in KINDS}
        with open(name["json"], "w") as fh:
            json.dump(res.to_dict(), fh)
        save_binary(res, name["npz"])
        tree = rg.best_neuron(P, Q, features="bias", strategy="branch-and-bound")
        with open(name["tree"], "w") as fh:
            json.dump(tree.to_dict(), fh)
        save_binary(tree, name["treenpz"])  # a tree in the binary form (write_binary_tree)
    return out


def _runs(files: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """``(mode, kind, certificate, input)`` for every mode and certificate kind."""
    root = os.path.dirname(files["json"])
    runs = []
    for mode in MODES:
        for kind in KINDS:
            cert = files[kind] if mode != "graph" else os.path.join(root, "x-" + os.path.basename(files[kind]))
            runs.append((mode, kind, cert, files["x" if mode == "graph" else "input"]))
    return runs


def measure(mode: str, cert: str, inp: str) -> tuple[int, dict, list[str]]:
    """(code lines of relu_gating loaded, {module: lines}, forbidden modules loaded) in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), env_path()]))
    out = subprocess.run([sys.executable, "-c", _CHILD, "cli" if mode == "graph" else mode, cert, inp], capture_output=True, text=True,
                         env=env, check=True, timeout=600).stdout
    mods = json.loads(out.strip().splitlines()[-1])
    ours = {k: code_lines(f) for k, f in mods.items() if (k == "relu_gating" or k.startswith("relu_gating.")) and f}
    bad = sorted(k for k in mods if any(k == f or k.startswith(f + ".") for f in FORBIDDEN))
    return sum(ours.values()), ours, bad


def env_path() -> str:
    return os.environ.get("PYTHONPATH", "")


def main(argv: list[str] | None = None) -> tuple[dict, list[str]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=LIMITS["api"], help="largest code-line count accepted for the api mode")
    ap.add_argument("--cli-limit", type=int, default=LIMITS["cli"],
                    help="largest code-line count accepted for the cli and graph modes")
    ap.add_argument("--list", action="store_true", help="list the modules and their code lines")
    a = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as root:
        for mode, kind, cert, inp in _runs(_files(root)):
            total, ours, bad = measure(mode, cert, inp)
            out[(mode, kind)] = total
            print(f"{mode:5s} {kind:7s} {total:6d} code lines of relu_gating in {len(ours)} modules; "
                  f"forbidden loaded: {bad or 'none'}")
            if a.list:
                for k in sorted(ours):
                    print(f"      {ours[k]:5d}  {k}")
            assert not bad, bad
    limit = {"api": a.limit, "cli": a.cli_limit, "graph": a.cli_limit}
    over = [f"{mode} {kind} {total} > {limit[mode]}" for (mode, kind), total in out.items() if total > limit[mode]]
    print("over the limit: " + ("; ".join(over) if over else "none"))
    return out, over


if __name__ == "__main__":
    sys.exit(1 if main()[1] else 0)
