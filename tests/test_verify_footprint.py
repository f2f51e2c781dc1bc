"""The public verify is the small checker (issue 38): a fresh process verifying a certificate loads
little code of relu_gating and nothing of the search, the enumerator, solvers/, cvxpy, the certificate
writers, coverage/ or layers/ (``benchmarks/checker_size.py`` measures; this test asserts).

* ``api``: ``relu_gating.verify`` on a JSON, a binary ``.npz`` pattern certificate, a JSON tree and a
  binary ``.npz`` tree certificate (``write_binary_tree``, the ``--out CERT.npz`` of a branch-and-bound
  run): at most 1,500 code lines of relu_gating (docstrings, comments and blank lines not counted);
* ``cli``: ``relu-gating verify CERT INPUT`` with ``Phi`` and ``U_K`` in INPUT: at most 2,200;
* ``graph``: the same command with ``X`` alone in INPUT (the command builds the graph and ``U_K``,
  so the spectral code loads too): at most 2,200 for every certificate kind (the issue's measure,
  JSON: 2,810 before; 2,026 / 2,174 / 2,145 / 2,190 for JSON / binary / tree / binary tree when
  issue 38 closed).
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))

import checker_size  # noqa: E402

#: (mode, kind) -> the largest code-line count accepted: every mode and certificate kind.
LIMITS = {(mode, kind): checker_size.LIMITS[mode] for mode in checker_size.MODES for kind in checker_size.KINDS}
#: Measured in the slow tier only (a fresh process each): the default tier keeps the public verify's
#: four and the command's on ``X`` alone (the largest: the command's with ``Phi`` and ``U_K`` loads less).
_SLOW = {("cli", "json"), ("cli", "npz"), ("cli", "tree"), ("cli", "treenpz")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    files = checker_size._files(str(tmp_path_factory.mktemp("certs")))
    return {(mode, kind): (cert, inp) for mode, kind, cert, inp in checker_size._runs(files)}


@pytest.mark.parametrize("mode, kind", [pytest.param(*k, marks=[pytest.mark.slow] if k in _SLOW else []) for k in LIMITS])
def test_a_fresh_verify_loads_little_and_nothing_it_does_not_need(runs, mode, kind):
    cert, inp = runs[(mode, kind)]
    total, ours, bad = checker_size.measure(mode, cert, inp)  # the child asserts the certificate verifies
    assert not bad, f"{mode} {kind}: loaded {bad}"
    assert "relu_gating.checker" in ours and not any(m.startswith("relu_gating.certificate") for m in ours)
    top = sorted(ours.items(), key=lambda kv: -kv[1])[:8]
    assert total <= LIMITS[(mode, kind)], (total, top)


def test_every_mode_and_certificate_kind_is_measured():
    assert len(LIMITS) == 12 and set(LIMITS.values()) == {1500, 2200}
    assert {(m, k) for m, k, _, _ in checker_size._runs({k: f"/r/{k}" for k in checker_size.KINDS + ("input", "x")})} \
        == set(LIMITS)


def test_the_forbidden_list_covers_the_search_and_what_a_verify_does_not_need():
    assert {"relu_gating.search", "relu_gating.patterns", "solvers", "cvxpy", "relu_gating.coverage",
            "relu_gating.layers", "relu_gating.checker._exact_mode", "relu_gating.spectral.checks"} \
        <= set(checker_size.FORBIDDEN)


def test_code_line_count_skips_docstrings_and_comments(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""Doc\n\nstring."""\n\n# comment\nx = 1  # trailing\n\n\ndef g():\n    """Doc."""\n'
                 '    return """not a\n    docstring"""\n')
    assert checker_size.code_lines(str(f)) == 4  # x = 1; def g(); the two lines of the returned string


def test_the_type_stub_names_every_public_name_and_no_other():
    """``relu_gating/__init__.pyi`` holds the lazy map's types (the package imports its names on first use)."""
    import ast

    import relu_gating

    stub = os.path.join(os.path.dirname(relu_gating.__file__), "__init__.pyi")
    with open(stub, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    named = {a.asname for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert named == set(relu_gating.__all__) | {"__version__"}
    for node in tree.body:  # each from the module the lazy map loads it from
        if isinstance(node, ast.ImportFrom) and node.module not in ("relu_gating.errors", "relu_gating._version"):
            for a in node.names:
                assert getattr(relu_gating, a.asname) is getattr(__import__(node.module, fromlist=["x"]), a.name)
