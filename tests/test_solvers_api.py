"""Front door of :mod:`solvers`: validation, registry, result type, errors."""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import solvers
from solvers import ConeEigProblem, ConeEigResult, Status

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_available_methods():
    assert set(solvers.available_methods()) == {"auto", "dnn", "faces", "spectral"}


def test_unknown_method_lists_available():
    P = ConeEigProblem(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(solvers.UnknownMethodError, match="faces") as exc:
        solvers.solve(P, "newton")
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, solvers.ConeEigError)
    for name in solvers.available_methods():
        assert name in str(exc.value)


def test_unknown_option_named():
    P = ConeEigProblem(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(solvers.ProblemError, match="tolerance"):
        solvers.solve(P, "faces", tolerance=1e-3)


def test_solve_rejects_non_problem():
    with pytest.raises(solvers.ProblemError, match="problem"):
        solvers.solve((np.eye(2), np.eye(2), np.eye(2)))


@pytest.mark.parametrize("kwargs,name", [
    (dict(A=np.ones((2, 3)), B=np.eye(2), G=np.eye(2)), "A"),
    (dict(A=[[1.0, 2.0], [0.0, 1.0]], B=np.eye(2), G=np.eye(2)), "A"),  # not symmetric
    (dict(A=np.diag([1.0, -1.0]), B=np.eye(2), G=np.eye(2)), "A"),  # not PSD
    (dict(A=np.eye(2), B=np.eye(3), G=np.eye(2)), "B"),
    (dict(A=np.eye(2), B=np.diag([1.0, np.nan]), G=np.eye(2)), "B"),
    (dict(A=np.eye(2), B=-np.eye(2), G=np.eye(2)), "B"),
    (dict(A=np.eye(2), B=np.eye(2), G=np.ones((3, 3))), "G"),
    (dict(A=np.eye(2), B=np.eye(2), G=[[1.0, np.inf]]), "G"),
    (dict(A=np.eye(2), B=np.eye(2), G=np.ones(2)), "G"),
    (dict(A="abc", B=np.eye(2), G=np.eye(2)), "A"),
])
def test_validation_names_argument(kwargs, name):
    with pytest.raises(solvers.ProblemError, match=rf"\b{name}\b"):
        ConeEigProblem(**kwargs)


def test_problem_is_immutable_and_symmetrized():
    A = np.array([[2.0, 1.0 + 1e-12], [1.0, 2.0]])
    P = ConeEigProblem(A, np.eye(2), np.zeros((0, 2)))
    np.testing.assert_array_equal(P.A, P.A.T)
    assert P.m == 2 and P.p == 0
    with pytest.raises(ValueError):
        P.A[0, 0] = 5.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.A = np.eye(2)


def test_result_methods():
    r = ConeEigResult(1.0, 1.0 + 1e-12, np.array([1.0, 0.0]), Status.EXACT, "faces")
    assert r.is_exact() and r.gap() == pytest.approx(1e-12)
    b = ConeEigResult(0.5, 1.0, np.array([1.0, 0.0]), Status.BOUNDED, "spectral")
    assert not b.is_exact() and b.gap() == 0.5 and b.is_exact(tol=0.6)
    n = ConeEigResult(-np.inf, 2.0, None, Status.BOUNDED, "dnn")
    assert n.gap() == np.inf and not n.is_exact()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.lower = 0.0
    assert {s.name for s in Status} == {"EXACT", "BOUNDED", "INFEASIBLE", "UNBOUNDED", "FAILED"}


def test_verify_detects_tampering():
    P = ConeEigProblem(np.diag([2.0, 1.0]), np.eye(2), [[1.0, 1.0]])
    r = solvers.solve(P, "faces")
    assert r.verify(P) and abs(r.lower - 2.0) <= 1e-12
    forged = dataclasses.replace(r, lower=r.lower + 1e-3)
    assert not forged.verify(P)
    outside = dataclasses.replace(r, x=-r.x)
    assert not outside.verify(P)


def test_exception_tree():
    assert issubclass(solvers.ProblemError, solvers.ConeEigError)
    assert issubclass(solvers.ProblemError, ValueError)
    assert issubclass(solvers.BackendError, RuntimeError)
    assert issubclass(solvers.BackendError, solvers.ConeEigError)


def test_public_surface_has_all():
    import importlib

    for mod in ("solvers", "solvers.problem", "solvers.result", "solvers.cone", "solvers.errors",
                "solvers.methods.spectral", "solvers.methods.faces", "solvers.methods.dnn", "solvers.methods.auto"):
        m = importlib.import_module(mod)
        assert m.__all__ and all(hasattr(m, n) for n in m.__all__)


def test_never_imports_relu_gating():
    code = "import sys, solvers; import numpy as np; " \
           "solvers.solve(solvers.ConeEigProblem(np.eye(2), np.eye(2), np.eye(2))); " \
           "assert 'relu_gating' not in sys.modules, 'relu_gating imported'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    for path in (ROOT / "solvers").glob("*.py"):
        text = path.read_text()
        assert "import relu_gating" not in text and "from relu_gating" not in text, path


def test_no_banner_on_stdout():
    code = "import solvers, numpy as np; solvers.interior_point(np.eye(3))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    assert out.stdout == ""


def test_to_dict_is_json():
    import json

    from _cone_reference import gating_instance

    A, B, G = gating_instance(0, 12, 4)
    for method in solvers.available_methods():
        d = solvers.solve(ConeEigProblem(A, B, G), method).to_dict()
        back = json.loads(json.dumps(d))
        assert back["status"] in {s.value for s in Status} and back["method"] == method
    inf = solvers.solve(ConeEigProblem(np.eye(2), np.diag([1.0, 0.0]), [[1.0, 0], [-1, 0]]), "faces").to_dict()
    assert json.loads(json.dumps(inf))["lower"] == "-inf"


def test_interior_hint():
    from _cone_reference import gating_instance

    A, B, G = gating_instance(3, 60, 4)
    ref = solvers.solve(ConeEigProblem(A, B, G), "faces")
    inside = solvers.interior_point(G).relative_x
    r = solvers.solve(ConeEigProblem(A, B, G, interior=inside), "faces")
    assert r.certificate["reduction_lps"] == 0
    assert abs(r.lower - ref.lower) <= 1e-12 * max(1, abs(ref.lower))
    # a wrong hint is ignored, not trusted
    w = solvers.solve(ConeEigProblem(A, B, G, interior=-inside), "faces")
    assert w.certificate["reduction_lps"] >= 0 and abs(w.lower - ref.lower) <= 1e-12 * max(1, abs(ref.lower))
    with pytest.raises(solvers.ProblemError, match="interior"):
        ConeEigProblem(A, B, G, interior=np.ones(3))


def test_docstring_examples():
    import doctest

    failed, attempted = doctest.testmod(solvers, verbose=False)
    assert attempted > 0 and failed == 0
