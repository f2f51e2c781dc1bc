"""The README's Python example and docs/api.md's run as written, in order, and their assertions hold."""

from __future__ import annotations

import os
import re

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
README = os.path.join(ROOT, "README.md")
API = os.path.join(ROOT, "docs", "api.md")


def _blocks(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return re.findall(r"```python\n(.*?)```", fh.read(), re.S)


def _run(blocks: list[str], env: dict, where: str) -> None:
    for k, code in enumerate(blocks):
        if "LocalCluster" in code:  # a cluster example: not started in the test run
            continue
        exec(compile(code, f"{where} block {k}", "exec"), env)  # noqa: S102 - the documentation's own code


def test_readme_python_example_runs():
    blocks = _blocks(README)
    assert len(blocks) == 1  # the README is a front door: one short example, the tour is docs/api.md
    env: dict = {}
    _run(blocks, env, "README")
    assert env["res"].certified


def test_api_doc_python_blocks_run(tmp_path, monkeypatch):
    blocks = _blocks(API)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)  # files the examples write (cert.npz) go here
    env: dict = {}
    _run(blocks, env, "docs/api.md")
    assert env["res"].certified
    assert (tmp_path / "cert.npz").exists()
