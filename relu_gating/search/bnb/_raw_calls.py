"""scipy's NNLS and LAPACK's ``gesv`` called without their wrappers' argument checks (private).

The forced-rows pass (:class:`relu_gating.search.bnb._cone_nnls.DecidedCone`) asks tens of thousands of
small NNLS (rank 6 by 12-40 columns) and 6 x 6 inverses a minute; on breast cancer PCA 5 scipy's
``nnls`` spends 40% of its 15 us in its Python argument checks (``asarray_chkfinite``, the deprecation
decorator) and ``np.linalg.inv`` 70% of its 6.8 us in numpy's.  The callers' arrays are finite unit rows
by construction, so these calls skip the checks and return the same floats: the compiled routine
``scipy.optimize.nnls`` calls (``3 n`` iterations, as it does; bitwise the same answer) and the ``gesv``
against the identity that ``np.linalg.inv`` solves (bitwise equal on 3,000 random 6 x 6 here; a LAPACK
built otherwise may round otherwise, and nothing depends on it: a kept simplex's claims are checked as any
other).  Where scipy has no such routine (other versions), the public NNLS is used.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgesv as _dgesv

__all__ = ["nnls", "inv"]


def _compiled_nnls():
    """scipy's compiled NNLS (scipy >= 1.15) when it answers a small problem as ``scipy.optimize.nnls`` does,
    else None (another scipy: the public call is used)."""
    try:
        from scipy.optimize import nnls as public
        from scipy.optimize._slsqplib import nnls as compiled

        A, b = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), np.array([1.0, -0.5])
        x, rnorm, _ = compiled(A, b, 9)
        x0, r0 = public(A, b)
        return compiled if np.array_equal(x, x0) and rnorm == r0 else None
    except (ImportError, TypeError, ValueError):  # pragma: no cover - another scipy: no module, another signature
        return None


_nnls_compiled = _compiled_nnls()


def nnls(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """``scipy.optimize.nnls(A, b)`` for a finite float ``A`` (m, n) and ``b`` (m,): ``(x, residual)``;
    ``RuntimeError`` when the iterations run out, as there."""
    if _nnls_compiled is None:  # pragma: no cover
        from scipy.optimize import nnls as public

        return public(A, b)
    x, rnorm, info = _nnls_compiled(np.ascontiguousarray(A, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                    3 * A.shape[1])
    if info == 3:
        raise RuntimeError("Maximum number of iterations reached.")
    return x, rnorm


_EYE: dict[int, np.ndarray] = {}  # the identities gesv solves against, one per size (gesv copies its b)


def inv(A: np.ndarray) -> np.ndarray:
    """``np.linalg.inv(A)`` of a square float ``A`` (the same ``gesv`` with the identity); ``LinAlgError``
    when ``A`` is exactly singular, as there."""
    k = A.shape[0]
    eye = _EYE.get(k)
    if eye is None:
        eye = _EYE[k] = np.eye(k)
        eye.flags.writeable = False  # shared by every call: gesv (overwrite_b=0) only reads it
    _, _, X, info = _dgesv(A, eye)
    if info != 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return X
