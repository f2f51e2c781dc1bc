"""The command line reads a ``--features FILE`` before the input and its graph (``cli._common``)."""

from __future__ import annotations

import numpy as np

from relu_gating.cli import main


def test_a_bad_features_file_is_told_before_the_input_is_read(tmp_path, capsys, monkeypatch):
    """``--features FILE`` is read before the input and its graph: the input is never loaded."""
    import relu_gating.cli._common as common

    data = tmp_path / "x.npy"
    np.save(data, np.random.default_rng(0).normal(size=(30, 2)))
    bad = tmp_path / "H.npy"
    bad.write_bytes(b"not an array")

    def never(*a, **k):
        raise AssertionError("the input was read before the features file")

    monkeypatch.setattr(common, "problem_from_args", never)
    for cmd in (["best-neuron", str(data)], ["verify", str(tmp_path / "c.json"), str(data)]):
        if cmd[0] == "verify":
            (tmp_path / "c.json").write_text("{}")
        assert main([*cmd, "--features", str(bad)]) == 2
        err = [x for x in capsys.readouterr().err.strip().splitlines() if ": warning: " not in x]
        assert len(err) == 1 and "--features" in err[0], err
