"""Constants shared by the drivers of the search (in memory, streamed, branch and bound) (private)."""

__all__ = ["DEFAULT_TOL", "MAX_TOL", "NEAR_TIE_TOL", "PARALLEL_BATCHES", "CHECKPOINT_EVERY", "EXACT_CANDIDATES"]

#: Default absolute tolerance of the certification ``value >= alpha * bound - tol`` (values lie in [0, 1]).
DEFAULT_TOL = 1e-9
#: Options ``tol`` at or above this are refused (a certificate that loose certifies nothing).
MAX_TOL = 1e-3
#: Another pattern reaching the optimum within this is reported as a near-tie.
NEAR_TIE_TOL = 1e-9
#: Exact-solve tasks in flight per round when an executor is given.
PARALLEL_BATCHES = 4
#: Seconds between checkpoint writes.
CHECKPOINT_EVERY = 10.0
#: Open patterns the in-memory exact phase holds as candidates (an index and a bound each: 16 MB);
#: the patterns are re-scanned only if it solves this many without closing the rest.
EXACT_CANDIDATES = 1 << 20
