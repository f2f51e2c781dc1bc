"""The allocator warm-up of the enumeration (``relu_gating._runtime.alloc``).

Oracle: the kernel's count of minor page faults (``getrusage``) of a repeated enumeration in a
fresh process, with the warm-up and with it suppressed.  On glibc the batches' temporaries must
stay in the heap (few faults); elsewhere the warm-up must merely be harmless.
"""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

_CHILD = r"""
import resource, sys
import numpy as np
import relu_gating._runtime.alloc as alloc
if sys.argv[1] == "off":
    alloc._done = True  # as if it had run: the allocator keeps its start-up thresholds
from relu_gating.patterns import enumerate_patterns
X = np.random.default_rng(0).normal(size=(100, 3))
Phi = np.c_[X, np.ones(100)]
first = enumerate_patterns(Phi)
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
again = enumerate_patterns(Phi)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
assert (first.packed == again.packed).all() and (first.witnesses == again.witnesses).all()
print(faults, alloc._done)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True).stdout
    faults, done = out.split()
    assert done == "True"
    return int(faults)


def test_warm_up_is_idempotent_and_touches_nothing():
    import relu_gating._runtime.alloc as alloc

    alloc.warm_allocator()
    alloc.warm_allocator()
    assert alloc._done and alloc.BLOCK < 32 << 20  # under glibc's ceiling for the dynamic threshold


def test_enumeration_keeps_its_temporaries_in_the_heap():
    """With the warm-up a repeated enumeration faults far fewer pages than without (glibc), and gives
    the same patterns and witnesses either way.  The fewest faults of three runs each: the count varies
    from run to run by up to 2x (807-1,512 with, 3,849-4,349 without, on one machine), and noise only
    adds faults."""
    off, on = min(_faults("off") for _ in range(3)), min(_faults("on") for _ in range(3))
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert on <= off / 3 + 50, (on, off)


_VERIFY_CHILD = r"""
import numpy as np
import relu_gating as rg
import relu_gating._runtime.alloc as alloc
X = np.random.default_rng(0).normal(size=(12, 2))
Phi, U = rg.layer_input(X), np.linalg.qr(np.random.default_rng(1).normal(size=(12, 2)))[0]
res = rg.best_neuron(Phi, U)
alloc._done = False  # as in a process that only verifies
assert rg.verify(res.to_dict(), Phi, U).valid
print(alloc._done)
"""


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_verify_warms_the_allocator_too():
    """The verifier's chunks churn the heap as the enumeration's batches do: it warms it as well."""
    out = subprocess.run([sys.executable, "-c", _VERIFY_CHILD], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True"]
