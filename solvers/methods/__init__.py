"""The registered methods, one module each: ``spectral``, ``faces``, ``dnn`` and ``auto``.

Importing this package registers them (see :mod:`solvers._registry`).
"""

from solvers.methods import auto, dnn, faces, spectral  # noqa: F401 - register the methods
