"""relu-gating demo: the README's main job."""

from __future__ import annotations

import json

import pytest

from relu_gating.cli import main


def test_demo_json(capsys):
    assert main(["demo", "--n", "40", "--samples", "3000", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    cert = out["certified"]
    assert cert["certified"] and cert["value"] <= cert["upper_bound"] + 1e-12
    assert cert["upper_bound"] - cert["value"] <= 1e-9
    for base in ("random_sampling", "local_search"):
        assert out[base]["value"] <= cert["upper_bound"] + 1e-12
        assert out[base]["missed"] >= -1e-9
    assert out["random_sampling"]["patterns_seen"] <= cert["n_patterns"]


def test_demo_text_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "demo.png"
    assert main(["demo", "--n", "30", "--samples", "1000", "--quiet", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "CERTIFIED" in text and "random sampling" in text and "local search" in text
    assert png.stat().st_size > 10_000
