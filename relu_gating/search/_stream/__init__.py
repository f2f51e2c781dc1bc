"""The best-neuron search as a stream in bounded memory (private; ``best_neuron(memory=...)``).

:mod:`.parts` (the plan and the parts of the enumeration), :mod:`.run` (their absorption into a
:class:`~relu_gating.search._enum.store.DiskStore`, then the exact phase and the ending of
:mod:`relu_gating.search._enum`), :mod:`.checkpoint` (signed checkpoints of a streamed query).
"""
