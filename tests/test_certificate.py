"""verify(): certificates re-checked from the inputs alone; tampering rejected."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from relu_gating import CertificateError, best_neuron, verify
from relu_gating.cli import main


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(21)
    n = 25
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    res = best_neuron(Phi, U_K, features="bias")
    return Phi, U_K, res, res.to_dict()


def test_valid_certificate_passes(case):
    Phi, U_K, res, cert = case
    rep = verify(cert, Phi, U_K, "bias")
    assert rep.valid, rep.reasons
    assert all(c["ok"] for c in rep.checks.values())
    assert verify(json.dumps(cert), Phi, U_K, "bias").valid


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


def _flip_char(s, i=0):
    return s[:i] + ("1" if s[i] == "0" else "0") + s[i + 1:]


def _drop_pattern(c):
    p = c["patterns"]
    j = len(p["masks"]) // 2
    for key in ("masks", "witnesses", "bounds"):
        del p[key][j]
    p["settlement"] = p["settlement"][:j] + p["settlement"][j + 1:]
    c["n_patterns"] -= 1


def _lower_a_bound(c):
    b = c["patterns"]["bounds"]
    j = int(np.argmax(b))
    b[j] = 0.5 * b[j]


def _lower_a_bound_settled_by_bound(c):
    p = c["patterns"]
    j = [i for i, s in enumerate(p["settlement"]) if s == "B"][0]
    p["bounds"][j] *= 0.9


def _witness_moved(c):
    w = c["patterns"]["witnesses"]
    w[3] = [-x for x in w[3]]


TAMPERS = {
    "theta": _set(["theta"], lambda t: [t[0] * 1.1] + t[1:]),
    "value": _set(["value"], lambda v: v + 1e-3),
    "upper_bound": _set(["upper_bound"], lambda v: v - 1e-3),
    "pattern": _set(["pattern"], lambda s: _flip_char(s, int(np.argmax([ch == "1" for ch in s])))),
    "pattern_dropped": _drop_pattern,
    "bound_lowered": _lower_a_bound,
    "bound_lowered_B": _lower_a_bound_settled_by_bound,
    "witness": _witness_moved,
    "alpha_raised_with_value_lowered": lambda c: (_set(["value"], lambda v: v * 0.5)(c)),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_tampering_is_rejected(case, name):
    Phi, U_K, res, cert = case
    rep = verify(_tampered(cert, TAMPERS[name]), Phi, U_K, "bias")
    assert not rep.valid, name
    assert rep.reasons


def test_alpha_claim_checked(case):
    Phi, U_K, res, cert = case
    c = _tampered(cert, _set(["upper_bound"], lambda v: v * 4))  # a weaker but valid bound ...
    c["certified"] = True  # ... cannot be called certified at alpha = 1
    rep = verify(c, Phi, U_K, "bias")
    assert not rep.valid and any("certified" in r for r in rep.reasons)
    c["alpha"] = 0.2  # ... but is a valid alpha = 0.2 certificate
    assert verify(c, Phi, U_K, "bias").valid


def test_wrong_inputs_rejected(case):
    Phi, U_K, res, cert = case
    assert not verify(cert, Phi, U_K, None).valid  # other objective
    rng = np.random.default_rng(0)
    U2 = np.linalg.qr(rng.normal(size=U_K.shape))[0]
    assert not verify(cert, Phi, U2, "bias").valid


def test_malformed_certificate_raises(case):
    Phi, U_K, res, cert = case
    with pytest.raises(CertificateError):
        verify({"format": "nope"}, Phi, U_K, "bias")
    with pytest.raises(CertificateError):
        verify(_tampered(cert, lambda c: c.pop("patterns")), Phi, U_K, "bias")
    with pytest.raises(CertificateError):
        verify("not json at all {", Phi, U_K, "bias")


def test_cli_best_neuron_and_verify_in_fresh_process(tmp_path, capsys):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    inp = tmp_path / "data.npz"
    np.savez(inp, X=X)
    cert = tmp_path / "cert.json"
    rc = main(["best-neuron", str(inp), "--K", "3", "--features", "bias", "--json", "--out", str(cert), "--quiet"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("value", "upper_bound", "alpha", "certified", "theta", "pattern", "n_patterns", "seconds"):
        assert key in out
    assert out["certified"] and set(out["pattern"]) <= {"0", "1"} and len(out["pattern"]) == 30
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path))
    proc = subprocess.run([sys.executable, "-m", "relu_gating", "verify", str(cert), str(inp)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "VALID" in proc.stdout
    bad = json.loads(cert.read_text())
    bad["value"] = bad["value"] + 0.01
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    rc = main(["verify", str(bad_path), str(inp)])
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
    from _search_reference import brute_best

    ref = brute_best(Phi, U, None if features is None else np.ones((n, 1)), extra_patterns=res.masks)
    assert res.value >= ref - 1e-9
    assert res.certified
    assert res.value == pytest.approx(ref, abs=1e-9)
    # a tampered exact witness is caught
    k = next(iter(cert["patterns"]["exact_witnesses"]))
    cert["patterns"]["exact_witnesses"][k] = [str(-int(x)) for x in cert["patterns"]["exact_witnesses"][k]]
    assert not verify(cert, Phi, U, features).valid


def test_same_subspace_other_bits_still_verifies(case):
    # U_K rebuilt elsewhere may differ in signs or last bits: the certificate is about
    # span(U_K), and verify recomputes everything from the inputs it is given
    Phi, U_K, res, cert = case
    U2 = U_K * np.array([-1.0, 1.0, 1.0, -1.0])
    rep = verify(cert, Phi, U2, "bias")
    assert rep.valid, rep.reasons
    assert rep.checks["fingerprint"]["identical_inputs"] is False
    assert verify(cert, Phi, U_K, "bias").checks["fingerprint"]["identical_inputs"] is True
