#!/usr/bin/env bash
# The Metal backend on a Mac with an Apple GPU: what CI cannot run (it has no Mac).
# Installs opweave with the [mps] extra, shows what `opweave doctor` finds, runs the mps tests,
# the conformance suite's quick profile on the device, and bench/mps.py beside PyTorch's MPS backend.
# Usage: scripts/mps_check.sh [--full]   (--full: the conformance suite's full profile)
# Send back mps-conformance.json, mps-conformance.log and mps-bench.log.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" != "Darwin" ]; then
    echo "scripts/mps_check.sh: Metal requires macOS (this is $(uname -s)); nothing to check here"
    exit 0
fi
profile=quick
[ "${1:-}" = "--full" ] && profile=full
python -m pip install --quiet -e ".[mps,test]" || exit 1
status=0
python -c 'import platform; print("macOS", platform.mac_ver()[0], platform.machine())'
opweave doctor || status=$?
python -c 'import opweave; assert opweave.mps.is_available(), opweave.mps.unavailable_reason()' || exit 1
# the unit tests (the compile check, the runtime against its fake) and the device-independent ones
python -m pytest -q -p no:cacheprovider tests/mps || status=$?
opweave conformance --backend mps --profile "$profile" --report mps-conformance.json 2>&1 | tee mps-conformance.log
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# PyTorch's MPS backend for comparison (optional: the benchmark says so when torch is missing)
python -c 'import torch' 2>/dev/null || python -m pip install --quiet torch || true
python bench/mps.py 2>&1 | tee mps-bench.log
exit $status
