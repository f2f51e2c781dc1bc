"""Every JSON output parses strictly and conforms to its published schema (relu_gating/schemas)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from _jsonschema_lite import violations
from relu_gating.cli import main

SCHEMAS = os.path.join(os.path.dirname(__file__), os.pardir, "relu_gating", "schemas")


def _schema(kind: str) -> dict:
    with open(os.path.join(SCHEMAS, f"{kind}.schema.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _strict(text: str):
    def bad(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("schemas")
    X = np.random.default_rng(3).normal(size=(24, 2))
    np.savetxt(d / "x.csv", X, delimiter=",")
    return d


def _run(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def test_every_schema_is_valid_json_with_a_title():
    kinds = sorted(f[: -len(".schema.json")] for f in os.listdir(SCHEMAS) if f.endswith(".schema.json"))
    assert kinds == ["best-neuron", "certificate", "demo", "experiment", "patterns", "report", "verify"]
    for k in kinds:
        s = _schema(k)
        assert s["title"] and s["type"] == "object" and s["required"]


def test_best_neuron_certificate_and_verify_conform(data, capsys):
    cert = str(data / "c.json")
    code, out = _run(capsys, ["best-neuron", str(data / "x.csv"), "--K", "3", "--json", "--quiet", "--out", cert])
    assert code == 0
    doc = _strict(out)
    assert doc["schema"] == "relu-gating-best-neuron/1"
    assert violations(doc, _schema("best-neuron")) == []
    assert doc["strategy"] in ("enumerate", "branch-and-bound")  # the strategy that ran
    assert violations(dict(doc, strategy="auto"), _schema("best-neuron"))  # never "auto": what ran
    without = {k: v for k, v in doc.items() if k != "strategy"}
    assert any("strategy" in v for v in violations(without, _schema("best-neuron")))
    with open(cert, encoding="utf-8") as fh:
        c = _strict(fh.read())
    assert violations(c, _schema("certificate")) == []
    code, out = _run(capsys, ["verify", cert, str(data / "x.csv"), "--K", "3", "--json"])
    assert code == 0 and violations(_strict(out), _schema("verify")) == []
    code, out = _run(capsys, ["verify", cert, str(data / "x.csv"), "--K", "2", "--json"])  # another problem
    doc = _strict(out)
    assert code == 1 and not doc["valid"] and violations(doc, _schema("verify")) == []


def test_report_patterns_demo_conform(data, capsys):
    for argv, kind in ((["report", str(data / "x.csv"), "--K", "3", "--json"], "report"),
                       (["patterns", str(data / "x.csv"), "--json"], "patterns"),
                       (["demo", "--n", "24", "--samples", "0", "--json", "--quiet"], "demo")):
        code, out = _run(capsys, argv)
        doc = _strict(out)
        assert code == 0 and doc["schema"] == f"relu-gating-{kind}/1"
        assert violations(doc, _schema(kind)) == [], kind


def test_checker_rejects_nonconforming_documents():
    s = _schema("best-neuron")
    assert any("missing" in v for v in violations({"schema": "relu-gating-best-neuron/1"}, s))
    assert violations({"schema": "x"}, {"properties": {"schema": {"const": "y"}}})
    assert violations({"a": 1.5}, {"properties": {"a": {"type": "integer"}}})
    assert violations([1, "a"], {"type": "array", "items": {"type": "number"}})
