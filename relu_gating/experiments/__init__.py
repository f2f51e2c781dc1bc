"""Exact experiments on the paper's theory, with certified neurons (issue 12).

Each experiment is a module of this package exposing ``EXPERIMENT``, an
:class:`Experiment` whose ``run(seed=0, quick=False)`` returns an
:class:`ExperimentResult` (tables of numbers, the claims checked, the inputs
needed to re-run it) and whose ``plot(result, path)`` draws its figure (needs
matplotlib: ``pip install ".[plot]"``).  ``relu-gating experiment --list``
names them; ``relu-gating experiment NAME --out DIR`` runs one.
"""

from __future__ import annotations

import importlib

from relu_gating.experiments._base import SCHEMA, Check, Experiment, ExperimentResult, run_recorded

__all__ = ["Experiment", "ExperimentResult", "Check", "SCHEMA", "NAMES", "get", "run", "run_recorded"]

# name -> module of this package defining EXPERIMENT (in the order the examples README presents them)
_MODULES: dict[str, str] = {
    "greedy-rate": "greedy_rate",
    "certification": "certification",
    "clusters": "clusters",
    "depth": "depth",
    "graph-choice": "graph_choice",
    "alpha": "alpha",
}

#: Experiment names, in presentation order.
NAMES: tuple[str, ...] = tuple(_MODULES)


def get(name: str) -> Experiment:
    """The registered :class:`Experiment` called ``name``."""
    from relu_gating.errors import InputError

    if name not in _MODULES:
        raise InputError(f"unknown experiment {name!r}; choose one of: {', '.join(NAMES)}")
    return importlib.import_module(f"relu_gating.experiments.{_MODULES[name]}").EXPERIMENT


def run(name: str, *, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Run the experiment ``name`` and return its numbers (with the run's provenance)."""
    return run_recorded(get(name), seed=seed, quick=quick)
