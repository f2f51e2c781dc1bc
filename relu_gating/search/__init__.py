"""The certified best-neuron search: per-pattern objectives, bounds and exact solves, global comparison.

Public modules:

* :mod:`.front`: ``best_neuron``, the in-memory enumerated search and the dispatch to the other drivers;
* :mod:`.from_samples`: ``best_neuron_from_samples`` (``Phi`` and ``U_K`` built from samples);
* :mod:`.objectives`: a pattern's pencil in a well-conditioned basis, ``neuron_value``;
* :mod:`.plan`: what a query will cost, before any heavy work;
* :mod:`.result`: :class:`NeuronResult`;
* :mod:`.options`: the per-strategy options (``EnumerateOptions``, ``BranchAndBoundOptions``);
* :mod:`.state`: mergeable partial results and checkpoints, shared by all drivers;
* :mod:`.baselines`: random and local search (uncertified, for comparison);
* :mod:`.bnb`: branch and bound over the arrangement, certified by its tree.

Private machinery, by idea:

* :mod:`._kernels`: the bound kernels (``bound``, ``mirror``, ``stacks``, ``masked``, ``wedge``);
* :mod:`._exact`: the exact phase (``tasks``, ``coords``, ``evidence``, ``polish``, ``pilot``);
* :mod:`._enum`: the one driver of the enumerated search, in memory or streamed (``store``: the
  per-pattern arrays in memory or on disk behind one interface; ``exact``: the exact phase; ``finish``:
  the ending, claims, settlements, near-ties, the result);
* :mod:`._stream`: the search in bounded memory (``parts``, ``run``, ``checkpoint``);
* :mod:`._config` (constants shared by the drivers), :mod:`._signing` (the checkpoint key and
  signature).  Tasks on an executor: :mod:`relu_gating._runtime.executors`.
"""

from __future__ import annotations

from relu_gating.search.baselines import BaselineResult, local_search, random_search
from relu_gating.search.front import best_neuron
from relu_gating.search.from_samples import best_neuron_from_samples
from relu_gating.search.options import BranchAndBoundOptions, EnumerateOptions
from relu_gating.search.result import NeuronResult
from relu_gating.search.objectives import cone_constraints, neuron_value

__all__ = ['NeuronResult', 'EnumerateOptions', 'BranchAndBoundOptions', 'best_neuron', 'best_neuron_from_samples', 'neuron_value', 'cone_constraints', 'BaselineResult', 'random_search', 'local_search']
