"""The best-neuron search as a stream in bounded memory (private; ``best_neuron(memory=...)``).

:mod:`.parts` (the plan and the parts of the enumeration), :mod:`.run` (the driver, over a
:class:`~relu_gating.search._enum.store.DiskStore`, ending in
:func:`~relu_gating.search._enum.finish.finish`), :mod:`.checkpoint` (signed checkpoints of a
streamed query).
"""
