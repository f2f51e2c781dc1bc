"""Certificates of the best-neuron search: a versioned JSON format and its writers.

* :func:`result_to_dict`: the format (version ``relu-gating-certificate/3``, documented in
  ``FORMAT.md`` beside this package);
* :func:`save_binary` / :func:`binary_meta`: the binary ``.npz`` form
  (``relu-gating-certificate-npz/1``), written as a stream;

The certificates are checked by :mod:`relu_gating.checker` (:func:`relu_gating.verify`): small,
separate, its own primitives and its own reader.
"""

from relu_gating.certificate._codes import Settlement
from relu_gating.certificate._format import FORMAT, multipliers_json, packed_multipliers, result_to_dict
from relu_gating.certificate._binary import BINARY_FORMAT, binary_meta, save_binary

__all__ = ["FORMAT", "Settlement", "result_to_dict", "multipliers_json", "packed_multipliers", "BINARY_FORMAT", "binary_meta", "save_binary"]
