"""Mergeable partial results of the certified search (private).

The search over patterns is split into independent pieces (bounds for a chunk
of patterns, exact solves of a batch of patterns).  Each piece returns a
:class:`PatternOutcome`; :class:`SearchState` absorbs outcomes in any order,
so the same code runs in-process, on local processes or on a Dask cluster, and
a state saved to disk resumes an interrupted run without losing work.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["UNSETTLED", "BOUND", "EXACT", "PRUNED", "SETTLEMENT_CODES", "PatternOutcome", "SearchState", "fingerprint"]

#: Settlement codes of a pattern (stored as int8; letters in the certificate).
UNSETTLED, BOUND, EXACT, PRUNED = 0, 1, 2, 3
SETTLEMENT_CODES = {UNSETTLED: "U", BOUND: "B", EXACT: "E", PRUNED: "P"}


def fingerprint(*arrays: np.ndarray | None, extra: str = "") -> str:
    """SHA-256 of the float64 C-ordered bytes (and shapes) of the inputs."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"none")
            continue
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    h.update(extra.encode())
    return h.hexdigest()


@dataclass(frozen=True)
class PatternOutcome:
    """What a piece of work learned about some patterns.

    Attributes
    ----------
    index : ndarray of int, shape (k,)
        Pattern indices in the enumeration order.
    upper : ndarray, shape (k,)
        Upper bound on the objective over each pattern's cone.
    lower : ndarray, shape (k,)
        Best objective value found in each cone (``nan`` if none).
    thetas : ndarray, shape (k, m)
        Neurons attaining ``lower``.
    status : ndarray of int8, shape (k,)
        Settlement code after this piece (``EXACT``, ``PRUNED`` or
        ``UNSETTLED`` for a bound only).
    method : tuple of str
        Per pattern, what settled it (e.g. ``"leverage"``, ``"spectral"``,
        ``"faces"``), for the certificate.
    """

    index: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    thetas: np.ndarray
    status: np.ndarray
    method: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class SearchState:
    """Everything the search knows so far; merge outcomes with :meth:`absorb`."""

    upper: np.ndarray
    lower: np.ndarray
    status: np.ndarray
    methods: dict[int, str] = field(default_factory=dict)
    best_value: float = -np.inf
    best_theta: np.ndarray | None = None
    best_index: int = -1
    notes: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls, n_patterns: int) -> "SearchState":
        return cls(
            upper=np.full(n_patterns, np.inf),
            lower=np.full(n_patterns, np.nan),
            status=np.zeros(n_patterns, dtype=np.int8),
        )

    def absorb(self, out: PatternOutcome) -> None:
        """Merge one outcome (bounds only ever tighten, values only improve)."""
        idx = out.index
        if idx.size == 0:
            return
        self.upper[idx] = np.minimum(self.upper[idx], out.upper)
        old = self.lower[idx]
        better = np.isnan(old) | (out.lower > old)
        self.lower[idx] = np.where(better & ~np.isnan(out.lower), out.lower, old)
        self.status[idx] = np.maximum(self.status[idx], out.status)
        for i, mth in zip(idx.tolist(), out.method):
            if mth:
                self.methods[i] = mth
        self.notes.extend(out.notes)
        vals = np.where(np.isnan(out.lower), -np.inf, out.lower)
        j = int(np.argmax(vals))
        if vals[j] > self.best_value:
            self.best_value = float(vals[j])
            self.best_theta = np.array(out.thetas[j], dtype=float)
            self.best_index = int(idx[j])

    def open_patterns(self, alpha: float, tol: float) -> np.ndarray:
        """Indices still able to beat ``best / alpha``, largest bound first."""
        threshold = self.best_value / alpha + tol if np.isfinite(self.best_value) else -np.inf
        cand = np.flatnonzero((self.status == UNSETTLED) & (self.upper > threshold))
        return cand[np.argsort(-self.upper[cand], kind="stable")]

    # -- checkpoints -------------------------------------------------------
    def save(self, path: str | os.PathLike, key: str) -> None:
        """Write the state atomically (temporary file + rename)."""
        path = os.fspath(path)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=d)
        os.close(fd)
        m_idx = np.array(sorted(self.methods), dtype=np.int64)
        np.savez(
            tmp,
            key=np.array(key),
            upper=self.upper,
            lower=self.lower,
            status=self.status,
            method_index=m_idx,
            method_name=np.array([self.methods[i] for i in m_idx.tolist()], dtype=str),
            best=np.array([self.best_value, float(self.best_index)]),
            best_theta=self.best_theta if self.best_theta is not None else np.zeros(0),
            notes=np.array(self.notes, dtype=str),
        )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike, key: str, n_patterns: int) -> "SearchState | None":
        """Load a checkpoint if it exists and belongs to the same query."""
        path = os.fspath(path)
        if not os.path.exists(path):
            return None
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != key or z["upper"].shape != (n_patterns,):
                return None
            st = cls(upper=z["upper"].copy(), lower=z["lower"].copy(), status=z["status"].copy())
            st.methods = dict(zip(z["method_index"].tolist(), z["method_name"].tolist()))
            st.best_value, bi = float(z["best"][0]), int(z["best"][1])
            st.best_index = bi
            st.best_theta = z["best_theta"].copy() if z["best_theta"].size else None
            st.notes = z["notes"].tolist()
        return st
