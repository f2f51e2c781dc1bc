"""The one driver of the enumerated search, in memory or streamed (private).

:mod:`.store` (the per-pattern arrays behind one interface: in memory or on disk), :mod:`.exact`
(the exact phase over a bounded candidate list), :mod:`.finish` (the one ending: claims raised to
what is proven, final settlements, near-ties, the result).  The in-memory search
(:func:`relu_gating.search.front.best_neuron`) and the streamed one
(:mod:`relu_gating.search._stream.run`) only fill a store with bounded patterns, then run these.
"""
