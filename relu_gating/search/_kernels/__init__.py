"""Bound kernels of the search (private): the per-pattern cheap bound and its machinery.

:mod:`.bound` (the bound pass, vectorised near the sign-pattern floor), :mod:`.mirror` (a chamber and its
complement from one GEMM), :mod:`.stacks` (stacks of small matrices), :mod:`.masked` (masked products by
rank-one updates), :mod:`.wedge` (two-row dual evidence for a batch of patterns).
"""
