"""benchmarks/example512_n.py: each case's file is written when it starts (incomplete) and when it completes;
completed cases are skipped, started ones redone, and only completed ones are read back or rendered."""

from __future__ import annotations

import json

from tests._benchmarks import benchmark_script


def _row(n: int, seed: int) -> dict:
    return {"n": n, "seed": seed, "epsilon": 1e-3, "omega_max": 2.0, "alpha_eff": 1.0, "certified": True,
            "targets": [0.3, 0.1], "t_needed": [2, 5], "t_pred_example": [1.0, 2.0], "t_pred_kappa_chi": [1.0, 2.0],
            "gaps": [1.0, 0.5, 0.05], "seconds": 0.0}


def test_a_case_file_is_incomplete_while_it_runs_and_complete_after(tmp_path, monkeypatch):
    mod = benchmark_script("example512_n")
    seen = []

    def case(n, seed, rho, sigma, T, step_seconds=None):
        d = json.loads((tmp_path / f"n{n}_s{seed}.json").read_text())
        seen.append((d["complete"], d["row"], d["case"], bool(d["provenance"]["commit"])))
        if seed == 1:
            raise KeyboardInterrupt  # the session ends while this case runs
        return _row(n, seed)

    monkeypatch.setattr(mod, "case", case)
    try:
        mod.main(["--n", "30", "--seeds", "0", "1", "--out-dir", str(tmp_path)])
    except KeyboardInterrupt:
        pass
    assert seen == [(False, None, {"n": 30, "seed": 0}, True), (False, None, {"n": 30, "seed": 1}, True)]
    done, started = (json.loads((tmp_path / f"n30_s{s}.json").read_text()) for s in (0, 1))
    assert done["complete"] is True and done["row"]["t_needed"] == [2, 5]
    assert started["complete"] is False and started["row"] is None
    assert [r["seed"] for r in mod.load_rows(str(tmp_path))] == [0]
    seen.clear()
    monkeypatch.setattr(mod, "case", lambda n, seed, *a: seen.append(seed) or _row(n, seed))
    mod.main(["--n", "30", "--seeds", "0", "1", "--out-dir", str(tmp_path)])
    assert seen == [1]  # the completed case is skipped, the started one redone
    assert [r["seed"] for r in mod.load_rows(str(tmp_path))] == [0, 1]


def test_the_doc_lists_started_cases_apart_from_the_table(tmp_path, monkeypatch):
    doc = benchmark_script("experiments_doc")
    cases = [{"provenance": {"commit": "a" * 40, "date": "2026-12-06T03:10:00", "command": "c",
                             "load_start": [1.0], "load_end": [2.0]}, "complete": True, "row": _row(30, 0)},
             {"provenance": {"commit": "b" * 40, "date": "2026-12-06T03:11:00", "command": "c",
                             "load_start": [1.0], "load_end": [1.0]},
              "complete": False, "row": None, "case": {"n": 480, "seed": 2}}]
    monkeypatch.setattr(doc, "_cases", lambda sub, pattern: cases)
    text = doc.example512()
    assert "| 30 | 0 |" in text and "| 480 |" not in text and text.startswith("1 cases saved")
    assert "Started and not finished (no result saved): n = 480, seed 2 (started 2026-12-06T03:11 UTC at bbbbbbbbb)" in text


def test_the_step_budget_reaches_every_greedy_step(monkeypatch):
    import pytest

    import relu_gating.layers.greedy as greedy

    mod = benchmark_script("example512_n")
    seen = []

    def layer(*a, **k):
        seen.append(k.get("max_seconds"))
        raise RuntimeError("stop here")

    monkeypatch.setattr(greedy, "greedy_layer", layer)
    for budget in (None, 7200.0):
        with pytest.raises(RuntimeError, match="stop here"):
            mod.case(12, 0, 0.4, 0.3, 2, budget)
    assert seen == [None, 7200.0]  # None: the search's own default (no max_seconds passed)
