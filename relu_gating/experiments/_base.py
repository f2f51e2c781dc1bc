"""What every experiment returns and how it is saved (private; see :mod:`relu_gating.experiments`).

An experiment is a function ``run(*, seed: int = 0, quick: bool = False) -> ExperimentResult``
registered in :data:`relu_gating.experiments.REGISTRY` with a one-line summary and an optional
``plot(result, path)``.  Its numbers are data: named tables (lists of flat rows) that save as JSON
and CSV; the claims it illustrates are recorded as named checks with the numbers that decided them.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Experiment", "ExperimentResult", "Check", "SCHEMA", "KINDS", "provenance", "run_recorded"]

#: The two kinds of check: a ``finding`` is evidence about the paper's claims (it could fail for a
#: reason on correct code); a ``code test`` is an identity or theorem that holds for every correct
#: implementation (recorded as a unit test of the code, not counted as evidence).
KINDS = ("finding", "code test")

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
    kind : str
        ``"finding"`` (evidence: correct code could still see it fail, because the paper's bound or
        the data could be otherwise) or ``"code test"`` (an identity, a theorem or a property that
        holds by construction: it tests the code, never the paper).
    """

    name: str
    holds: bool
    detail: str = ""
    tests: str = ""
    fails_if: str = ""
    informative: bool = True
    kind: str = "finding"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Check.kind must be one of {KINDS}, got {self.kind!r}")


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
    provenance : dict
        Where and when it ran (:func:`provenance`): commit, dirty flag, command, load, date.
    """

    name: str
    title: str
    params: dict
    tables: dict
    checks: tuple = ()
    seconds: float = 0.0
    version: str = field(default="")
    provenance: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """All checks hold."""
        return all(c.holds for c in self.checks)

    def to_dict(self) -> dict:
        from relu_gating._version import __version__

        return _plain({
            "schema": SCHEMA, "name": self.name, "title": self.title,
            "version": self.version or __version__, "python": platform.python_version(),
            "provenance": self.provenance or provenance(),
            "params": self.params, "seconds": self.seconds,
            "checks": [{"name": c.name, "holds": bool(c.holds), "detail": c.detail, "tests": c.tests,
                        "fails_if": c.fails_if, "informative": bool(c.informative), "kind": c.kind}
                       for c in self.checks],
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


def _git(*args: str) -> str | None:
    """Output of ``git args`` in this package's checkout, or None (no git, not a checkout)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        out = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def provenance(argv: list[str] | None = None) -> dict:
    """Where and when a run happened: git commit and dirty flag of the code, command, load, date.

    ``commit`` is ``git rev-parse HEAD`` of the checkout holding this package (None outside one);
    ``dirty`` is True when tracked files differ from it (the numbers may then not be reproducible
    from the commit alone).  ``load_end`` is :func:`os.getloadavg` now (1, 5, 15 min);
    :func:`run_recorded` adds the load before the run as ``load_start``.
    """
    argv = list(sys.argv if argv is None else argv)
    status = _git("status", "--porcelain", "--untracked-files=no")
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {"commit": _git("rev-parse", "HEAD"), "dirty": None if status is None else bool(status),
            "command": " ".join(shlex.quote(a) for a in argv), "argv": argv,
            "load_start": None, "load_end": load,
            "cpu_count": os.cpu_count(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds")}


def run_recorded(exp: Experiment, *, seed: int = 0, quick: bool = False, argv: list[str] | None = None
                 ) -> ExperimentResult:
    """``exp.run(seed=, quick=)`` with its :func:`provenance`: the code's state and the date when it
    started (the code that ran), the load before and after, and the CPU seconds it took (``cpu_seconds``:
    user + system of this process and its waited-for children; wall seconds rise with the load)."""
    before, cpu0 = provenance(argv), _cpu_seconds()
    res = exp.run(seed=seed, quick=quick)
    after, cpu1 = provenance(argv), _cpu_seconds()
    return dataclasses.replace(res, provenance={**before, "load_start": before["load_end"],
                                                "load_end": after["load_end"], "date_end": after["date"],
                                                "cpu_seconds": cpu1 - cpu0})


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its waited-for children (worker processes)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
