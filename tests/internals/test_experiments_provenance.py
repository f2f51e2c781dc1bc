"""Every saved experiment run records its provenance; docs/experiments.md's blocks are the saved runs'."""

from __future__ import annotations

import json
import re
from pathlib import Path

from relu_gating.experiments import Check, Experiment, ExperimentResult
from relu_gating.experiments._base import provenance, run_recorded
from tests._benchmarks import benchmark_script

ROOT = Path(__file__).resolve().parents[2]


def test_a_recorded_run_carries_commit_command_load_and_date(tmp_path):
    exp = Experiment("stub", "a stub", lambda seed=0, quick=False: ExperimentResult(
        "stub", "t", {"seed": seed}, {"rows": [{"a": 1}]}, (Check("c", True, kind="code test"),)))
    res = run_recorded(exp, seed=3, argv=["prog", "stub", "--seed", "3"])
    res.save(str(tmp_path))
    d = json.loads((tmp_path / "stub.json").read_text())
    pv = d["provenance"]
    assert re.fullmatch(r"[0-9a-f]{40}", pv["commit"]) and isinstance(pv["dirty"], bool)
    assert pv["command"] == "prog stub --seed 3" and len(pv["load_start"]) == 3 and len(pv["load_end"]) == 3
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", pv["date"])
    assert d["checks"][0]["kind"] == "code test"


def test_provenance_quotes_the_command():
    assert provenance(["a b", "c"])["command"] == "'a b' c"


def test_a_check_of_an_unknown_kind_is_refused():
    import pytest

    with pytest.raises(ValueError, match="kind"):
        Check("c", True, kind="evidence")


def test_experiments_doc_blocks_match_the_saved_runs():
    t = benchmark_script("experiments_doc")
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    assert any(t.begin(n) in text for n in t.BLOCKS)
    assert t.replace_blocks(text) == text, "regenerate: python benchmarks/experiments_doc.py --write docs/experiments.md"


def test_experiments_doc_replaces_only_its_blocks():
    t = benchmark_script("experiments_doc")
    doc = f"intro\n{t.begin('alpha')}\nold\n{t.end('alpha')}\noutro\n"
    new = t.replace_blocks(doc)
    assert new.startswith("intro\n") and new.endswith("outro\n") and "old" not in new and t.block("alpha") in new
