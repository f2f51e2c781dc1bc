"""benchmarks/experiment_reduced.py: a reduced run replaces only the named entries and says so."""

from __future__ import annotations

import json

import pytest
from tests._benchmarks import benchmark_script

def test_a_reduced_clusters_run_records_what_was_replaced(tmp_path):
    mod = benchmark_script("experiment_reduced")
    argv = ["clusters", "--set", "n=24", "--set", "configs=[[0.4, 0.4]]", "--set", "T=2", "--set", "kappa_n=9",
            "--set", "kappa_seconds=1", "--out", str(tmp_path), "--no-plot"]
    assert mod.main(argv) == 0
    d = json.loads((tmp_path / "clusters.json").read_text())
    p = d["params"]
    assert p["reduced"] == ["T", "configs", "kappa_n", "kappa_seconds", "n"]
    assert p["n"] == 24 and p["configs"] == [[0.4, 0.4]] and p["quick"] is False
    assert [r["n"] for r in d["tables"]["configs"]] == [24] and len(d["tables"]["kappa"]) == 1
    assert d["provenance"]["command"].startswith("benchmarks/experiment_reduced.py clusters")


def test_a_bad_set_is_one_clear_error():
    mod = benchmark_script("experiment_reduced")
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        mod.parse_sets(["n"])
    with pytest.raises(SystemExit, match="not JSON"):
        mod.parse_sets(["configs=[[0.4"])
    assert mod.parse_sets(["n=3", "f=false"]) == {"n": 3, "f": False}
