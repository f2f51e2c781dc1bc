"""docs/performance.md's generated tables are what benchmarks/tables.py renders from benchmarks/results/."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tables():
    spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "benchmarks" / "tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_performance_tables_match_the_saved_runs():
    t = _tables()
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    a, b = text.index(t.BEGIN), text.index(t.END) + len(t.END)
    assert text[a:b] == t.block(), "regenerate: python benchmarks/tables.py --write docs/performance.md"


def test_the_block_is_replaced_in_place():
    t = _tables()
    doc = f"intro\n{t.BEGIN}\nold table\n{t.END}\noutro\n"
    assert t.replace_block(doc, "NEW") == "intro\nNEW\noutro\n"
