"""Certificates of the best-neuron search: a versioned JSON format and an independent verifier.

* :func:`result_to_dict` / :func:`load_certificate`: the format (version
  ``relu-gating-certificate/2``, documented in ``FORMAT.md`` beside this package);
* :func:`verify`: re-checks a certificate against the problem stated by the
  caller, with its own tolerances and its own short checks of the evidence
  (no solver code of the search is imported).
"""

from relu_gating.certificate._format import FORMAT, Certificate, load_certificate, parse_certificate, result_to_dict
from relu_gating.certificate._verify import BOUND_SLACK, EXCLUDE_RTOL, VALUE_TOL, VerifyReport, prove_bounds, verify

__all__ = ["FORMAT", "Certificate", "load_certificate", "parse_certificate", "result_to_dict", "verify",
           "VerifyReport", "prove_bounds", "VALUE_TOL", "BOUND_SLACK", "EXCLUDE_RTOL"]
