"""docs/performance.md's generated tables are what benchmarks/tables.py renders from benchmarks/results/."""

from __future__ import annotations

from pathlib import Path
from tests._benchmarks import benchmark_script

ROOT = Path(__file__).resolve().parents[1]


def test_performance_tables_match_the_saved_runs():
    t = benchmark_script("tables", "bench_tables")
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    a, b = text.index(t.BEGIN), text.index(t.END) + len(t.END)
    assert text[a:b] == t.block(), "regenerate: python benchmarks/tables.py --write docs/performance.md"


def test_the_block_is_replaced_in_place():
    t = benchmark_script("tables", "bench_tables")
    doc = f"intro\n{t.BEGIN}\nold table\n{t.END}\noutro\n"
    assert t.replace_block(doc, "NEW") == "intro\nNEW\noutro\n"
