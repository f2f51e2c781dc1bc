"""The result of a cone eigenvalue solve: certified bounds and a witness."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Status", "ConeEigResult"]


class Status(enum.Enum):
    """How a problem was settled.

    EXACT: ``upper - lower`` within the method's tolerance, witness ``x`` given.
    BOUNDED: valid ``lower <= optimum <= upper`` with a gap.
    INFEASIBLE: the cone holds no ``x`` with ``B x != 0``.
    UNBOUNDED: the supremum is ``+inf`` (a ray in the cone with ``B d = 0``,
    ``A d != 0`` is in the certificate).
    FAILED: no bound could be established (``upper = inf``).
    """

    EXACT = "exact"
    BOUNDED = "bounded"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    FAILED = "failed"


@dataclass(frozen=True)
class ConeEigResult:
    """Bounds on ``sup {x^T A x / x^T B x : G x >= 0, B x != 0}``.

    Attributes
    ----------
    lower : float
        The quotient recomputed with numpy at the witness ``x`` (``-inf`` if
        there is none; ``+inf`` for UNBOUNDED).
    upper : float
        A rigorous upper bound (``+inf`` if none was found).
    x : ndarray, shape (m,) or None
        Witness: ``G x >= 0`` up to the implicit equalities of the cone
        (rows that vanish on the whole cone hold to rounding), ``B x != 0``.
    status : Status
    method : str
        The method that produced the result (``"auto"`` names its parts in
        ``certificate["steps"]``).
    seconds : float
        Wall time of the solve.
    certificate : dict
        What the bound rests on (face row sets, multipliers, LPs, failures).
    message : str
    """

    lower: float
    upper: float
    x: np.ndarray | None
    status: Status
    method: str
    seconds: float = 0.0
    certificate: dict[str, Any] = field(default_factory=dict, repr=False)
    message: str = ""

    @property
    def remarks(self) -> tuple[str, ...]:
        """The shared name of the remarks (:attr:`message`, as a tuple, empty if none)."""
        return (self.message,) if self.message else ()

    @property
    def timings(self) -> dict[str, float]:
        """The shared name of the timings: ``{"total": seconds}``."""
        return {"total": float(self.seconds)}

    def gap(self) -> float:
        """``upper - lower`` (``inf`` without a witness, 0 when both are infinite)."""
        if self.status in (Status.INFEASIBLE, Status.UNBOUNDED):
            return 0.0
        return float(self.upper - self.lower) if np.isfinite(self.lower) else float("inf")

    def is_exact(self, tol: float = 1e-9) -> bool:
        """True when the gap is at most ``tol * max(|upper|, |lower|, value_scale)``
        (``certificate["value_scale"] = max|A| / max|B|``, else 1), or the status settles it."""
        if self.status in (Status.INFEASIBLE, Status.UNBOUNDED):
            return True
        return bool(np.isfinite(self.upper) and self.gap() <= tol * self._scale())

    def _scale(self) -> float:
        s = float(self.certificate.get("value_scale", 1.0)) if isinstance(self.certificate, dict) else 1.0
        vals = [abs(v) for v in (self.upper, self.lower) if np.isfinite(v)]
        return max(vals + [s])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: arrays become lists, the status its value, infinities strings."""

        def conv(v: Any) -> Any:
            if isinstance(v, np.ndarray):
                return conv(v.tolist())
            if isinstance(v, (list, tuple)):
                return [conv(u) for u in v]
            if isinstance(v, dict):
                return {str(k): conv(u) for k, u in v.items()}
            if isinstance(v, (np.floating, float)):
                f = float(v)
                return f if np.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
            if isinstance(v, np.integer):
                return int(v)
            if isinstance(v, np.bool_):
                return bool(v)
            return v

        return {"lower": conv(self.lower), "upper": conv(self.upper), "x": conv(self.x),
                "status": self.status.value, "method": self.method, "seconds": self.seconds,
                "certificate": conv(self.certificate), "message": self.message}

    def verify(self, problem: Any, tol: float = 1e-9) -> bool:
        """Re-check the witness against ``problem``: feasible and ``lower`` its quotient.

        Rows of ``G`` may be violated by at most ``tol`` (relative to the row
        norm and ``||x||``), which only matters on implicit equalities.
        """
        if self.x is None:
            return not np.isfinite(self.lower) or self.status == Status.UNBOUNDED
        q = problem.quotient(self.x)
        return bool(problem.violation(self.x) <= tol and np.isfinite(q)
                    and abs(q - self.lower) <= tol * max(abs(q), self._scale())
                    and self.lower <= self.upper + tol * self._scale())
