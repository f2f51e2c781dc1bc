"""Every tolerance of the checker, named, with its reason (also listed in ``FORMAT.md``).

None of them decides a kernel, an exclusion, a rank or the equality of two
masks: those are decided in exact arithmetic (:mod:`._rational`).  A float
computation here may only *accept* a claim, with a rigorous error bound.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VALUE_TOL", "BOUND_SLACK", "ROUNDING_STEP", "EXCLUDE_RTOL", "PATTERN_RTOL", "FORM_EPS_FACTOR",
           "UK_ORTHONORMAL_TOL", "EXACT_LIMIT", "CHUNK", "MAX_INT", "MAX_NODES", "FARKAS_BATCH", "MAX_MEMBER_BYTES", "EPS"]

EPS = float(np.finfo(float).eps)

#: Absolute tolerance on objective values (all in [0, 1]): the recomputed value must match the
#: claim to this, and *certified* means ``value >= alpha * upper_bound - VALUE_TOL`` (the
#: definition of the claim, not a rounding allowance).
VALUE_TOL = 1e-9
#: A claimed pattern bound may fall short of the bound proven here by at most this: the search
#: rounds its bounds, and an exact proof at ``claim + BOUND_SLACK`` is accepted as proving
#: ``claim + BOUND_SLACK``.
BOUND_SLACK = 1e-7
#: Where floats cannot prove a claim ``u``, exact proofs are tried at ``u``, at
#: ``u + ROUNDING_STEP * max(1, |u|)`` (a claim rounded to nearest, not up, by the search) and at
#: ``u + BOUND_SLACK``; the first that holds is the proven bound.
ROUNDING_STEP = 2.0**-40
#: The objective's own definition: a neuron with ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||`` is
#: excluded.  An exclusion *claim* is decided exactly against this definition.
EXCLUDE_RTOL = 1e-9
#: The claimed ``pattern`` (informative) must agree with the signs of ``Phi theta`` on rows whose
#: ``|phi_i theta|`` exceeds this times ``max |Phi theta|`` (the value is checked separately).
PATTERN_RTOL = 1e-12
#: Rounding allowance of a float product of ``n`` terms and of ``eigvalsh`` on a ``d x d``
#: matrix: ``FORM_EPS_FACTOR * (n + d^2) * eps`` times the magnitudes involved (Higham's
#: ``gamma_n`` and the backward stability of the symmetric eigensolver, with a factor of 8 to spare).
FORM_EPS_FACTOR = 8.0
#: ``U_K`` must be orthonormal to this (the bounds use ``U_K^T U_K <= I``); checked on input.
UK_ORTHONORMAL_TOL = 1e-10
#: At most this many claims are proven in exact arithmetic after their float proof falls short
#: (each costs milliseconds at small ``n``); past it, such a claim counts as unproven.
EXACT_LIMIT = 20_000
#: Patterns per batch of the bound proofs (bounded memory).
CHUNK = 4096
#: Largest integer accepted in a certificate's integer fields (sizes, counts, indices).
MAX_INT = 1 << 62
#: Implied signs of a tree collected before one vectorised float check (bounded memory).
FARKAS_BATCH = 8192
#: Tree certificates with more nodes than this are refused as malformed.
MAX_NODES = 50_000_000
#: Largest ``.npz`` member the checker reads whole (meta and evidence); the per-pattern columns
#: are streamed, and their declared shapes must agree with ``n``, ``m`` and ``n_patterns``.
MAX_MEMBER_BYTES = 1 << 31
