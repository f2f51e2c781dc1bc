"""A plain BLAS thread limit for a block (private): ``relu_gating.verify`` runs its float work under it.

threadpoolctl (a dependency) is imported on the first call.  The search's own limits are
:mod:`relu_gating._runtime.threads`; the variables set before numpy loads, :mod:`.blas_env`.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["VERIFY_THREADS", "limited_blas"]

#: BLAS threads of a verify (``relu_gating.verify``, ``relu-gating verify``): its products are small
#: (``r x r`` pencils, ``n x (d + 1)`` blocks), where a second thread gains little and loses 3-7x when
#: the other core is busy (issue 39: a verify under load with two BLAS threads).
VERIFY_THREADS = 1


@contextlib.contextmanager
def limited_blas(threads: int | None) -> Iterator[None]:
    """BLAS (every library loaded now) set to ``threads`` threads inside the block, restored after;
    ``None``, or no BLAS library found, or every one at ``threads`` or fewer already: left as it is.
    The pool is process-wide: the limit also holds for other threads while the block runs."""
    limiter = None
    if threads is not None:
        try:
            from threadpoolctl import ThreadpoolController

            ctl = ThreadpoolController()
            libs = ctl.select(user_api="blas").lib_controllers
            if any(lib.num_threads > int(threads) for lib in libs):
                limiter = ctl.limit(limits=max(1, int(threads)), user_api="blas")
        except Exception:  # noqa: BLE001 - a thread limit is an optimisation: never fail the work over it
            limiter = None
    try:
        yield
    finally:
        if limiter is not None:
            limiter.restore_original_limits()
