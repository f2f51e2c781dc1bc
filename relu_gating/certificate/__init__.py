"""Certificates of the best-neuron search: a versioned JSON format and an independent verifier.

* :func:`result_to_dict` / :func:`load_certificate`: the format (version
  ``relu-gating-certificate/2``, documented in ``FORMAT.md`` beside this package);
* :func:`save_binary` / :func:`read_binary_meta`: the binary ``.npz`` form
  (``relu-gating-certificate-npz/1``), written and verified as a stream;
* :func:`verify`: re-checks a certificate against the problem stated by the
  caller; all checking lives in :mod:`relu_gating.checker` (small, separate,
  its own primitives), to which this delegates.
"""

from relu_gating.certificate._codes import Settlement
from relu_gating.certificate._format import (FORMAT, Certificate, load_certificate, multipliers_json, parse_certificate,
                                             result_to_dict)
from relu_gating.certificate._binary import BINARY_FORMAT, is_binary, read_binary_meta, save_binary
from relu_gating.certificate._verify import BOUND_SLACK, EXCLUDE_RTOL, VALUE_TOL, prove_bounds, verify
from relu_gating.certificate._problem import state_problem
from relu_gating.certificate._proofs import (cap_bound, exact_below, exact_claim, exact_excluded, exact_feature_basis,
                                             exact_gram, exact_parts, exact_pencil, gross_scale, pattern_pencils, pencil_bounds,
                                             support_bounds)


def __getattr__(name: str):
    if name == "VerifyReport":  # the checker's report, loaded on first use
        from relu_gating.checker import VerifyReport

        return VerifyReport
    raise AttributeError(name)


__all__ = ["FORMAT", "Settlement", "Certificate", "load_certificate", "parse_certificate", "result_to_dict", "verify",
           "VerifyReport", "prove_bounds", "VALUE_TOL", "BOUND_SLACK", "EXCLUDE_RTOL", "BINARY_FORMAT", "is_binary",
           "read_binary_meta", "save_binary", "multipliers_json",
           # the search's proof helpers (it claims only what they prove; the checker has its own)
           "state_problem", "cap_bound", "exact_below", "exact_claim", "exact_excluded", "exact_feature_basis",
           "exact_gram", "exact_parts", "exact_pencil", "gross_scale", "pattern_pencils", "pencil_bounds", "support_bounds"]
