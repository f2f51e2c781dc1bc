"""The README's Python examples run as written, in order, and their assertions hold."""

from __future__ import annotations

import os
import re

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    with open(README, encoding="utf-8") as fh:
        blocks = re.findall(r"```python\n(.*?)```", fh.read(), re.S)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)  # files the examples write (cert.npz) go here
    env: dict = {}
    for k, code in enumerate(blocks):
        if "LocalCluster" in code:  # a cluster example: not started in the test run
            continue
        exec(compile(code, f"README block {k}", "exec"), env)  # noqa: S102 - the README's own code
    assert env["res"].certified
    assert (tmp_path / "cert.npz").exists()
