"""What every experiment returns and how it is saved (private; see :mod:`relu_gating.experiments`).

An experiment is a function ``run(*, seed: int = 0, quick: bool = False) -> ExperimentResult``
registered in :data:`relu_gating.experiments.REGISTRY` with a one-line summary and an optional
``plot(result, path)``.  Its numbers are data: named tables (lists of flat rows) that save as JSON
and CSV; the claims it illustrates are recorded as named checks with the numbers that decided them.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Experiment", "ExperimentResult", "Check", "SCHEMA"]

#: The ``schema`` field of every experiment JSON file.
SCHEMA = "relu-gating-experiment/1"


def _plain(x: Any) -> Any:
    """A JSON-safe copy: numpy scalars/arrays to Python, non-finite floats to None (strict JSON)."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


@dataclass(frozen=True)
class Check:
    """One claim the experiment illustrates: ``holds`` and the numbers that decided it.

    Attributes
    ----------
    name : str
        The statement checked (with the paper's numbering).
    holds : bool
        Whether the recorded numbers obey it.
    detail : str
        The numbers that decided it.
    tests : str
        What a failure would reveal in the code (for example "the kappa upper end").
    fails_if : str
        An input that makes it fail (each is fed in ``tests/internals/test_experiment_checks.py``).
    informative : bool
        False when the bound is looser than what holds trivially (above 1, above the previous
        value, ...): such a check is recorded but not counted as evidence.
    """

    name: str
    holds: bool
    detail: str = ""
    tests: str = ""
    fails_if: str = ""
    informative: bool = True


@dataclass(frozen=True)
class ExperimentResult:
    """Numbers of one experiment run.

    Attributes
    ----------
    name, title : str
        Registry name; a sentence saying what is shown (also the figure title).
    params : dict
        Every input needed to re-run it (seed, quick, sizes, data set, K, ...).
    tables : dict[str, list[dict]]
        Named tables; each row a flat dict of numbers/strings (one CSV per table).
    checks : tuple of Check
        The claims illustrated and whether the recorded numbers obey them.
    seconds : float
        Wall time of the run.
    """

    name: str
    title: str
    params: dict
    tables: dict
    checks: tuple = ()
    seconds: float = 0.0
    version: str = field(default="")

    @property
    def ok(self) -> bool:
        """All checks hold."""
        return all(c.holds for c in self.checks)

    def to_dict(self) -> dict:
        from relu_gating._version import __version__

        return _plain({
            "schema": SCHEMA, "name": self.name, "title": self.title,
            "version": self.version or __version__, "python": platform.python_version(),
            "params": self.params, "seconds": self.seconds,
            "checks": [{"name": c.name, "holds": bool(c.holds), "detail": c.detail, "tests": c.tests,
                        "fails_if": c.fails_if, "informative": bool(c.informative)} for c in self.checks],
            "tables": self.tables,
        })

    def save(self, out_dir: str) -> list[str]:
        """Write ``NAME.json`` and ``NAME_TABLE.csv`` per table into ``out_dir``; return the paths."""
        os.makedirs(out_dir, exist_ok=True)
        paths = [os.path.join(out_dir, f"{self.name}.json")]
        with open(paths[0], "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=1, allow_nan=False)
        for tname, rows in self.tables.items():
            path = os.path.join(out_dir, f"{self.name}_{tname}.csv")
            cols = list(dict.fromkeys(k for r in rows for k in r))
            with open(path, "w", newline="", encoding="utf-8") as fh:
                w = csv.DictWriter(fh, fieldnames=cols)
                w.writeheader()
                w.writerows([_plain(r) for r in rows])
            paths.append(path)
        return paths


@dataclass(frozen=True)
class Experiment:
    """A registry entry: ``run(seed=, quick=)`` and ``plot(result, path)`` (matplotlib, optional)."""

    name: str
    summary: str
    run: Callable[..., ExperimentResult]
    plot: Callable[[ExperimentResult, str], None] | None = None
