"""The certified best-neuron search: per-pattern objectives, bounds and exact solves, global comparison.

Modules: :mod:`.front` (``best_neuron``), :mod:`.objectives` (pencils of a
pattern in a well-conditioned basis), :mod:`.tasks` (per-chunk work shipped
to executors), :mod:`.state` (mergeable partial results, checkpoints),
:mod:`._masked` (masked products by rank-one updates), :mod:`.baselines`
(random and local search, for comparison).
"""

from __future__ import annotations

from relu_gating.search.baselines import BaselineResult, local_search, random_search
from relu_gating.search.front import best_neuron
from relu_gating.search.from_samples import best_neuron_from_samples
from relu_gating.search.result import NeuronResult
from relu_gating.search.objectives import cone_constraints, neuron_value

__all__ = ['NeuronResult', 'best_neuron', 'best_neuron_from_samples', 'neuron_value', 'cone_constraints', 'BaselineResult', 'random_search', 'local_search']
