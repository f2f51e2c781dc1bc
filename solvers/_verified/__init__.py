"""The exact fallback path: problems float64 cannot decide, settled in rational arithmetic (private)."""
