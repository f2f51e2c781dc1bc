"""The checker stays small and separate: a fresh process verifying a certificate of arrays loads at
most 1,500 code lines of relu_gating, and nothing of the search, the enumerator, solvers/ or cvxpy
(``benchmarks/checker_size.py``; the relu-gating verify command is measured too)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))

import checker_size  # noqa: E402


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_checker_loads_little_and_nothing_of_the_search(capsys):
    out = checker_size.main(["--limit", "1500"])  # asserts the limit and the forbidden modules
    assert out[("api", "npz")] <= 1500 and out[("api", "json")] <= 1500
    assert "forbidden loaded: none" in capsys.readouterr().out


def test_code_line_count_skips_docstrings_and_comments(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""Doc\n\nstring."""\n\n# comment\nx = 1  # trailing\n\n\ndef g():\n    """Doc."""\n'
                 '    return """not a\n    docstring"""\n')
    assert checker_size.code_lines(str(f)) == 4  # x = 1; def g(); the two lines of the returned string
