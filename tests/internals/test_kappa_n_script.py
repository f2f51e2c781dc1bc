"""benchmarks/kappa_n.py and example512_n.py: the families, one file per case, claims, and the doc tables."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests._benchmarks import benchmark_script




@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("name", ["moons", "clusters"])
def test_families_are_dyadic_orthonormal_and_the_explicit_end_is_below_the_papers(name, d):
    f = benchmark_script("kappa_n").family(name, 30, 1, d)
    Phi = f["Phi"]
    assert Phi.shape == (30, d + 1) and np.all(Phi * 2.0**16 == np.round(Phi * 2.0**16))
    for B in f["bases"].values():
        assert np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-10)
    if name == "clusters":  # Example 5.12: sqrt(sum_c chi_upper_c^2) <= sqrt(K) max_c 2 omega_c
        assert 0 < f["explicit"] <= f["paper"] * (1 + 1e-12) and 0 <= f["epsilon"] < 1


def test_one_file_per_case_with_provenance_and_claims_skip(tmp_path):
    mod = benchmark_script("kappa_n")
    argv = ["--n", "9", "--seeds", "0", "--families", "clusters", "--refine", "0", "--adaptive", "1",
            "--out-dir", str(tmp_path)]
    (tmp_path / "clusters_d2_n9_s1.running").write_text("1")  # claimed by another process: skipped
    assert mod.main(argv + ["--seeds", "0", "1"]) == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["clusters_d2_n9_s0.json", "clusters_d2_n9_s1.running"]
    d = json.loads((tmp_path / "clusters_d2_n9_s0.json").read_text())
    assert len(d["provenance"]["commit"]) == 40 and d["provenance"]["load_start"] is not None
    for r in d["rows"]:
        assert r["lower"] <= r["upper"] <= r["upper_parts"]["basis"] * (1 + 1e-9)
        assert len(r["rounds"]) == len(r["norms"]) == r["directions"]
    chi = next(r for r in d["rows"] if r["what"] == "kappa(chi)")
    assert chi["upper"] <= chi["explicit_upper"] <= chi["paper_upper"] * (1 + 1e-12)
    mtime = (tmp_path / "clusters_d2_n9_s0.json").stat().st_mtime_ns
    mod.main(argv)  # a saved case is not recomputed
    assert (tmp_path / "clusters_d2_n9_s0.json").stat().st_mtime_ns == mtime
    assert len(mod.load_rows(str(tmp_path))) == 2 and d["complete"] is True


def test_a_case_is_saved_after_each_quantity_and_an_incomplete_one_is_redone(tmp_path, monkeypatch):
    mod = benchmark_script("kappa_n")
    argv = ["--n", "9", "--seeds", "0", "--families", "clusters", "--refine", "0", "--adaptive", "0",
            "--out-dir", str(tmp_path)]
    path = tmp_path / "clusters_d2_n9_s0.json"
    real = mod.rows_for

    def first_only(*a, on_row=None, **k):  # the run dies after its first quantity
        def stop(rows):
            on_row(rows)
            raise KeyboardInterrupt
        return real(*a, on_row=stop, **k)

    monkeypatch.setattr(mod, "rows_for", first_only)
    with pytest.raises(KeyboardInterrupt):
        mod.main(argv)
    d = json.loads(path.read_text())
    assert d["complete"] is False and [r["what"] for r in d["rows"]] == ["kappa(U_K)"]
    (tmp_path / "clusters_d2_n9_s0.running").unlink()  # the dead run's claim, removed by hand
    monkeypatch.setattr(mod, "rows_for", real)
    mod.main(argv)
    d = json.loads(path.read_text())
    assert d["complete"] is True and [r["what"] for r in d["rows"]] == ["kappa(U_K)", "kappa(chi)"]


def test_doc_per_seed_cells():
    doc = benchmark_script("experiments_doc")
    rows = [{"targets": [0.3, 0.1], "t_needed": [2, None], "t_pred_example": [1e4, 9e4]},
            {"targets": [0.3], "t_needed": [3], "t_pred_example": [2e4]}]
    assert doc._per_seed(rows, 0.3) == "2 / 3"
    assert doc._per_seed(rows, 0.1) == "- / -"  # not reached; below 2 eps
    assert doc._per_seed(rows, 0.1, "t_pred_example") == "9e+04 / -"


def test_kappa_trend_says_grows_only_when_a_lower_end_clears_every_first_upper_end():
    doc = benchmark_script("experiments_doc")

    def r(n, seed, lo, up):
        return {"n": n, "seed": seed, "lower": lo, "upper": up}

    grows = [r(50, 0, 7.6, 8.1), r(50, 1, 8.8, 9.7), r(100, 0, 9.6, 9.9), r(100, 1, 11.7, 13.3)]
    assert "grows with n" not in doc._kappa_trend(grows)  # 9.6 < 9.7: the brackets touch
    grows[2]["lower"] = 9.71
    text = doc._kappa_trend(grows)
    assert "grows with n" in text and "n = 100" in text and "[7.6, 9.7] at n = 50 (2 seeds)" in text
    assert "at n = 100 by a certified factor of at least 1.001" in text  # 9.71 / 9.7 = 1.00103, rounded down
    assert "every bracket with an upper end lies within [7.6, 13.3]" in text
    flat = [r(50, 0, 2.5, 3.0), r(100, 0, 2.7, 3.4), r(200, 0, 2.9, 3.5)]
    text = doc._kappa_trend(flat)
    assert "grows" not in text and "within [2.5, 3.5]" in text
    assert "one n only" in doc._kappa_trend([r(50, 0, 1.0, 3.0)])
    assert "trivial 1" not in doc._kappa_trend([r(50, 0, 1.0, 3.0)])
    assert "trivial 1" in doc._kappa_trend([r(50, 0, 0.97, 3.0)])
    partial = [r(50, 0, 4.3, 5.2), r(100, 0, 6.0, float("inf"))]  # a d = 3 bracket saved before its basis closed
    text = doc._kappa_trend(partial)
    assert "[6, no upper end yet] at n = 100" in text and "grows with n" in text  # 6.0 > 5.2: certified
    partial[1]["lower"] = 5.0
    assert "no trend (upper ends at one n only)" in doc._kappa_trend(partial)
    assert doc._widest(partial) == "no upper end yet" and doc._widest(partial[:1]) == "17%"


def test_the_figure_keeps_partial_brackets_off_the_lines(tmp_path):
    mod = benchmark_script("kappa_n")
    done = {"family": "moons", "d": 3, "n": 50, "seed": 0, "what": "kappa(U_K)", "lower": 4.3, "upper": 5.2,
            "rounds": [9], "cpu_seconds": 9.0, "patterns": 1}
    part = {**done, "n": 100, "lower": 1.3, "upper": float("inf"), "final": False}
    assert mod._split_partial([done, part]) == ([done], [part])
    (tmp_path / "moons_d3_n50_s0.json").write_text(json.dumps({"rows": [done]}))
    (tmp_path / "moons_d3_n100_s0.json").write_text(json.dumps({"rows": [part]}))
    mod.plot(str(tmp_path), str(tmp_path / "k.png"))  # an inf upper end neither fails nor joins a line
    assert (tmp_path / "k.png").stat().st_size > 0


def test_a_restarted_case_keeps_the_further_partial_file_until_it_gets_further(tmp_path, monkeypatch):
    mod = benchmark_script("kappa_n")
    argv = ["--n", "9", "--seeds", "0", "--families", "moons", "--out-dir", str(tmp_path)]
    path, side = tmp_path / "moons_d2_n9_s0.json", tmp_path / "moons_d2_n9_s0.restarted"
    old = {"what": "kappa(U_K)", "lower": 3.0, "upper": float("inf"), "final": False, "norms": [[1, 1]] * 6}
    path.write_text(json.dumps({"provenance": {}, "complete": False, "rows": [old]}))

    def row(norms, final=False):
        return {**old, "lower": 2.0 + norms, "final": final, "norms": [[1, 1]] * norms}

    def run(*steps):  # each step's rows saved as a running case would, then the case ends (or dies)
        def fake(*a, on_row=None, **k):
            for rows in steps[:-1]:
                on_row(rows)
            if steps[-1] is None:
                raise KeyboardInterrupt
            return steps[-1]
        monkeypatch.setattr(mod, "rows_for", fake)
        try:
            mod.main(argv)
        except KeyboardInterrupt:
            (tmp_path / "moons_d2_n9_s0.running").unlink()  # the dead run's claim, removed by hand

    run([row(2)], [row(5)], None)  # behind the saved 6 norms: the file stays, the new run goes beside it
    assert json.loads(path.read_text())["rows"] == [old]
    assert json.loads(side.read_text())["rows"][0]["lower"] == 7.0
    high = {**old, "lower": 9.0}
    path.write_text(json.dumps({"provenance": {}, "complete": False, "rows": [high]}))
    run([row(6)], None)  # as many norms, a lower end (8) below the file's (9): the file stays
    assert json.loads(path.read_text())["rows"] == [high] and json.loads(side.read_text())["rows"][0]["lower"] == 8.0
    run([row(3)], [row(7)], None)  # further than the file: it replaces it, and the side file goes
    assert json.loads(path.read_text())["rows"][0]["lower"] == 9.0 and not side.exists()
    run([row(1)], [row(4, final=True)])  # a finished case is saved whatever its norm count
    saved = json.loads(path.read_text())
    assert saved["complete"] is True and saved["rows"][0]["final"] is True and not side.exists()


def test_a_partial_case_resumes_with_its_finished_quantities_kept(tmp_path):
    mod = benchmark_script("kappa_n")
    argv = ["--n", "9", "--seeds", "0", "--families", "clusters", "--refine", "0", "--adaptive", "1",
            "--out-dir", str(tmp_path)]
    path = tmp_path / "clusters_d2_n9_s0.json"
    assert mod.main(argv) == 0
    full = json.loads(path.read_text())
    u_k, chi = full["rows"]
    assert u_k["what"] == "kappa(U_K)" and chi["what"] == "kappa(chi)" and len(u_k["commit"]) == 40
    marked = {**u_k, "lower": 0.5, "commit": None}  # a kept row is not bracketed again: its marks survive
    del marked["commit"]  # (an older file's row names no commit: its file's)
    part = {**chi, "upper": float("inf"), "final": False}
    path.write_text(json.dumps({"provenance": {**full["provenance"], "commit": "0" * 40}, "args": full["args"],
                                "complete": False, "rows": [marked, part]}))
    assert mod.main(argv) == 0
    again = json.loads(path.read_text())
    assert again["complete"] is True and [r["what"] for r in again["rows"]] == ["kappa(U_K)", "kappa(chi)"]
    assert again["rows"][0] == {**marked, "commit": "0" * 40}
    redo = again["rows"][1]
    assert redo["final"] is True and redo["commit"] == full["provenance"]["commit"]
    assert max(redo["lower"], chi["lower"]) <= min(redo["upper"], chi["upper"]) * (1 + 1e-9)  # one kappa(chi)
    args = {**again["args"], "refine": 1}  # saved under other settings: nothing is kept, the case runs again
    path.write_text(json.dumps({"provenance": again["provenance"], "args": args, "complete": False,
                                "rows": [marked, part]}))
    assert mod.main(argv) == 0
    assert json.loads(path.read_text())["rows"][0]["lower"] == u_k["lower"]
