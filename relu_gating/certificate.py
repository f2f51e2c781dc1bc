"""Certificates of the best-neuron search: JSON form and independent re-check.

A certificate (SPEC section 5) holds the neuron ``theta``, its value, the
upper bound over all neurons, ``alpha``, the pattern, and for *every* realized
pattern a strict witness, an upper bound and how it was settled.
:func:`verify` re-checks all of it from the inputs alone:

1. the objective matches the features (whether the inputs are bit-identical to
   the search's, by SHA-256, is reported but not required: everything below is
   recomputed from the inputs given);
2. ``value`` equals the objective of ``relu(Phi theta)`` recomputed here, and
   the stated pattern agrees with the signs of ``Phi theta``;
3. the pattern list is complete: every witness strictly realizes its pattern,
   the patterns are distinct and their number equals an exact chamber count
   (:func:`relu_gating.patterns.check_completeness`);
4. every pattern's bound holds: a bound-settled pattern's bound equals the
   cheap bound recomputed here; an exactly settled pattern is re-solved with
   the exact ``faces`` method and its bound must not be below that maximum;
5. ``upper_bound`` is at least every pattern bound and, if ``certified`` is
   claimed, ``value >= alpha * upper_bound - tol``.

It runs in a fresh process on the saved JSON: ``relu-gating verify CERT INPUT``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._search_state import BOUND, EXACT, PRUNED, SETTLEMENT_CODES, UNSETTLED, fingerprint
from .errors import CertificateError

__all__ = ["VerifyReport", "result_to_dict", "load_certificate", "verify", "FORMAT"]

FORMAT = "relu-gating-certificate/1"
_LETTER_TO_CODE = {v: k for k, v in SETTLEMENT_CODES.items()}


def _mask_to_str(mask: np.ndarray) -> str:
    return "".join("1" if b else "0" for b in mask)


def _str_to_mask(s: str, n: int, what: str) -> np.ndarray:
    if len(s) != n or set(s) - {"0", "1"}:
        raise CertificateError(f"{what} must be a 0/1 string of length n = {n}")
    return np.frombuffer(s.encode(), dtype=np.uint8) == ord("1")


def result_to_dict(res: Any) -> dict:
    """JSON-ready dict of a :class:`~relu_gating.search.NeuronResult`."""
    n = res.masks.shape[1] if res.masks.size else res.pattern.size
    packed = np.packbits(res.masks, axis=1)
    return {
        "format": FORMAT,
        "objective": res.objective,
        "value": float(res.value),
        "upper_bound": float(res.upper_bound),
        "alpha": float(res.alpha),
        "certified": bool(res.certified),
        "tol": float(res.tol),
        "theta": [float(t) for t in res.theta],
        "pattern": _mask_to_str(res.pattern),
        "n_patterns": int(res.n_patterns),
        "n": int(n),
        "m": int(res.theta.size),
        "rank": int(res.rank),
        "settled": {"exact": int(res.n_exact), "bound": int(res.n_bound), "pruned": int(res.n_pruned)},
        "seconds": {k: round(float(v), 6) for k, v in res.seconds.items()},
        "fingerprint": res.fingerprint,
        "notes": list(res.notes),
        "bounds_rest_on": {
            "B": "cheap bound: min of the global cap (1 for N_K, s_K(H)^2 for G_H), the Prop 4.1 leverage "
                 "bound ||U_K[A,:]||_2^2 (N_K only) and the top generalized eigenvalue of (A_S, B_S) on the "
                 "row space with a rounding allowance (Prop 4.3; only where B_S is well conditioned)",
            "E": "per-pattern maximum: an attained unconstrained bound (Rem 4.4, method 'spectral') or an exact "
                 "cone-constrained solve (methods of solvers/, e.g. 'auto', 'faces')",
            "P": "pattern holds only h = 0 (all samples inactive): no admissible neuron",
        },
        "patterns": {
            "layout": "masks: hex of numpy.packbits(mask) per pattern (big-endian bit order, n bits)",
            "masks": [row.tobytes().hex() for row in packed],
            "witnesses": res.witnesses.tolist(),
            "exact_witnesses": {str(k): [str(int(x)) for x in v] for k, v in sorted(res.exact_witnesses.items())},
            "bounds": [float(b) for b in res.bounds],
            "settlement": "".join(SETTLEMENT_CODES[int(s)] for s in res.settlement),
            "methods": {str(k): v for k, v in sorted(res.methods.items())},
        },
    }


@dataclass(frozen=True)
class _Cert:
    d: dict
    masks: np.ndarray
    witnesses: np.ndarray
    exact_witnesses: dict
    bounds: np.ndarray
    settlement: np.ndarray
    theta: np.ndarray
    pattern: np.ndarray


def load_certificate(source: Any) -> dict:
    """A certificate dict from a NeuronResult, a dict, a JSON string or a path."""
    if hasattr(source, "to_dict"):
        return source.to_dict()
    if isinstance(source, dict):
        return source
    if isinstance(source, (str, os.PathLike)) and os.path.exists(source):
        with open(source, encoding="utf-8") as fh:
            source = fh.read()
    try:
        d = json.loads(source)
    except (TypeError, ValueError) as exc:
        raise CertificateError(f"certificate is neither a file, a dict nor JSON ({exc})") from exc
    if not isinstance(d, dict):
        raise CertificateError("certificate JSON must be an object")
    return d


def _parse(d: dict) -> _Cert:
    if d.get("format") != FORMAT:
        raise CertificateError(f"certificate format must be {FORMAT!r}, got {d.get('format')!r}")
    try:
        n = int(d["n"])
        p = d["patterns"]
        nbytes = (n + 7) // 8
        raw = np.array([np.frombuffer(bytes.fromhex(h), dtype=np.uint8) for h in p["masks"]]).reshape(-1, nbytes)
        masks = np.unpackbits(raw, axis=1, count=n).astype(bool)
        witnesses = np.asarray(p["witnesses"], dtype=float).reshape(masks.shape[0], -1)
        bounds = np.asarray(p["bounds"], dtype=float)
        settlement = np.array([_LETTER_TO_CODE[c] for c in p["settlement"]], dtype=np.int8)
        exact = {int(k): tuple(int(x) for x in v) for k, v in p.get("exact_witnesses", {}).items()}
        theta = np.asarray(d["theta"], dtype=float)
        pattern = _str_to_mask(d["pattern"], n, "pattern")
        for key in ("value", "upper_bound", "alpha", "tol"):
            float(d[key])
    except CertificateError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {exc}") from exc
    if not (bounds.size == settlement.size == masks.shape[0] == int(d["n_patterns"])):
        raise CertificateError("certificate pattern arrays disagree in length with n_patterns")
    return _Cert(d, masks, witnesses, exact, bounds, settlement, theta, pattern)


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`verify`.

    Attributes
    ----------
    valid : bool
        True iff every check passed.
    reasons : tuple of str
        Why it is invalid (empty when valid).
    checks : dict
        Each check's name mapped to True/False, with figures.
    """

    valid: bool
    reasons: tuple
    checks: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.valid


def verify(certificate: Any, Phi: Any, U_K: Any, features: Any = None, *, method: str = "faces") -> VerifyReport:
    """Re-check a best-neuron certificate from the inputs alone.

    Parameters
    ----------
    certificate : NeuronResult, dict, JSON string or path to a JSON file
    Phi : array_like, shape (n, m)
    U_K : array_like, shape (n, K)
    features : None, "bias" or array_like, shape (n, q)
        The same features as the search used.
    method : str
        Exact per-pattern method used to re-solve exactly settled patterns.

    Returns
    -------
    VerifyReport
        ``valid`` is False, with reasons, when anything was altered.  A
        malformed certificate raises :class:`~relu_gating.errors.CertificateError`.
    """
    from ._pattern_work import chunk_bounds, solve_chunk
    from .objectives import make_objective, neuron_values, resolve_features
    from .patterns import check_completeness

    c = _parse(load_certificate(certificate))
    d = c.d
    reasons: list[str] = []
    checks: dict[str, Any] = {}
    obj = make_objective(Phi, U_K, features, rank=int(d["rank"]) if int(d.get("rank", 0)) > 0 else None)
    n, m = obj.Phi.shape
    tol = float(d["tol"])
    if (int(d["n"]), int(d["m"])) != (n, m) or c.theta.size != m or c.witnesses.shape[1:] != (m,):
        raise CertificateError(f"certificate is for n = {d['n']}, m = {d['m']}, inputs have n = {n}, m = {m}")
    expected_kind = "captured" if resolve_features(features, n) is None else "marginal"

    def check(name: str, ok: bool, why: str, **info: Any) -> None:
        checks[name] = {"ok": bool(ok), **info}
        if not ok:
            reasons.append(why)

    check("objective", d["objective"] == expected_kind,
          f"certificate is for the {d['objective']!r} objective, these features give {expected_kind!r}")
    # Bit-identical inputs are informative only: a U_K rebuilt on another machine may differ in
    # the last bits, and every check below is recomputed from the inputs given here anyway.
    key = fingerprint(obj.Phi, obj.U_K, obj.Q_H, extra=f"{obj.kind}|{c.masks.shape[0]}")
    checks["fingerprint"] = {"ok": True, "identical_inputs": key == d["fingerprint"]}

    value = float(neuron_values(obj, c.theta[None, :])[0])
    check("value", not np.isnan(value) and abs(value - float(d["value"])) <= tol,
          f"value {d['value']!r} differs from the recomputed objective of relu(Phi theta) = {value!r}",
          recomputed=value)
    z = obj.Phi @ c.theta
    scale = np.abs(z).max() + 1e-300
    consistent = np.all(np.where(z > 1e-12 * scale, c.pattern, True) & np.where(z < -1e-12 * scale, ~c.pattern, True))
    check("pattern", bool(consistent), "pattern disagrees with the signs of Phi theta")

    comp = (check_completeness(obj.Phi, c.masks, c.witnesses, exact_witnesses=c.exact_witnesses)
            if c.exact_witnesses else check_completeness(obj.Phi, c.masks, c.witnesses))
    check("completeness", comp.ok, f"pattern set is not a complete list of realized patterns: {comp.reason}",
          method=comp.method, expected=comp.expected, found=comp.found)

    # every pattern's bound
    N = c.masks.shape[0]
    cheap_upper = np.concatenate([np.zeros(0)] + [
        chunk_bounds(obj, np.arange(s, min(s + 8192, N)), c.masks[s:s + 8192], c.witnesses[s:s + 8192], tol).upper
        for s in range(0, N, 8192)])
    bad_bound = []
    is_b = np.isin(c.settlement, (BOUND, UNSETTLED))
    diff = np.abs(c.bounds - cheap_upper)
    wrong = np.flatnonzero(is_b & ~(diff <= tol + 1e-9 * np.abs(cheap_upper)))
    bad_bound.extend(wrong.tolist())
    # exactly settled or pruned patterns whose bound is below the cheap one: re-solve them
    need = np.flatnonzero(np.isin(c.settlement, (EXACT, PRUNED)) & (c.bounds < cheap_upper - tol))
    resolved = solve_chunk(obj, need, c.masks[need], method, c.witnesses[need]) if need.size else None
    if resolved is not None:
        proven = np.where(resolved.status == EXACT, resolved.upper,
                          np.where(resolved.status == PRUNED, 0.0, np.inf))
        bad_bound.extend(need[c.bounds[need] < proven - tol].tolist())
    check("bounds", not bad_bound,
          f"{len(bad_bound)} pattern bound(s) do not hold, e.g. pattern {bad_bound[:5]}",
          re_solved=int(need.size))

    ub = float(d["upper_bound"])
    max_b = float(c.bounds.max(initial=-np.inf))
    check("upper_bound", ub >= max_b - 1e-15 and ub >= float(d["value"]) - tol,
          f"upper_bound {ub!r} is below the largest pattern bound {max_b!r}" if ub < max_b - 1e-15
          else f"upper_bound {ub!r} is below the value {d['value']!r}")
    alpha = float(d["alpha"])
    if not 0 < alpha <= 1:
        check("alpha", False, f"alpha {alpha!r} is not in (0, 1]")
    elif bool(d["certified"]):
        check("alpha", float(d["value"]) >= alpha * ub - tol,
              f"certified is claimed but value {d['value']!r} < alpha * upper_bound = {alpha * ub!r}")
    return VerifyReport(valid=not reasons, reasons=tuple(reasons), checks=checks)
