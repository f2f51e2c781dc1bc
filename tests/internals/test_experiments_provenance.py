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


def test_a_recorded_run_carries_its_cpu_seconds_including_a_child_process():
    import subprocess
    import sys
    import time

    def busy(seed=0, quick=False):
        t0 = time.process_time()
        while time.process_time() - t0 < 0.2:
            pass
        subprocess.run([sys.executable, "-c", "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass"],
                       check=True)
        return ExperimentResult("stub", "t", {"seed": seed}, {"rows": [{"a": 1}]}, (Check("c", True, kind="code test"),))

    pv = run_recorded(Experiment("stub", "a stub", busy), argv=["prog"]).provenance
    assert 0.45 <= pv["cpu_seconds"] < 30  # 0.2 s here and 0.3 s in the child (plus its start-up)


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


#: The first commit naming issue 40 ("Experiments III"): every saved run must be of its code or later.
ISSUE_40_START = "6b4349e"


def _commits(d) -> list[str]:
    """The commits a saved file records (its provenance, or each run's in a file of several runs)."""
    if isinstance(d, dict):
        pv = d.get("provenance")
        if isinstance(pv, dict) and "commit" in pv:
            return [pv["commit"]]
        return [c for k in ("commands", "runs") for x in (d.get(k) or []) for c in _commits({"provenance": x})
                if isinstance(x, dict) and "commit" in x]
    return []


def test_every_saved_experiment_run_records_a_commit_at_or_after_the_issues_start():
    import subprocess

    import pytest

    def git(*a: str) -> int:
        return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True).returncode

    if git("cat-file", "-e", ISSUE_40_START + "^{commit}") != 0:
        pytest.skip("no git history here (a source archive or a shallow clone)")
    files = sorted((ROOT / "benchmarks" / "results").glob("experiments_*/**/*.json"))
    assert len(files) > 20
    late = []
    for path in files:
        commits = _commits(json.loads(path.read_text(encoding="utf-8")))
        assert commits and all(re.fullmatch(r"[0-9a-f]{40}", c) for c in commits), f"{path}: no commit recorded"
        late += [f"{path.relative_to(ROOT)} at {c[:9]}" for c in commits
                 if git("merge-base", "--is-ancestor", ISSUE_40_START, c) != 0]
    assert not late, "saved runs older than issue 40's start: " + "; ".join(late)
