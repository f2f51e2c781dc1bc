#!/usr/bin/env bash
# The CLI as another tool calls it: data file in, JSON out, certificate re-checked
# in a separate process.  Everything happens in a temporary directory.
#
#   bash examples/cli_backend.sh            (from anywhere; uses this checkout)
#
# Steps
#   1. write samples X (two moons, n = 60, samples as rows) to data.npz
#   2. relu-gating best-neuron data.npz --K 4 --features bias --json --out cert.json
#      -> JSON summary on stdout (value, upper_bound, certified, theta, pattern, ...)
#   3. relu-gating verify cert.json data.npz --K 4 --features bias
#      (the caller states the same problem)            -> exit 0 (valid, certified)
#   4. tamper with the certificate's value, verify again -> exit 1 (invalid)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="${REPO}${PYTHONPATH:+:${PYTHONPATH}}"
PY="${PYTHON:-python}"
RG=("$PY" -m relu_gating)            # or the installed console script: relu-gating

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# 1. the input file
"$PY" - <<'EOF'
import numpy as np
from relu_gating.data.datasets import two_moons
np.savez("data.npz", X=two_moons(60, noise=0.1, seed=0))
EOF

# 2. the query: JSON summary to stdout, full certificate to cert.json, no progress bar
"${RG[@]}" best-neuron data.npz --K 4 --features bias --json --out cert.json --quiet > summary.json
"$PY" - <<'EOF'
import json
s = json.load(open("summary.json"))
print("best-neuron summary (from JSON):")
for key in ("objective", "value", "upper_bound", "alpha", "certified", "theta", "n_patterns"):
    print(f"  {key:12s} {s[key]}")
print(f"  {'pattern':12s} {s['pattern']}")
print(f"  {'seconds':12s} {s['seconds']}")
EOF

# 3. re-check the certificate from the inputs alone, in a fresh process
echo "relu-gating verify cert.json data.npz --K 4 --features bias:"
if "${RG[@]}" verify cert.json data.npz --K 4 --features bias; then
    echo "  -> exit 0: certificate valid"
else
    echo "  -> verification FAILED on an untouched certificate" >&2
    exit 1
fi

# 4. a tampered certificate must be rejected (exit status 1)
"$PY" - <<'EOF'
import json
c = json.load(open("cert.json"))
c["value"] = c["value"] + 1e-3
json.dump(c, open("tampered.json", "w"))
EOF
echo "relu-gating verify tampered.json data.npz --K 4 --features bias (value raised by 1e-3):"
set +e
"${RG[@]}" verify tampered.json data.npz --K 4 --features bias
status=$?
set -e
if [ "$status" -eq 1 ]; then
    echo "  -> exit 1: tampered certificate rejected"
else
    echo "  -> tampered certificate NOT rejected (exit $status)" >&2
    exit 1
fi
