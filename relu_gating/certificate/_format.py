"""The certificate's JSON form (version 3): writing (private; the checker reads it, with its own reader).

A certificate states which problem it answers (``problem``: sizes, objective,
features, input hashes), the claim (``theta``, ``value``, ``upper_bound``,
``alpha``, ``certified``), every realized pattern with its strict witness,
its claimed bound and settlement, and the evidence of the bounds that the
verifier cannot recompute cheaply (``evidence``: dual multipliers of
exactly solved patterns).  It holds no tolerance, rank or other quantity
that decides what is checked: the verifier derives those itself.
The layout is documented in ``FORMAT.md`` beside this module.
"""

from __future__ import annotations

import base64
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.certificate._codes import FORMAT, SETTLEMENT_LETTERS
from relu_gating.certificate._codes import mask_str as _mask_str

__all__ = ["FORMAT", "TREE_KIND", "result_to_dict", "tree_to_dict", "multipliers_json", "packed_multipliers"]

#: The ``kind`` of a tree certificate (a pattern certificate has none).
TREE_KIND = "tree"


def _sha(a: Any) -> str | None:
    from relu_gating.checker import array_sha256

    return None if a is None else array_sha256(a)


def result_to_dict(res: Any) -> dict:
    """JSON-ready certificate of a :class:`~relu_gating.search.NeuronResult`."""
    if getattr(res, "tree", None) is not None:  # branch and bound: the tree certificate
        return tree_to_dict(res)
    n = res.pattern.size
    packed = np.asarray(res.packed) if hasattr(res, "packed") else np.packbits(res.masks, axis=1)
    return {
        "format": FORMAT,
        "problem": {"n": int(n), "m": int(res.theta.size), "K": int(res.K), "objective": res.objective,
                    "features": res.features, "features_sha256": getattr(res, "features_sha256", None)},
        "value": float(res.value),
        "upper_bound": float(res.upper_bound),
        "alpha": float(res.alpha),
        "certified": bool(res.certified),
        "theta": [float(t) for t in res.theta],
        "pattern": _mask_str(res.pattern),
        "n_patterns": int(res.n_patterns),
        "settled": {"exact": int(res.n_exact), "bound": int(res.n_bound), "pruned": int(res.n_pruned)},
        "seconds": {k: round(float(v), 6) for k, v in res.seconds.items()},
        "notes": list(res.notes),
        "patterns": {
            "masks": [row.tobytes().hex() for row in packed],
            "witnesses": res.witnesses.tolist(),
            "exact_witnesses": {str(k): [str(int(x)) for x in v] for k, v in sorted(res.exact_witnesses.items())},
            "bounds": [float(b) for b in res.bounds],
            "settlement": "".join(SETTLEMENT_LETTERS[int(s)] for s in res.settlement),
            "methods": {str(k): v for k, v in sorted(res.methods.items())},
        },
        "evidence": {str(k): {"rows": [int(i) for i in rows], "N": multipliers_json(N)}
                     for k, (rows, N) in sorted(res.evidence.items())},
    }


def multipliers_json(N: Any) -> list:
    """Multipliers ``N`` as JSON: numbers, and ``"p/q"`` strings for exact rationals that are not
    floats (evidence of :mod:`relu_gating.search._exact.kernel_evidence`)."""
    N = np.asarray(N)
    if N.dtype != object:
        return N.astype(float).tolist()
    return [[float(v) if Fraction(float(v)) == v else f"{Fraction(v).numerator}/{Fraction(v).denominator}"
             for v in row] for row in N.tolist()]


def packed_multipliers(N: Any) -> dict:
    """A ``"d"`` leaf's sparse multipliers ``{"p": p, "entries": [[k, l, v], ...]}`` (a list or an array, as
    the search keeps them) in the packed form of ``FORMAT.md``: ``{"p": p, "kl": base64, "v": base64}``, the
    indices as little-endian uint32 ``k0 l0 k1 l1 ...`` and the values as little-endian float64 (the same
    numbers, bit for bit: a third of the characters of ``[k, l, v]`` lists, read without a JSON number)."""
    p, E = int(N["p"]), np.asarray(N["entries"], dtype=float).reshape(-1, 3)
    kl = E[:, :2]
    if kl.size and not (np.all(kl % 1 == 0) and kl.min() >= 0 and kl.max() < min(p, 2**32)):
        raise ValueError("sparse multipliers: indices must be integers in [0, p)")
    return {"p": p, "kl": base64.b64encode(kl.astype("<u4").tobytes()).decode("ascii"),
            "v": base64.b64encode(np.ascontiguousarray(E[:, 2], dtype="<f8").tobytes()).decode("ascii")}


def tree_to_dict(res: Any) -> dict:
    """JSON-ready tree certificate of a branch-and-bound :class:`~relu_gating.search.NeuronResult`."""
    return {
        "format": FORMAT, "kind": TREE_KIND,
        "problem": {"n": int(res.pattern.size), "m": int(res.theta.size), "K": int(res.K), "objective": res.objective,
                    "features": res.features, "features_sha256": res.features_sha256},
        "value": float(res.value), "upper_bound": float(res.upper_bound), "alpha": float(res.alpha),
        "certified": bool(res.certified), "theta": [float(t) for t in res.theta],
        "pattern": "".join("1" if b else "0" for b in res.pattern), "n_nodes": int(res.n_nodes),
        "n_patterns": int(res.n_patterns),
        "settled": {"exact": int(res.n_exact), "bound": int(res.n_bound), "pruned": int(res.n_pruned)},
        "seconds": {k: round(float(v), 6) for k, v in res.seconds.items()}, "notes": list(res.notes),
        "tree": {"nodes": res.tree["nodes"], "stats": {k: (v if isinstance(v, str) else float(v))
                                                       for k, v in res.tree.get("stats", {}).items()}},
    }
