"""verify(): certificates (format v2) re-checked from the stated problem alone; forgeries rejected.

The forgery suite follows the "Soundness" issue: nothing that decides what is
checked is read from the certificate (tolerances, ranks, feature paths), a
certificate of another problem is rejected saying how, every claimed bound
must be proven (lowered bounds and tampered dual evidence are caught),
completeness is checked, and weak-but-honest certificates are valid but not
certified as exact (CLI exit 3).  Every forgery is judged against an
independent reference (``tests/_search_reference.py``: faces of every
pattern, values from ``relu(Phi theta)`` directly), so a claim below the true
optimum of a pattern is a genuine forgery, not merely a loose bound.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from typing import ClassVar

import numpy as np
import pytest
from _search_reference import brute_best, pattern_best

from relu_gating import CertificateError, best_neuron, verify
from relu_gating.certificate import FORMAT
from relu_gating.cli import main

# ---------------------------------------------------------------- helpers (independent of the library)


def _value(Phi, U, H, theta):
    """N_K / G_H of relu(Phi theta) by the definition; nan for an excluded neuron."""
    h = np.maximum(Phi @ np.asarray(theta, dtype=float), 0.0)
    if H is not None:
        Qh = np.linalg.svd(H, full_matrices=False)[0][:, :np.linalg.matrix_rank(H)]
        h = h - Qh @ (Qh.T @ h)
    hh = float(h @ h)
    if hh <= 1e-24:
        return float("nan")
    return float(np.sum((U.T @ h) ** 2) / hh)


def _unconstrained_max(Phi, U, H, mask):
    """Top generalized eigenvalue of the pattern without its cone constraint (Prop 4.3)."""
    R = Phi * mask[:, None]
    if H is not None:
        Qh = np.linalg.svd(H, full_matrices=False)[0][:, :np.linalg.matrix_rank(H)]
        R = R - Qh @ (Qh.T @ R)
    _, s, Vt = np.linalg.svd(R, full_matrices=False)
    keep = s > 1e-10 * max(s.max(initial=0.0), 1e-300)
    if not keep.any():
        return float("nan")
    C = U.T @ R @ (Vt[keep].T / s[keep])
    return float(np.linalg.eigvalsh(C.T @ C)[-1])


def _H(features, n):
    if features is None:
        return None
    if isinstance(features, str):
        return np.ones((n, 1))
    return np.asarray(features, dtype=float)


def _masks(cert):
    n = cert["problem"]["n"]
    raw = np.array([np.frombuffer(bytes.fromhex(h), dtype=np.uint8) for h in cert["patterns"]["masks"]])
    return np.unpackbits(raw, axis=1, count=n).astype(bool)


def _hex(mask):
    return np.packbits(np.asarray(mask, dtype=bool)).tobytes().hex()


def _mask_str(mask):
    return "".join("1" if b else "0" for b in mask)


def _tampered(cert, edit):
    c = copy.deepcopy(cert)
    edit(c)
    return c


def _set(path, value):
    def edit(c):
        d = c
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value(d[path[-1]]) if callable(value) else value
    return edit


def _cli_cert(tmp_path, X, *args, name="cert.json"):
    inp = tmp_path / "data.npz"
    if not inp.exists():
        np.savez(inp, X=X)
    out = tmp_path / name
    assert main(["best-neuron", str(inp), *args, "--out", str(out), "--quiet"]) == 0
    return inp, out


class Case:
    """An instance, its result and certificate, and the independent per-pattern facts the forgeries need."""

    def __init__(self, Phi, U, features):
        self.Phi, self.U, self.features = Phi, U, features
        self.H = _H(features, Phi.shape[0])
        self.res = best_neuron(Phi, U, features=features)
        self.cert = json.loads(json.dumps(self.res.to_dict()))  # exactly what a file holds
        self.masks = _masks(self.cert)
        self.settle = self.cert["patterns"]["settlement"]
        self.W = np.asarray(self.cert["patterns"]["witnesses"])
        self.wvals = np.array([_value(Phi, U, self.H, w) for w in self.W])

    def verify(self, cert, features="same", U=None, Phi=None):
        return verify(cert, self.Phi if Phi is None else Phi, self.U if U is None else U,
                      self.features if isinstance(features, str) and features == "same" else features)

    def pattern_max(self, i):
        return pattern_best(self.Phi, self.U, self.masks[i], self.H)

    def low_neuron(self, frac=0.2):
        """Index of an admissible pattern whose witness has a value near frac * optimum."""
        ok = np.flatnonzero(np.isfinite(self.wvals) & (self.wvals > 0.05 * self.res.value))
        return int(ok[np.argmin(np.abs(self.wvals[ok] - frac * self.res.value))])

    def claim_neuron(self, c, j, value=None):
        """Make the certificate claim pattern j's witness as its neuron."""
        c["theta"] = [float(x) for x in self.W[j]]
        c["pattern"] = _mask_str(self.masks[j])
        c["value"] = float(self.wvals[j] if value is None else value)


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(21)
    n = 25
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    return Case(Phi, U_K, "bias")


@pytest.fixture(scope="module")
def hcase():
    """Features [1, e_i] with i a hull vertex: the pattern {i} is excluded, so a 'P' pattern with an active row."""
    rng = np.random.default_rng(21)
    n = 12
    X = rng.normal(size=(n, 2))
    Phi = np.c_[X, np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    i = int(np.argmax(X[:, 0]))
    H = np.c_[np.ones(n), np.eye(n)[i]]
    c = Case(Phi, U_K, H)
    c.excluded_row = i
    return c


# ---------------------------------------------------------------- honest certificates


def test_valid_certificate_passes(case):
    rep = case.verify(case.cert)
    assert rep.valid and rep.certified, rep.reasons
    assert all(c["ok"] for c in rep.checks.values())
    assert case.cert["format"] == FORMAT == "relu-gating-certificate/3"
    assert rep.value == pytest.approx(case.res.value, abs=1e-12)
    assert rep.value == pytest.approx(_value(case.Phi, case.U, case.H, case.res.theta), abs=1e-12)
    assert rep.upper_bound <= case.res.upper_bound + 1e-9 and rep.alpha_proven >= 1 - 1e-8
    assert case.verify(json.dumps(case.cert)).valid
    assert case.verify(case.res).valid


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_optimum_agrees_with_exhaustive_reference(hcase):
    # LP enumeration of the patterns and every face of every pattern (tests/_search_reference.py)
    assert hcase.res.certified
    ref = brute_best(hcase.Phi, hcase.U, hcase.H, extra_patterns=hcase.masks)
    assert hcase.res.value == pytest.approx(ref, abs=1e-9)


def test_certificate_holds_no_checking_parameter(case):
    for key in ("tol", "rank", "fingerprint"):
        assert key not in case.cert and key not in case.cert["problem"]
    assert set("".join(case.settle)) <= set("UBEP")


def test_every_settlement_kind_is_present(hcase):
    s = hcase.settle
    assert "B" in s and "P" in s
    ev = {int(k) for k in hcase.cert["evidence"]}
    assert any(c == "E" and i in ev for i, c in enumerate(s))
    assert any(c == "E" and i not in ev for i, c in enumerate(s))  # attained unconstrained bound
    # a pruned pattern that is not all-inactive: h = c e_i lies in col(H)
    p = [i for i, c in enumerate(s) if c == "P" and hcase.masks[i].any()]
    assert [np.flatnonzero(hcase.masks[i]).tolist() for i in p] == [[hcase.excluded_row]]
    rep = hcase.verify(hcase.cert)
    assert rep.valid and rep.certified, rep.reasons


def test_same_subspace_other_bits_still_verifies(case):
    # U_K rebuilt elsewhere may differ in signs, rotation within span(U_K) or last bits:
    # the certificate is about span(U_K), and verify recomputes everything from its inputs
    U2 = case.U * np.array([-1.0, 1.0, 1.0, -1.0])
    assert case.verify(case.cert, U=U2).valid
    Q = np.linalg.qr(np.random.default_rng(3).normal(size=(4, 4)))[0]
    rep = case.verify(case.cert, U=case.U @ Q)
    assert rep.valid, rep.reasons
    assert rep.value == pytest.approx(case.res.value, abs=1e-12)


def test_inflated_upper_bound_is_harmless(case):
    # a larger claimed upper bound is true; verify reports the bound it proves itself
    c = _tampered(case.cert, _set(["upper_bound"], lambda v: v * 4))
    rep = case.verify(c)
    assert rep.valid and rep.certified, rep.reasons
    assert rep.upper_bound == pytest.approx(case.res.upper_bound, abs=1e-9)


def test_positively_scaled_theta_is_the_same_neuron(case):
    c = _tampered(case.cert, _set(["theta"], lambda t: [2.0 * x for x in t]))
    assert case.verify(c).valid


# ---------------------------------------------------------------- (a), (b): tolerances and ranks are never read


@pytest.mark.parametrize("key,val", [("tol", 1), ("tol", 1e300), ("rank", 1), ("rank", "x"), ("fingerprint", "0")])
def test_checking_parameters_in_the_certificate_are_ignored(case, key, val):
    base = case.verify(case.cert)
    for where in ([], ["problem"]):
        c = copy.deepcopy(case.cert)
        (c if not where else c["problem"])[key] = val
        rep = case.verify(c)
        assert rep.valid and rep.certified, rep.reasons
        assert (rep.value, rep.upper_bound) == (base.value, base.upper_bound)


@pytest.mark.parametrize("extra", [{"tol": 1}, {"tol": 1e300}, {"rank": 1}, {"tol": 1e300, "rank": 1}])
def test_forged_lower_optimum_claiming_the_optimum(case, extra):
    """A neuron at ~20% of the optimum claiming the optimum's value and bound, with a huge tol."""
    j = case.low_neuron(0.2)
    assert case.wvals[j] < 0.5 * case.res.value
    c = copy.deepcopy(case.cert)
    c.update(extra)
    c["problem"].update(extra)
    case.claim_neuron(c, j, value=case.res.value)
    rep = case.verify(c)
    assert not rep.valid and not rep.certified
    assert any("value" in r for r in rep.reasons)
    assert rep.value == pytest.approx(case.wvals[j], abs=1e-12)  # what verify reports is recomputed


@pytest.mark.parametrize("extra", [{"tol": 1}, {"tol": 1e300}, {"rank": 1}, {"tol": 1e300, "rank": 1}])
def test_forged_lower_optimum_with_recomputed_bounds(case, extra):
    """The honest value of a low neuron, every bound lowered to it, upper_bound = value, certified."""
    j = case.low_neuron(0.2)
    v = float(case.wvals[j])
    c = copy.deepcopy(case.cert)
    c.update(extra)
    c["problem"].update(extra)
    case.claim_neuron(c, j)
    c["patterns"]["bounds"] = [min(b, v) for b in c["patterns"]["bounds"]]
    c["upper_bound"] = v
    c["certified"] = True
    rep = case.verify(c)
    assert not rep.valid and not rep.certified
    assert rep.upper_bound >= case.res.value - 1e-9  # the bound verify proves is over all neurons
    assert rep.alpha_proven < 0.5


def test_forged_rank_one_bounds(case):
    """Bounds recomputed as if Phi had rank 1 (neurons relu(t Phi v), v the top right singular vector)."""
    v = np.linalg.svd(case.Phi)[2][0]
    vals = [_value(case.Phi, case.U, case.H, s * v) for s in (1.0, -1.0)]
    s = 1.0 if np.nan_to_num(vals[0], nan=-1) >= np.nan_to_num(vals[1], nan=-1) else -1.0
    theta = s * v
    val = _value(case.Phi, case.U, case.H, theta)
    assert val < case.res.value - 1e-3
    c = copy.deepcopy(case.cert)
    c["rank"] = 1
    c["theta"] = theta.tolist()
    c["pattern"] = _mask_str(case.Phi @ theta > 0)
    c["value"] = c["upper_bound"] = val
    c["patterns"]["bounds"] = [min(b, val) for b in c["patterns"]["bounds"]]
    rep = case.verify(c)
    assert not rep.valid and not rep.certified
    assert any("bound" in r for r in rep.reasons)


# ---------------------------------------------------------------- (c) another problem


def test_certificate_for_other_K_rejected_api(case):
    res1 = best_neuron(case.Phi, case.U[:, :1], features="bias")
    rep = case.verify(res1.to_dict())
    assert not rep.valid and not rep.certified
    assert any("another problem" in r and "K = 1 in the certificate, 4 in the stated problem" in r
               for r in rep.reasons), rep.reasons
    # relabelled to the stated K: the numbers themselves do not verify
    c = res1.to_dict()
    c["problem"]["K"] = 4
    rep = case.verify(c)
    assert not rep.valid and not rep.certified
    assert not any("another problem" in r for r in rep.reasons)


def test_certificate_for_other_K_rejected_cli(tmp_path, capsys):
    X = np.random.default_rng(5).normal(size=(14, 2))
    inp, cert = _cli_cert(tmp_path, X, "--K", "1")
    capsys.readouterr()
    assert main(["verify", str(cert), str(inp), "--K", "1", "--json"]) in (0, 3)  # exit code: see below
    assert json.loads(capsys.readouterr().out)["valid"] is True
    assert main(["verify", str(cert), str(inp)]) == 1  # default K = min(8, n - 1)
    out = capsys.readouterr().out
    assert "INVALID" in out and "K = 1 in the certificate" in out
    # the recorded options stripped and K relabelled: still rejected, by the numbers
    d = json.loads(cert.read_text())
    d.pop("input")
    d["problem"]["K"] = 8
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(d))
    assert main(["verify", str(forged), str(inp), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["valid"] is False and rep["exit_code"] == 1 and rep["reasons"]


def test_cli_exact_certificate_of_a_zero_optimum_exits_0(tmp_path, capsys):
    """K = 1 on a connected graph: U_K is constant, every marginal gain over the bias is 0.

    The certificate is exact (value >= upper_bound - VALUE_TOL, verify says certified), so
    ``verify`` with the default ``--require-alpha 1`` must exit 0, not 3 ("weaker than required"):
    the ratio value / upper_bound of two rounding-level numbers is no measure of optimality.
    """
    X = np.random.default_rng(5).normal(size=(14, 2))
    inp, cert = _cli_cert(tmp_path, X, "--K", "1")
    capsys.readouterr()
    code = main(["verify", str(cert), str(inp), "--K", "1", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rep["valid"] and rep["certified"] and rep["value"] >= rep["upper_bound"] - 1e-9
    assert code == 0, rep


_FEATS = ("bias", "none", "H1", "H2")  # H2: another array of the same shape as H1


def _feature_arg(name, n):
    if name in ("bias", "none"):
        return "bias" if name == "bias" else None
    seed = {"H1": 1, "H2": 2}[name]
    return np.random.default_rng(seed).normal(size=(n, 2))


@pytest.fixture(scope="module")
def feature_certs(case):
    n = case.Phi.shape[0]
    return {f: best_neuron(case.Phi, case.U, features=_feature_arg(f, n)).to_dict() for f in _FEATS}


@pytest.mark.parametrize("made", _FEATS)
@pytest.mark.parametrize("stated", _FEATS)
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_features_swap(case, feature_certs, made, stated):
    n = case.Phi.shape[0]
    cert = feature_certs[made]
    feat = _feature_arg(stated, n)
    rep = verify(cert, case.Phi, case.U, feat)
    if made == stated:
        assert rep.valid and (rep.certified or rep.alpha_proven >= 1 - 1e-8), rep.reasons  # H2: proven to 3e-9
        return
    assert not rep.valid and not rep.certified
    assert any("another problem" in r for r in rep.reasons), rep.reasons
    if {made, stated} == {"H1", "H2"}:
        assert any("features array differs" in r for r in rep.reasons)
    # relabelled to the stated problem: the numbers must not verify either
    c = copy.deepcopy(cert)
    c["problem"]["features"] = {"bias": "bias", "none": "none"}.get(stated, "array")
    c["problem"]["objective"] = "captured" if stated == "none" else "marginal"
    if stated in ("H1", "H2"):
        c["problem"]["features_sha256"] = _sha(feat)
    rep = verify(c, case.Phi, case.U, feat)
    assert not any("another problem" in r for r in rep.reasons), rep.reasons
    assert not rep.valid and not rep.certified


def _sha(a):
    import hashlib

    a = np.ascontiguousarray(a, dtype=np.float64)
    return hashlib.sha256(str(a.shape).encode() + a.tobytes()).hexdigest()


class _OpenRecorder:
    """Records every file the process opens (audit hook), while active."""

    events: ClassVar[list] = []
    active: ClassVar[bool] = False
    installed: ClassVar[bool] = False

    @classmethod
    def hook(cls, event, args):
        if cls.active and event in ("open", "os.listdir", "os.scandir", "np.load"):
            cls.events.append(str(args[0]) if args else "")

    def __enter__(self):
        if not _OpenRecorder.installed:
            sys.addaudithook(_OpenRecorder.hook)
            _OpenRecorder.installed = True
        _OpenRecorder.events = []
        _OpenRecorder.active = True
        return _OpenRecorder.events

    def __exit__(self, *exc):
        _OpenRecorder.active = False


def test_features_path_in_certificate_opens_no_file(case, tmp_path, capsys):
    n = case.Phi.shape[0]
    Hpath = tmp_path / "H_secret.npy"
    np.save(Hpath, np.ones((n, 1)))  # what a careless verifier would load: the bias itself
    c = copy.deepcopy(case.cert)
    c["problem"]["features"] = str(Hpath)
    c["input"] = {"features": str(Hpath), "source": "X"}
    # API
    with _OpenRecorder() as opened:
        rep = case.verify(c)
    assert not any("H_secret" in p for p in opened), opened
    assert not rep.valid and any("features" in r for r in rep.reasons)
    # CLI: the certificate's recorded options point at the file; only the command line states features
    X = case.Phi[:, :2]
    inp, cert = _cli_cert(tmp_path, X, "--K", "3")
    d = json.loads(cert.read_text())
    d["input"]["features"] = str(Hpath)
    d["problem"]["features"] = str(Hpath)
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(d))
    capsys.readouterr()
    with _OpenRecorder() as opened:
        code = main(["verify", str(forged), str(inp), "--K", "3"])
    assert not any("H_secret" in p for p in opened), opened
    assert code == 1
    assert "features" in capsys.readouterr().out


# ---------------------------------------------------------------- (d) weak but honest


def _weak(case, alpha, certified):
    j = case.low_neuron(0.2)
    c = copy.deepcopy(case.cert)
    case.claim_neuron(c, j)
    c["alpha"], c["certified"] = alpha, certified
    return c, float(case.wvals[j])


def test_weak_certificate_not_certified(case):
    c, v = _weak(case, 1.0, False)
    rep = case.verify(c)
    assert rep.valid, rep.reasons  # honest ...
    assert not rep.certified  # ... but no optimality claim
    assert rep.alpha_proven == pytest.approx(v / case.res.value, rel=1e-6) and rep.alpha_proven < 0.3
    c["certified"] = True  # the same numbers claiming certification
    rep = case.verify(c)
    assert not rep.valid and not rep.certified and any("certified" in r for r in rep.reasons)


def test_weak_alpha_certificate_api(case):
    c, v = _weak(case, 1e-300, True)
    rep = case.verify(c)
    assert rep.valid, rep.reasons
    # certified only at the certificate's own (vacuous) alpha: the proven factor is what counts
    assert rep.alpha == 1e-300
    assert rep.alpha_proven == pytest.approx(v / case.res.value, rel=1e-6) and rep.alpha_proven < 0.3
    c["alpha"] = 0.5  # the same neuron claiming alpha = 0.5
    rep = case.verify(c)
    assert not rep.valid and not rep.certified


@pytest.mark.parametrize("alpha,certified", [(1e-300, True), (1.0, False)])
def test_weak_certificate_cli_exit_codes(tmp_path, capsys, alpha, certified):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(14, 2))
    inp, cert = _cli_cert(tmp_path, X, "--K", "3")
    d = json.loads(cert.read_text())
    from relu_gating import load_input, resolve_problem

    prob = resolve_problem(load_input(str(inp)), K=3)  # the U_K the CLI builds from X
    W = np.asarray(d["patterns"]["witnesses"])
    masks = _masks(d)
    opt = d["value"]
    vals = np.array([_value(prob.Phi, prob.U_K, np.ones((14, 1)), w) for w in W])
    ok = np.flatnonzero(np.isfinite(vals) & (vals > 0.05 * opt))
    best_j = int(ok[np.argmin(np.abs(vals[ok] - 0.2 * opt))])
    best_v = float(vals[best_j])
    d["theta"], d["pattern"] = W[best_j].tolist(), _mask_str(masks[best_j])
    d["value"], d["alpha"], d["certified"] = best_v, alpha, certified
    weak = tmp_path / "weak.json"
    weak.write_text(json.dumps(d))
    capsys.readouterr()
    assert main(["verify", str(weak), str(inp), "--K", "3", "--json"]) == 3
    rep = json.loads(capsys.readouterr().out)
    assert rep["valid"] is True and rep["exit_code"] == 3
    assert rep["alpha_proven"] == pytest.approx(best_v / opt, rel=1e-6)
    assert main(["verify", str(weak), str(inp), "--K", "3"]) == 3
    assert "weaker than required" in capsys.readouterr().out
    small = f"{0.5 * best_v / opt:.6g}"
    # what counts is what verify proves (value >= A * upper bound), not the certificate's own claim
    assert main(["verify", str(weak), str(inp), "--K", "3", "--require-alpha", small]) == 0
    capsys.readouterr()
    above = f"{min(1.0, 1.5 * best_v / opt):.6g}"
    assert main(["verify", str(weak), str(inp), "--K", "3", "--require-alpha", above]) == 3


# ---------------------------------------------------------------- (e) lowered bounds, tampered evidence


def _kind_index(c, kind):
    """A pattern of the given kind with an independent exact per-pattern maximum."""
    s = c.settle
    ev = {int(k) for k in c.cert["evidence"]}
    if kind == "E-evidence":
        # evidence needed: the claim is below the pattern's unconstrained maximum
        cand = [i for i in ev if s[i] == "E"
                and c.cert["patterns"]["bounds"][i] < _unconstrained_max(c.Phi, c.U, c.H, c.masks[i]) - 1e-4]
    elif kind == "E-spectral":
        cand = [i for i, x in enumerate(s) if x == "E" and i not in ev and np.isfinite(c.wvals[i])]
    elif kind == "B":
        cand = [i for i, x in enumerate(s) if x == "B" and np.isfinite(c.wvals[i])]
    else:
        raise AssertionError(kind)
    assert cand, kind
    # the highest-bound one: the hardest to tell from the optimum
    return max(cand, key=lambda i: c.cert["patterns"]["bounds"][i])


@pytest.mark.parametrize("kind", ["B", "E-evidence", "E-spectral"])
@pytest.mark.parametrize("how", ["5%", "1e-6"])
@pytest.mark.parametrize("which", ["case", "hcase"])
def test_lowered_pattern_bound_rejected(request, kind, how, which):
    c = request.getfixturevalue(which)
    i = _kind_index(c, kind)
    vstar = c.pattern_max(i)  # independent exact maximum over the pattern's closed cone
    assert np.isfinite(vstar) and c.cert["patterns"]["bounds"][i] >= vstar - 1e-9
    if c.settle[i] == "E":
        assert c.res.lowers[i] == pytest.approx(vstar, abs=1e-8)
    new = 0.95 * vstar if how == "5%" else vstar - 1e-6
    f = copy.deepcopy(c.cert)
    f["patterns"]["bounds"][i] = new
    rep = c.verify(f)
    assert not rep.valid, (kind, i, c.cert["patterns"]["bounds"][i], vstar)
    assert any("bound" in r for r in rep.reasons)


def test_relabelled_as_pruned_rejected(case, hcase):
    # the genuine 'P' with an active row is honest ...
    i = next(i for i, x in enumerate(hcase.settle) if x == "P" and hcase.masks[i].any())
    assert hcase.verify(hcase.cert).valid
    # ... but the same pattern is not excluded under the bias: relabelled 'P' there is a forgery
    n = case.Phi.shape[0]
    j = next(k for k in range(len(case.settle)) if case.masks[k].sum() == 1)
    assert np.isfinite(case.wvals[j])
    for target in (j, int(np.argmax(case.cert["patterns"]["bounds"]))):
        f = copy.deepcopy(case.cert)
        s = list(f["patterns"]["settlement"])
        s[target] = "P"
        f["patterns"]["settlement"] = "".join(s)
        f["patterns"]["bounds"][target] = 0.0
        f["evidence"].pop(str(target), None)
        rep = case.verify(f)
        assert not rep.valid, target
    # the optimum's pattern relabelled 'P' in the H case as well
    k = int(np.argmax(hcase.cert["patterns"]["bounds"]))
    f = copy.deepcopy(hcase.cert)
    s = list(f["patterns"]["settlement"])
    s[k] = "P"
    f["patterns"]["settlement"] = "".join(s)
    f["patterns"]["bounds"][k] = 0.0
    assert not hcase.verify(f).valid
    assert i != k and n > 0


@pytest.mark.parametrize("which", ["case", "hcase"])
@pytest.mark.parametrize("how", ["5%", "1e-6"])
def test_lowered_global_upper_bound_rejected(request, which, how):
    c = request.getfixturevalue(which)
    ub = c.cert["upper_bound"]
    f = _tampered(c.cert, _set(["upper_bound"], 0.95 * ub if how == "5%" else ub - 1e-6))
    rep = c.verify(f)
    assert not rep.valid and any("upper_bound" in r for r in rep.reasons)


def _ev_index(c):
    return _kind_index(c, "E-evidence")


_EV_TAMPERS = {
    "zero": lambda e, n: e.update(N=(0.0 * np.asarray(e["N"])).tolist()),
    "negated": lambda e, n: e.update(N=(-np.asarray(e["N"])).tolist()),
    "scaled_x1e3": lambda e, n: e.update(N=(1e3 * np.asarray(e["N"])).tolist()),
    "scaled_x1e-3": lambda e, n: e.update(N=(1e-3 * np.asarray(e["N"])).tolist()),
    "rows_shifted": lambda e, n: e.update(rows=[(r + 1) % n for r in e["rows"]]),
    "rows_reversed": lambda e, n: e.update(rows=e["rows"][::-1]),
    "dropped": None,
}


@pytest.mark.parametrize("name", sorted(_EV_TAMPERS))
@pytest.mark.parametrize("which", ["case", "hcase"])
def test_tampered_evidence_rejected(request, which, name):
    c = request.getfixturevalue(which)
    i = _ev_index(c)
    n = c.Phi.shape[0]
    e = c.cert["evidence"][str(i)]
    # reversing the rows changes the evidence only when it has two distinct rows (true on both cases)
    assert name != "rows_reversed" or len(set(e["rows"])) >= 2
    f = copy.deepcopy(c.cert)
    if _EV_TAMPERS[name] is None:
        del f["evidence"][str(i)]
    else:
        _EV_TAMPERS[name](f["evidence"][str(i)], n)
    rep = c.verify(f)
    assert not rep.valid and not rep.certified, (name, i)
    assert any("bound" in r for r in rep.reasons)


@pytest.mark.parametrize("scale", [0.0, 0.5, 1.0, 2.0, 1e3])
def test_lowered_bound_with_any_evidence_rejected(hcase, scale):
    """No rescaling of the multipliers proves a bound below the pattern's true maximum."""
    i = _ev_index(hcase)
    vstar = hcase.pattern_max(i)
    f = copy.deepcopy(hcase.cert)
    f["patterns"]["bounds"][i] = vstar - 1e-6
    e = f["evidence"][str(i)]
    e["N"] = (scale * np.asarray(e["N"])).tolist()
    assert not hcase.verify(f).valid


def test_evidence_of_unknown_pattern_or_bad_rows(case):
    f = copy.deepcopy(case.cert)
    f["evidence"]["99999"] = {"rows": [0], "N": [[1.0]]}  # no such pattern: proves nothing, harms nothing
    assert case.verify(f).valid
    i = _ev_index(case)
    for rows in ([-1], [case.Phi.shape[0]]):
        f = copy.deepcopy(case.cert)
        f["evidence"][str(i)] = {"rows": rows, "N": [[1.0]]}
        with pytest.raises(CertificateError):
            case.verify(f)
    f = copy.deepcopy(case.cert)
    f["evidence"][str(i)]["N"] = [[float("nan")] * len(f["evidence"][str(i)]["rows"])] * len(f["evidence"][str(i)]["rows"])
    with pytest.raises(CertificateError):
        case.verify(f)


# ---------------------------------------------------------------- (f) completeness


def _drop(c, j):
    p = c["patterns"]
    for key in ("masks", "witnesses", "bounds"):
        del p[key][j]
    p["settlement"] = p["settlement"][:j] + p["settlement"][j + 1:]
    c["n_patterns"] -= 1
    # evidence and exact witnesses are keyed by index: renumber them
    for key, d in (("evidence", c), ("exact_witnesses", p)):
        d[key] = {str(int(k) - (int(k) > j)): v for k, v in d[key].items() if int(k) != j}


def _append(c, mask, witness, bound, settle="B"):
    p = c["patterns"]
    p["masks"].append(_hex(mask))
    p["witnesses"].append([float(x) for x in witness])
    p["bounds"].append(float(bound))
    p["settlement"] += settle
    c["n_patterns"] += 1


def _flip_bit(c, j, bit):
    m = _masks(c)[j].copy()
    m[bit] = ~m[bit]
    c["patterns"]["masks"][j] = _hex(m)


def _witness_negated(c, j):
    w = c["patterns"]["witnesses"]
    w[j] = [-x for x in w[j]]


def _witnesses_swapped(c, j, k):
    w = c["patterns"]["witnesses"]
    w[j], w[k] = w[k], w[j]


def _completeness_tampers(case):
    N = len(case.settle)
    top = int(np.argmax(case.cert["patterns"]["bounds"]))
    low = int(np.argmin(np.where(np.isfinite(case.wvals), case.wvals, np.inf)))
    mid = N // 2
    opt = next(i for i in range(N) if np.array_equal(case.masks[i], case.res.pattern))
    return {
        "drop_optimum": lambda c: _drop(c, opt),
        "drop_top_bound": lambda c: _drop(c, top),
        "drop_low": lambda c: _drop(c, low),
        "drop_last": lambda c: _drop(c, N - 1),
        "duplicate": lambda c: _append(c, case.masks[mid], case.W[mid], case.cert["patterns"]["bounds"][mid]),
        "drop_and_duplicate": lambda c: (_drop(c, low), _append(c, case.masks[mid], case.W[mid], 1.0)),
        "drop_and_unrealizable": lambda c: (_drop(c, low), _append(
            c, ~case.masks[opt] if not np.any(np.all(case.masks == ~case.masks[opt], axis=1)) else
            np.r_[True, False, True, False, np.zeros(case.Phi.shape[0] - 4, bool)], case.W[mid], 1.0)),
        "flip_bit_first": lambda c: _flip_bit(c, 0, 0),
        "flip_bit_mid": lambda c: _flip_bit(c, mid, case.Phi.shape[0] // 2),
        "flip_bit_last": lambda c: _flip_bit(c, N - 1, case.Phi.shape[0] - 1),
        "witness_negated": lambda c: _witness_negated(c, mid),
        "witnesses_swapped": lambda c: _witnesses_swapped(c, low, top),
        "witness_zero": lambda c: c["patterns"]["witnesses"].__setitem__(mid, [0.0] * case.Phi.shape[1]),
        "mask_all_ones_for_all_zeros": lambda c: c["patterns"]["masks"].__setitem__(
            int(np.flatnonzero(~case.masks.any(axis=1))[0]), _hex(np.ones(case.Phi.shape[0], bool))),
    }


_COMPLETENESS = ["drop_optimum", "drop_top_bound", "drop_low", "drop_last", "duplicate", "drop_and_duplicate",
                 "drop_and_unrealizable", "flip_bit_first", "flip_bit_mid", "flip_bit_last", "witness_negated",
                 "witnesses_swapped", "witness_zero", "mask_all_ones_for_all_zeros"]


@pytest.mark.parametrize("name", _COMPLETENESS)
def test_incomplete_pattern_list_rejected(case, name):
    f = _tampered(case.cert, _completeness_tampers(case)[name])
    rep = case.verify(f)
    assert not rep.valid and not rep.certified, name
    assert rep.reasons


# ---------------------------------------------------------------- (g) the claim itself


def _flip_char(s, i=0):
    return s[:i] + ("1" if s[i] == "0" else "0") + s[i + 1:]


CLAIM_TAMPERS = {
    "theta_first_coordinate": _set(["theta"], lambda t: [t[0] * 1.1] + t[1:]),
    "theta_negated": _set(["theta"], lambda t: [-x for x in t]),
    "theta_bias_shifted": _set(["theta"], lambda t: t[:-1] + [t[-1] + 0.3 * max(abs(x) for x in t)]),
    "value_up_1e-3": _set(["value"], lambda v: v + 1e-3),
    "value_up_1e-8": _set(["value"], lambda v: v + 1e-8),
    "value_down_1e-8": _set(["value"], lambda v: v - 1e-8),
    "value_halved": _set(["value"], lambda v: v * 0.5),
    "upper_bound_down_1e-3": _set(["upper_bound"], lambda v: v - 1e-3),
    "alpha_zero": _set(["alpha"], 0.0),
    "alpha_above_one": _set(["alpha"], 1.5),
    "pattern": _set(["pattern"], lambda s: _flip_char(s, s.index("1"))),
}


@pytest.mark.parametrize("name", sorted(CLAIM_TAMPERS))
def test_claim_tampering_rejected(case, name):
    rep = case.verify(_tampered(case.cert, CLAIM_TAMPERS[name]))
    assert not rep.valid, name
    assert rep.reasons


def test_verify_reports_recomputed_figures_not_claims(case):
    f = _tampered(case.cert, _set(["value"], lambda v: v + 1e-3))
    rep = case.verify(f)
    assert rep.value == pytest.approx(case.res.value, abs=1e-12)
    assert rep.upper_bound == pytest.approx(case.res.upper_bound, abs=1e-9)


# ---------------------------------------------------------------- malformed certificates


def _deep(depth):
    return "[" * depth + "]" * depth


MALFORMED_TEXT = {
    "deep_list_1e5": lambda s: '{"format": "relu-gating-certificate/2", "notes": ' + _deep(100_000) + "}",
    "deep_list_in_notes_2000": lambda s: s[:-1] + ', "extra": ' + _deep(2000) + "}",
    "deep_dict_100": lambda s: '{"format": "relu-gating-certificate/2", "x": ' + '{"a": ' * 100 + "1" + "}" * 101,
    "nan_value": lambda s: s.replace('"value": ', '"value": NaN, "_v": ', 1),
    "infinity_bound": lambda s: s.replace('"upper_bound": ', '"upper_bound": Infinity, "_u": ', 1),
    "neg_infinity": lambda s: s.replace('"alpha": ', '"alpha": -Infinity, "_a": ', 1),
    "overflow_value": lambda s: s.replace('"value": ', '"value": 1e999, "_v": ', 1),
    "truncated_half": lambda s: s[: len(s) // 2],
    "truncated_last": lambda s: s[:-1],
    "empty": lambda s: "",
    "not_an_object": lambda s: "[1, 2, 3]",
    "format_v1": lambda s: s.replace(FORMAT, "relu-gating-certificate/1"),
    "bad_hex_mask": lambda s: s.replace('"masks": ["', '"masks": ["zz', 1),
    "bad_settlement_letter": lambda s: s.replace('"settlement": "', '"settlement": "X', 1),
    "certified_as_string": lambda s: s.replace('"certified": true', '"certified": "yes"', 1),
    "huge_n": lambda s: s.replace('"n": ', '"n": 1000000000000, "_n": ', 1),
}


@pytest.mark.parametrize("name", sorted(MALFORMED_TEXT))
def test_malformed_json_raises_certificate_error(case, name):
    text = MALFORMED_TEXT[name](json.dumps(case.cert))
    assert text != json.dumps(case.cert)
    with pytest.raises(CertificateError):
        case.verify(text)


def test_malformed_certificate_raises(case):
    with pytest.raises(CertificateError):
        case.verify({"format": "nope"})
    with pytest.raises(CertificateError):
        case.verify(_tampered(case.cert, lambda c: c.pop("patterns")))
    with pytest.raises(CertificateError):
        case.verify("not json at all {")
    with pytest.raises(CertificateError):
        case.verify(_tampered(case.cert, _set(["value"], float("nan"))))  # a dict with NaN (API)
    with pytest.raises(CertificateError):
        case.verify(_tampered(case.cert, lambda c: c["patterns"]["witnesses"][0].append(1.0)))


@pytest.mark.parametrize("name", ["deep_list_1e5", "nan_value", "infinity_bound", "truncated_half", "format_v1"])
def test_malformed_certificate_cli_exit_2(case, tmp_path, capsys, name):
    X = np.random.default_rng(5).normal(size=(10, 2))
    inp, cert = _cli_cert(tmp_path, X, "--K", "3")
    bad = tmp_path / "bad.json"
    bad.write_text(MALFORMED_TEXT[name](cert.read_text()))
    capsys.readouterr()
    assert main(["verify", str(bad), str(inp), "--K", "3"]) == 2
    assert "error" in capsys.readouterr().err


# ---------------------------------------------------------------- CLI and other cases kept from v1


def test_cli_best_neuron_and_verify_in_fresh_process(tmp_path, capsys):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    inp = tmp_path / "data.npz"
    np.savez(inp, X=X)
    cert = tmp_path / "cert.json"
    rc = main(["best-neuron", str(inp), "--K", "3", "--features", "bias", "--json", "--out", str(cert), "--quiet"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("value", "upper_bound", "alpha", "certified", "theta", "pattern", "n_patterns", "seconds",
                "problem", "input"):
        assert key in out
    assert out["certified"] and set(out["pattern"]) <= {"0", "1"} and len(out["pattern"]) == 30
    d = json.loads(cert.read_text())
    assert d["format"] == FORMAT and d["problem"]["K"] == 3 and d["input"]["K"] == 3
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path))
    proc = subprocess.run([sys.executable, "-m", "relu_gating", "verify", str(cert), str(inp), "--K", "3"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("CERTIFIED")
    bad = json.loads(cert.read_text())
    bad["value"] = bad["value"] + 0.01
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    rc = main(["verify", str(bad_path), str(inp), "--K", "3"])
    assert rc == 1
    assert "INVALID" in capsys.readouterr().out


def test_cli_human_output_and_errors(tmp_path, capsys):
    rng = np.random.default_rng(6)
    inp = tmp_path / "x.npy"
    np.save(inp, rng.normal(size=(20, 2)))
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "upper bound" in out and "certified" in out
    assert main(["best-neuron", str(inp), "--K", "3", "--alpha", "2", "--quiet"]) == 2
    assert "alpha" in capsys.readouterr().err
    assert main(["best-neuron", str(inp), "--K", "0", "--quiet"]) == 2
    assert "K" in capsys.readouterr().err
    assert main(["best-neuron", str(tmp_path / "missing.npz")]) == 2
    cert = tmp_path / "c.json"
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet", "--out", str(cert)]) == 0
    assert main(["verify", str(cert), str(inp), "--K", "3", "--require-alpha", "0"]) == 2
    assert main(["verify", str(tmp_path / "missing.json"), str(inp), "--K", "3"]) == 2


@pytest.mark.slow  # the adversary's thin chambers (test_adversarial.py) stay in the default tier
@pytest.mark.parametrize("features", [None, "bias"])
def test_rounding_thin_chambers_certify_and_verify(features):
    # points on lines computed in floating point: rows dependent only to within
    # rounding, some chambers too thin for any float64 witness (exact witnesses then)
    rng = np.random.default_rng(6)
    n = 12
    t = rng.normal(size=n)
    X = np.where((np.arange(n) % 2)[:, None] == 0, np.c_[t, 2 * t + 1], np.c_[t, -t])
    Phi = np.c_[X, np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    res = best_neuron(Phi, U, features=features)
    assert res.exact_witnesses  # the case really has thin chambers
    cert = json.loads(json.dumps(res.to_dict()))
    assert cert["patterns"]["exact_witnesses"]
    rep = verify(cert, Phi, U, features)
    assert rep.valid, rep.reasons
    ref = brute_best(Phi, U, None if features is None else np.ones((n, 1)), extra_patterns=res.masks)
    assert res.value >= ref - 1e-9
    assert res.certified
    assert res.value == pytest.approx(ref, abs=1e-9)
    # a tampered exact witness is caught
    k = next(iter(cert["patterns"]["exact_witnesses"]))
    cert["patterns"]["exact_witnesses"][k] = [str(-int(x)) for x in cert["patterns"]["exact_witnesses"][k]]
    assert not verify(cert, Phi, U, features).valid


def test_verifier_imports_no_solver_code_of_the_search():
    """The checker shares nothing with what it checks: a fresh process that verifies a certificate
    never imports solvers/ or the search's per-pattern code."""
    code = (
        "import json, sys, numpy as np\n"
        "from relu_gating import verify\n"
        "c = json.load(open(sys.argv[1]))\n"
        "d = np.load(sys.argv[2])\n"
        "rep = verify(c, d['Phi'], d['U_K'], 'bias')\n"
        "bad = sorted(m for m in sys.modules if m == 'solvers' or m.startswith(('solvers.', 'cvxpy', "
        "'relu_gating.search')))\n"
        "print(json.dumps({'valid': rep.valid, 'bad': bad}))\n"
    )
    import tempfile

    rng = np.random.default_rng(4)
    Phi = np.c_[rng.normal(size=(12, 2)), np.ones(12)]
    U_K = np.linalg.qr(rng.normal(size=(12, 3)))[0]
    res = best_neuron(Phi, U_K, features="bias")
    assert res.evidence  # the case has dual evidence to check
    with tempfile.TemporaryDirectory() as tmp:
        cert, data = os.path.join(tmp, "c.json"), os.path.join(tmp, "d.npz")
        with open(cert, "w") as fh:
            json.dump(res.to_dict(), fh)
        np.savez(data, Phi=Phi, U_K=U_K)
        out = subprocess.run([sys.executable, "-c", code, cert, data], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["valid"] and got["bad"] == [], got
