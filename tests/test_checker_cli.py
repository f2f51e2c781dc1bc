"""``relu-gating verify``: one verdict word in the headline, the text and the JSON, and its exit code."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relu_gating import InputError, best_neuron, neuron_value
from relu_gating.cli import main


def _value(Phi, U, w):
    try:
        return neuron_value(Phi, U, w, features="bias")
    except InputError:  # an excluded neuron
        return np.nan


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A valid certificate of a run that stopped short (certified False, the claim a weaker neuron)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(14, 2))
    Phi = np.c_[X, np.ones(14)]
    U = np.linalg.qr(rng.normal(size=(14, 2)))[0]
    d = best_neuron(Phi, U).to_dict()
    W = np.array(d["patterns"]["witnesses"])
    vals = np.array([_value(Phi, U, w) for w in W])
    k = int(np.nanargmin(np.abs(vals - 0.75 * np.nanmax(vals))))  # proven alpha = its value / optimum
    d["theta"] = W[k].tolist()
    d["value"] = float(vals[k])
    d["pattern"] = "".join("1" if z > 0 else "0" for z in Phi @ W[k])
    d["certified"] = False
    tmp = tmp_path_factory.mktemp("stopped")
    cert, inp = tmp / "c.json", tmp / "x.npz"
    cert.write_text(json.dumps(d))
    np.savez(inp, Phi=Phi, U_K=U)
    return str(cert), str(inp), float(vals[k]) / float(np.nanmax(vals))


@pytest.mark.parametrize("require, word, code", [(0.5, "CERTIFIED", 0), (1.0, "VALID-NOT-CERTIFIED", 3)])
def test_one_verdict_word(stopped, capsys, require, word, code):
    cert, inp, alpha = stopped
    assert 0.5 < alpha < 1
    args = ["verify", cert, inp, "--features", "bias", "--require-alpha", str(require)]
    assert main(args) == code
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith(word + ":")
    assert main(args + ["--json"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == word and doc["exit_code"] == code
    assert doc["certified"] is (word == "CERTIFIED") and doc["valid"] is True


def test_invalid_and_refused_codes(stopped, tmp_path, capsys):
    cert, inp, _ = stopped
    d = json.loads(open(cert).read())
    d["value"] += 0.01
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    assert main(["verify", str(bad), inp, "--features", "bias", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "INVALID" and doc["certified"] is False
    bad.write_text(json.dumps(d).replace('"n_patterns": ', '"n_patterns": 1e999, "x": '))
    assert main(["verify", str(bad), inp, "--features", "bias"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_exact_flag(stopped, capsys):
    cert, inp, _ = stopped
    assert main(["verify", cert, inp, "--features", "bias", "--require-alpha", "0.5", "--exact", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exact"] is True and doc["verdict"] == "CERTIFIED"
