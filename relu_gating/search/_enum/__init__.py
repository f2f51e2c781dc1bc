"""What every enumerated search shares, in memory or streamed (private).

:mod:`.store` (the per-pattern arrays behind one interface: in memory or on disk), :mod:`.finish`
(the one ending: claims raised to what is proven, final settlements, near-ties, the result).
"""
