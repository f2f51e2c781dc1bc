"""The best-neuron search as a stream in bounded memory (private; ``best_neuron(memory=...)``).

:mod:`.parts` (the plan and the parts of the enumeration), :mod:`.run` (the driver), :mod:`.finish`
(claims, final settlements, the result), :mod:`.checkpoint` (signed checkpoints of a streamed query),
:mod:`.store` (per-pattern arrays spilled to files).
"""
