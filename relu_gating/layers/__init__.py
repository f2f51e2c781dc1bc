"""Networks of ReLU layers (forward passes, copy neurons, preserving layers), greedy layers and the
ReLU variation norm (how well a layer of ReLU neurons represents a function).

``greedy_layer`` and the variation norm build on the certified search and are imported on first use
(:mod:`relu_gating.layers.variation`).
"""

from __future__ import annotations

from typing import Any

from relu_gating.layers.networks import (  # noqa: F401
    relu,
    layer_input,
    forward,
    NetworkFeatures,
    copy_neurons,
    class_spanning_neurons,
    preserving_layer,
    PreservingLayer,
)

__all__ = ['relu', 'layer_input', 'forward', 'NetworkFeatures', 'copy_neurons', 'class_spanning_neurons', 'preserving_layer', 'PreservingLayer', 'GreedyLayer', 'greedy_layer']


def __getattr__(name: str) -> Any:
    if name in ['GreedyLayer', 'greedy_layer']:
        from relu_gating.layers import greedy

        return getattr(greedy, name)
    raise AttributeError(f"module 'relu_gating.layers' has no attribute {name!r}")
