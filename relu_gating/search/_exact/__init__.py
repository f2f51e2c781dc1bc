"""The exact phase of the search (private): per-chunk work and the exact per-pattern solve.

:mod:`.tasks` (pure per-chunk work shipped to executors: bounds and exact solves), :mod:`.coords`
(coordinates for the exact solve), :mod:`.evidence` (dual evidence for a pattern's bound), :mod:`.polish`
(neurons polished against rounding), :mod:`.pilot` (an incumbent before the bound pass).
"""
