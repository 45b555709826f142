#!/usr/bin/env bash
# Set up (see setup.sh) and run every check: ruff, then all tests, including the end-to-end tests
# that start a real vllm serve on this CPU. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -p no:cacheprovider "$@"
