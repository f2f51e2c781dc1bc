"""The inputs as the library takes them (private): arrays checked and coerced (``arrays``: the checker's
too; ``validate``: the public functions' argument checks), exact power-of-two scaling (``scaling``) and
the features' basis with its rank decided exactly (``feature_basis``; the checker keeps its own).

Nothing is imported here: each module is loaded where it is used.
"""
