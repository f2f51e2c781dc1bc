"""Per-strategy options of best_neuron (relu_gating.search.options)."""

import dataclasses

import numpy as np
import pytest

from relu_gating import BranchAndBoundOptions, EnumerateOptions, InputError, best_neuron, enumerate_patterns, verify
from relu_gating.search.options import LEGACY_DEFAULTS


def _instance(n=10, seed=3):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    return Phi, np.linalg.qr(rng.normal(size=(n, 3)))[0]


def test_the_options_of_each_strategy_reach_it_and_give_the_same_answer():
    Phi, U = _instance()
    ref = best_neuron(Phi, U, strategy="enumerate")
    small = best_neuron(Phi, U, options=EnumerateOptions(chunk_size=5, batch_size=2))
    as_dict = best_neuron(Phi, U, strategy="enumerate", options={"chunk_size": 5})
    tree = best_neuron(Phi, U, options=BranchAndBoundOptions(seed=7))
    assert (small.strategy, as_dict.strategy, tree.strategy) == ("enumerate", "enumerate", "branch-and-bound")
    for res in (small, as_dict, tree):
        assert res.certified and res.value == pytest.approx(ref.value, abs=1e-9)
    assert verify(tree, Phi, U, "bias").certified


def test_a_reused_pattern_set_is_an_enumeration_option():
    Phi, U = _instance()
    ps = enumerate_patterns(Phi)
    res = best_neuron(Phi, U, options=EnumerateOptions(patterns=ps))
    assert res.strategy == "enumerate" and res.n_patterns == len(ps)


def test_auto_with_enumeration_options_enumerates():
    """EnumerateOptions under auto: the plan chooses among the enumerations only."""
    Phi, U = _instance()
    assert best_neuron(Phi, U, options=EnumerateOptions()).strategy == "enumerate"


@pytest.mark.parametrize("kwargs, match", [
    (dict(strategy="branch-and-bound", options=EnumerateOptions()), "EnumerateOptions"),
    (dict(strategy="enumerate", options=BranchAndBoundOptions()), "BranchAndBoundOptions"),
    (dict(options={"seed": 1}), "needs strategy"),
    (dict(strategy="enumerate", options={"seed": 1}), "'seed' is not an option"),
    (dict(options=3), "options must be"),
    (dict(options=EnumerateOptions(), chunk_size=5), "not also as keywords"),
])
def test_misplaced_options_are_refused_naming_them(kwargs, match):
    Phi, U = _instance()
    with pytest.raises(InputError, match=match):
        best_neuron(Phi, U, **kwargs)


@pytest.mark.parametrize("field, value", [("seed", -1), ("seed", 1.5), ("seed", True), ("lifted", 1)])
def test_bad_branch_and_bound_options_are_refused(field, value):
    with pytest.raises(InputError, match=field):
        BranchAndBoundOptions(**{field: value})


def test_an_unknown_keyword_is_a_type_error():
    Phi, U = _instance()
    with pytest.raises(TypeError, match="chunksize"):
        best_neuron(Phi, U, chunksize=5)


def test_release_0_3_keywords_still_work_with_a_deprecation_warning():
    Phi, U = _instance()
    with pytest.warns(DeprecationWarning, match=r"options=EnumerateOptions\(chunk_size"):
        old = best_neuron(Phi, U, chunk_size=5)
    new = best_neuron(Phi, U, options=EnumerateOptions(chunk_size=5))
    assert old.value == new.value and old.n_patterns == new.n_patterns


def test_the_old_keywords_are_exactly_the_enumeration_options():
    assert set(LEGACY_DEFAULTS) == {f.name for f in dataclasses.fields(EnumerateOptions)}


def test_the_seed_reaches_the_first_incumbent(monkeypatch):
    import relu_gating.search.baselines as baselines

    seen = []
    real = baselines.random_search

    def spy(*args, **kwargs):
        seen.append(kwargs.get("seed"))
        return real(*args, **kwargs)

    monkeypatch.setattr(baselines, "random_search", spy)
    Phi, U = _instance()
    best_neuron(Phi, U, options=BranchAndBoundOptions(seed=11))
    assert seen == [11]
