#!/usr/bin/env bash
# Install opweave with its test dependencies, lint, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -e ".[test]"
python -m pip install --quiet -e examples/vendor_backend  # the example third-party backend, tested below
ruff check .
ruff format --check .
python -m pytest -q -p no:cacheprovider -n auto --dist loadfile
# The conformance suite against the reference backend and the example vendor backend.
opweave conformance --backend cpu --profile quick --quiet
opweave conformance --backend vnpu --profile quick --quiet
