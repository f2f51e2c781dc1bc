"""Result types users can read: a small core with a status, grouped sub-objects, one naming scheme.

``NeuronResult``, ``VariationNorm`` and ``ConeEigResult`` share the names ``lower``, ``upper``,
``remarks`` and ``timings`` (the older names stay); ``NeuronResult.status``, ``.certificate`` and
``.stats`` group what the flat attributes hold.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import relu_gating as rg
import solvers
from relu_gating.layers.variation import variation_norm
from relu_gating.search.result import STOP_REASONS, PatternCertificate, ProblemId, SearchStats, Status, TreeCertificate


@pytest.fixture(scope="module")
def query():
    X = rg.two_moons(30, seed=0)
    basis = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn"), kind="combinatorial"), K=3)
    Phi, U_K = rg.layer_input(X), basis.U_K
    return Phi, U_K, rg.best_neuron(Phi, U_K, features="bias")


def test_status_says_what_the_result_proves(query):
    Phi, U_K, res = query
    assert res.certified and res.alpha == 1 and res.status is Status.OPTIMAL
    half = rg.best_neuron(Phi, U_K, features="bias", alpha=0.5)
    assert half.certified and half.status is Status.CERTIFIED
    assert dataclasses.replace(res, certified=False).status is Status.NOT_CERTIFIED
    assert Status.OPTIMAL == "optimal"  # a str enum: JSON- and comparison-friendly


def test_certificate_and_stats_group_the_flat_attributes(query):
    _, _, res = query
    c, s = res.certificate, res.stats
    assert isinstance(c, PatternCertificate) and isinstance(s, SearchStats) and res.tree is None
    for f in dataclasses.fields(PatternCertificate):
        assert getattr(c, f.name) is getattr(res, f.name), f.name  # the same objects, not copies
    assert len(c) == res.n_patterns == c.packed.shape[0] == c.witnesses.shape[0] == c.settlement.size
    assert (s.strategy, s.n_patterns, s.n_exact, s.n_bound, s.n_pruned, s.n_nodes) == (
        res.strategy, res.n_patterns, res.n_exact, res.n_bound, res.n_pruned, res.n_nodes)
    assert s.n_exact + s.n_bound + s.n_pruned <= s.n_patterns
    assert s.stop == "settled" and s.strategy == "enumerate"


def test_the_core_is_small_and_the_rest_grouped_with_the_old_names_read_only(query):
    """The result's own fields are its core and three groups; release 0.3's flat names read the groups."""
    Phi, U_K, res = query
    assert {f.name for f in dataclasses.fields(res)} == {
        "theta", "value", "upper_bound", "alpha", "certified", "pattern", "seconds", "tol", "notes",
        "certificate", "problem", "stats"}
    p = res.problem
    assert isinstance(p, ProblemId) and dataclasses.is_dataclass(p)
    assert (p.objective, p.K, p.rank, p.features) == ("marginal", U_K.shape[1], np.linalg.matrix_rank(Phi), "bias")
    assert len(p.fingerprint) == 64 and p.features_sha256 is None
    for name in ("objective", "K", "rank", "features", "features_sha256", "fingerprint"):
        assert getattr(res, name) == getattr(p, name), name
        with pytest.raises(AttributeError):
            setattr(res, name, getattr(p, name))  # read-only
    for name in ("strategy", "n_patterns", "n_exact", "n_bound", "n_pruned", "n_nodes"):
        assert getattr(res, name) == getattr(res.stats, name), name
        with pytest.raises(AttributeError):
            setattr(res, name, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.problem = p  # type: ignore[misc]


def test_stop_is_a_field_from_a_closed_set():
    assert STOP_REASONS == ("settled", "time", "interrupted")
    assert SearchStats("enumerate", 1, 1, 0, 0, stop="time").stop == "time"
    with pytest.raises(ValueError, match="stop must be one of"):
        SearchStats("enumerate", 1, 1, 0, 0, stop="stopped by max_seconds")


def test_a_tree_result_holds_its_tree_and_no_pattern_list(query):
    """The certificate is one of two types, each complete: a branch and bound's is its tree; the
    release 0.3 names of the per-pattern arrays still read (empty), and ``tree`` is the tree."""
    Phi, U_K, res = query
    bb = rg.best_neuron(Phi, U_K, features="bias", strategy="branch-and-bound")
    c = bb.certificate
    assert isinstance(c, TreeCertificate) and c.kind == "tree" and bb.tree is c.tree
    assert c.nodes is bb.tree["nodes"] and c.stats["stop"] == bb.stats.stop == "settled"
    assert bb.stats.strategy == "branch-and-bound" and bb.stats.n_nodes > 0 and bb.problem.objective == "marginal"
    assert {f.name for f in dataclasses.fields(c)} == {"tree", "candidates"}  # no pattern fields
    assert c.candidates.shape[1] == Phi.shape[1]  # the search's best neurons (a greedy layer's next starts)
    assert bb.packed.shape == (0, (Phi.shape[0] + 7) // 8) and bb.witnesses.shape == (0, Phi.shape[1])
    assert bb.bounds.size == bb.lowers.size == bb.settlement.size == 0 and bb.methods == bb.evidence == {}
    assert bb.certified and bb.value == pytest.approx(res.value, abs=1e-9)
    assert rg.verify(bb, Phi, U_K, "bias").certified


def _cone_result():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(3, 3))
    return solvers.solve(solvers.ConeEigProblem(L @ L.T, np.eye(3), rng.normal(size=(5, 3))))


def test_one_naming_scheme_across_results(query):
    Phi, _, res = query
    h = np.maximum(Phi @ np.array([1.0, -0.5, 0.2]), 0.0)
    results = [res, variation_norm(h, Phi), _cone_result()]
    for r in results:
        assert r.lower <= r.upper + 1e-9, type(r).__name__
        assert isinstance(r.remarks, tuple) and all(isinstance(x, str) for x in r.remarks)
        assert set(r.timings) >= {"total"} and all(v >= 0 for v in r.timings.values())
    # the shared names are the older ones under another name
    assert (res.lower, res.upper, res.remarks) == (res.value, res.upper_bound, tuple(res.notes))
    assert res.timings["total"] == pytest.approx(res.seconds["total"])
    vn, ce = results[1], results[2]
    assert vn.timings == {"total": vn.seconds} and ce.timings == {"total": ce.seconds}
    assert ce.remarks == ((ce.message,) if ce.message else ())
