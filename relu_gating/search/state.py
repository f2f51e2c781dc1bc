"""Mergeable partial results of the certified search (private).

The search over patterns is split into independent pieces (bounds for a chunk
of patterns, exact solves of a batch of patterns).  Each piece returns a
:class:`PatternOutcome`; :class:`SearchState` absorbs outcomes in any order,
so the same code runs in-process, on local processes or on a Dask cluster, and
a state saved to disk resumes an interrupted run without losing work.

Checkpoints are refused when they belong to another query and trusted only
when signed by this user's key; see :meth:`SearchState.load` for the rule.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relu_gating._runtime.files import atomic_write, check_writable
from relu_gating.certificate import Settlement
from relu_gating.errors import CheckpointError
from relu_gating.search._signing import KEY_ENV, authentic, checkpoint_key_path, sign_arrays, signed

__all__ = ["UNSETTLED", "BOUND", "EXACT", "PRUNED", "PatternOutcome", "SearchState", "fingerprint",
           "check_checkpoint_path", "checkpoint_key_path", "KEY_ENV", "sign_arrays"]

#: Settlement codes of a pattern as plain ints (stored as int8), from the certificate format's enum.
UNSETTLED, BOUND, EXACT, PRUNED = (int(s) for s in Settlement)


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
    evidence : dict
        Pattern index -> ``(rows, N)``: dual multipliers on the facet rows of
        an exactly solved pattern, the evidence of its bound.
    """

    index: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    thetas: np.ndarray
    status: np.ndarray
    method: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    evidence: dict = field(default_factory=dict)


@dataclass
class SearchState:
    """Everything the search knows so far; merge outcomes with :meth:`absorb`."""

    upper: np.ndarray
    lower: np.ndarray
    status: np.ndarray
    methods: dict[int, str] = field(default_factory=dict)
    evidence: dict[int, tuple] = field(default_factory=dict)
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
        if any(out.method):  # mostly all empty: skip the per-pattern loop
            for i, mth in zip(idx.tolist(), out.method):
                if mth:
                    self.methods[i] = mth
        self.notes.extend(out.notes)
        self.evidence.update(out.evidence)
        vals = np.where(np.isnan(out.lower), -np.inf, out.lower)
        j = int(np.argmax(vals))
        if vals[j] > self.best_value:
            self.best_value = float(vals[j])
            self.best_theta = np.array(out.thetas[j], dtype=float)
            self.best_index = int(idx[j])

    # -- checkpoints -------------------------------------------------------
    def save(self, path: str | os.PathLike, key: str) -> None:
        """Write the state atomically (temporary file + rename), signed with the local key.

        Refuses (:class:`~relu_gating.errors.CheckpointError`) to overwrite a
        file that is not a checkpoint of this query.
        """
        path = os.fspath(path)
        if os.path.exists(path):
            _check_belongs(_read_checkpoint(path, ("key", "upper")), path, key, self.upper.size)
        arrays = signed(self._arrays(key))
        atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)  # type: ignore[arg-type]

    def _arrays(self, key: str) -> dict[str, np.ndarray]:
        m_idx = np.array(sorted(self.methods), dtype=np.int64)
        return {
            "format": np.array(_FORMAT),
            "key": np.array(key),
            "upper": self.upper,
            "lower": self.lower,
            "status": self.status,
            "method_index": m_idx,
            "method_name": np.array([self.methods[i] for i in m_idx.tolist()], dtype=str),
            "best_index": np.array(self.best_index, dtype=np.int64),
            "best_theta": self.best_theta if self.best_theta is not None else np.zeros(0),
            "notes": np.array(self.notes, dtype=str),
            **evidence_arrays(self.evidence),
        }

    @classmethod
    def load(cls, path: str | os.PathLike, key: str, n_patterns: int, *, obj: Any = None,
             masks: Any = None) -> "SearchState | None":
        """Resume from a checkpoint of the same query (None if ``path`` does not exist yet).

        Rule (what a file can and cannot make the search believe):

        * A file that is unreadable, not a checkpoint, or written for another
          query (another fingerprint of ``Phi``, ``U_K``, features and objective,
          or another pattern count) is refused with
          :class:`~relu_gating.errors.CheckpointError` and left untouched.
        * ``best_value`` is not stored.  Given ``obj`` (the search always
          passes it) it is recomputed from ``best_theta`` as ``N_K`` / ``G_H``
          of ``relu(Phi theta)``, and ``theta`` must lie in the closed cone of
          its pattern (``masks`` given); without ``obj`` it is the signed
          ``lower`` of that pattern.
        * Bounds and settlements (the expensive exact solves included) cannot be
          re-checked without redoing them, so they are reused only when the
          file carries a valid HMAC-SHA256 tag under this user's secret key
          (:func:`checkpoint_key_path`, created on first save, mode 0600) over
          every stored array, the file format and the package version: i.e.
          only a file this user's relu-gating wrote, unmodified.  Any other
          file (edited, copied from another machine or user, older version,
          key missing) resumes as a fresh search whose only inheritance is its
          best neuron, re-evaluated as above: every bound is recomputed and
          every settlement redone, so the file cannot lower a bound or raise
          the value that certification compares.
        """
        path = os.fspath(path)
        if not os.path.exists(path):
            check_writable(path, "checkpoint")
            return None
        z = _read_checkpoint(path)
        _check_belongs(z, path, key, n_patterns)
        if not _authentic(z):
            why = "is not signed by this user's key (modified, copied, or from another version)"
        else:
            st = cls._from_arrays(z)
            if obj is None or st._rederive_best(obj, masks):
                return st
            why = "has a best neuron that does not re-evaluate"
        st = cls.empty(n_patterns)
        st.notes.append(f"checkpoint {path} {why}: its bounds and settlements were recomputed, only its best "
                        "neuron was reused, re-evaluated")
        if obj is not None and z["best_theta"].size:
            st.best_theta = np.array(z["best_theta"], dtype=float)
            st.best_index = int(z.get("best_index", -1))
            if not st._rederive_best(obj, masks):
                st.best_theta, st.best_index = None, -1
        return st

    @classmethod
    def _from_arrays(cls, z: dict) -> "SearchState":
        """The state exactly as saved (authenticated files only)."""
        st = cls(upper=z["upper"].astype(float), lower=z["lower"].astype(float), status=z["status"].astype(np.int8))
        st.methods = dict(zip(z["method_index"].tolist(), z["method_name"].tolist()))
        st.best_index = int(z["best_index"])
        st.best_theta = np.array(z["best_theta"], dtype=float) if z["best_theta"].size else None
        if st.best_theta is not None:
            st.best_value = float(st.lower[st.best_index])
        st.notes = z["notes"].tolist()
        st.evidence = evidence_from_arrays(z)
        return st

    def _rederive_best(self, obj: Any, masks: Any) -> bool:
        """Recompute ``best_value`` from ``best_theta``; False if it is excluded or outside its cone."""
        from relu_gating.search.objectives import neuron_values

        if self.best_theta is None:
            self.best_value = -np.inf
            return True
        theta = self.best_theta
        if theta.shape != (obj.Phi.shape[1],) or not np.all(np.isfinite(theta)):
            return False
        if not 0 <= self.best_index < self.upper.size:
            return False
        value = float(neuron_values(obj, theta[None, :])[0])
        if np.isnan(value):
            return False
        if masks is not None:
            z = obj.Phi @ theta
            eps = 1e-9 * (np.abs(z).max() + 1e-300)
            mask = masks[self.best_index]
            if np.any(mask & (z < -eps)) or np.any(~mask & (z > eps)):
                return False
        self.best_value = value
        self.lower[self.best_index] = value
        return True


#: Checkpoint layout version (part of the signed data).
_FORMAT = "relu-gating checkpoint 2"

_REQUIRED = ("key", "upper", "lower", "status", "method_index", "method_name", "best_theta", "notes")


def evidence_arrays(evidence: dict) -> dict[str, np.ndarray]:
    """Dual evidence ``{index: (rows, N)}`` as flat arrays (offsets into concatenations)."""
    idx = sorted(evidence)
    sizes = np.array([evidence[i][0].size for i in idx], dtype=np.int64)
    return {
        "evidence_index": np.array(idx, dtype=np.int64),
        "evidence_offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        "evidence_rows": np.concatenate([evidence[i][0] for i in idx] or [np.zeros(0)]).astype(np.int64),
        "evidence_N": np.concatenate([evidence[i][1].ravel() for i in idx] or [np.zeros(0)]).astype(float),
    }


def evidence_from_arrays(z: dict) -> dict:
    """Inverse of :func:`evidence_arrays` (older checkpoints without evidence: empty)."""
    if "evidence_index" not in z:
        return {}
    off, rows, flat = z["evidence_offsets"], z["evidence_rows"], z["evidence_N"]
    out, pos = {}, 0
    for k, i in enumerate(z["evidence_index"].tolist()):
        r = rows[off[k]:off[k + 1]].astype(np.int64)
        p = r.size
        out[int(i)] = (r, flat[pos:pos + p * p].reshape(p, p).astype(float))
        pos += p * p
    return out


def _authentic(z: dict) -> bool:
    return "format" in z and str(z["format"]) == _FORMAT and authentic(z)


def _read_checkpoint(path: str, names: tuple[str, ...] = _REQUIRED, what: str = "checkpoint") -> dict[str, np.ndarray]:
    """The arrays of a checkpoint file (all, or only ``names``); CheckpointError if unreadable."""
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            missing = [k for k in names if k not in files]
            if missing and "format" in files and str(z["format"]).startswith("relu-gating stream"):
                raise CheckpointError(f"{what} {path}: written by a streamed run (memory=): resume it with "
                                      "memory= (--memory), or pass another checkpoint path; it was left untouched")
            if missing:
                raise CheckpointError(f"{what} {path}: not a relu-gating checkpoint (no {missing[0]!r} "
                                      "array); it was left untouched: pass another checkpoint path")
            wanted = files if names is _REQUIRED else names
            return {k: z[k] for k in wanted}
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile, zlib, numpy and OS errors alike
        first = (str(exc).splitlines() or [""])[0][:100]
        raise CheckpointError(f"{what} {path}: unreadable, truncated or not a checkpoint "
                              f"({type(exc).__name__}: {first}); it was left untouched: delete it to start over "
                              "or pass another checkpoint path") from None


def _check_belongs(z: dict, path: str, key: str, n_patterns: int) -> None:
    """CheckpointError unless the checkpoint ``z`` was written for this query."""
    n_file = int(np.asarray(z["upper"]).size)
    if n_file != n_patterns:
        raise CheckpointError(f"checkpoint {path} holds {n_file} patterns, this query has {n_patterns}: it "
                              "belongs to another input; it was left untouched: delete it or pass another path")
    stored = str(z["key"])
    if stored != key:
        raise CheckpointError(f"checkpoint {path} belongs to another query (fingerprint {stored[:12]}, this one "
                              f"{key[:12]}: another Phi, U_K or K, features or objective); it was left untouched: "
                              "delete it or pass another path")


#: Manifest layout version of a streamed run's checkpoint (part of the signed data).
STREAM_FORMAT = "relu-gating stream checkpoint 1"
_MANIFEST = ("format", "key", "parts", "chunk_size")


def check_manifest(path: str, what: str = "checkpoint") -> None:
    """CheckpointError (the file left untouched) unless ``path`` reads as a streamed run's manifest."""
    _read_checkpoint(path, ("key",), what)  # unreadable or not a checkpoint at all
    with np.load(path, allow_pickle=False) as f:
        fmt = str(f["format"]) if "format" in f.files else ""
        missing = [k for k in _MANIFEST if k not in f.files]
    if fmt != STREAM_FORMAT or missing:
        raise CheckpointError(f"{what} {path}: not written by a streamed run (memory=): resume it without "
                              "memory= (--memory), or pass another checkpoint path; it was left untouched")


def check_checkpoint_path(path: str | os.PathLike, what: str = "checkpoint", streamed: bool = False) -> None:
    """Before a run: ``path`` must be writable and, if it exists, a readable checkpoint.

    Raises :class:`~relu_gating.errors.InputError` (a
    :class:`~relu_gating.errors.CheckpointError` for an unreadable file)
    naming ``what`` (e.g. ``"--checkpoint"``).
    """
    path = check_writable(path, what)
    if os.path.exists(path) and streamed:
        check_manifest(path, what)
    elif os.path.exists(path):
        _read_checkpoint(path, ("key", "upper"), what)
