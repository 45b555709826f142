#!/usr/bin/env bash
# Set up (see setup.sh) and run every check: ruff, then all tests, including the end-to-end tests
# that start a real vllm serve on this CPU. Extra arguments go to pytest. Tests run on
# TEST_WORKERS processes (default 2, this machine's cores; 1 runs them in this process); the tests
# that start a vllm serve share one worker (xdist group `vllm_serve`), so one server runs at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
WORKERS="${TEST_WORKERS:-2}"
if [ "$WORKERS" -gt 1 ]; then
    .venv/bin/python -m pytest -p no:cacheprovider -n "$WORKERS" --dist loadgroup "$@"
else
    .venv/bin/python -m pytest -p no:cacheprovider "$@"
fi
