#!/usr/bin/env bash
# The vLLM-stack tests (tests/test_vllm_adapter.py and tests/test_reasoning.py: our tool and reasoning parsers inside
# vLLM's real parser classes, no server) against vLLM 0.33.0's Python layer, the current GPU release. Its wheel is fetched once
# with `pip download --no-deps` and unpacked into an overlay folder put first on PYTHONPATH, so
# `import vllm` finds 0.33.0 over the CPU torch of .venv while .venv itself stays on the CPU build
# 0.32.0 (which the main suite and the servers use). Not part of scripts/test.sh: the first run
# downloads about half a gigabyte. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${VLLM_CHECK_VERSION:-0.33.0}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/toolcall-parsers"
OVERLAY="$CACHE/vllm-$VERSION"
if [ ! -f "$OVERLAY/.unpacked" ]; then
    mkdir -p "$CACHE/wheels"
    wheel=$(ls "$CACHE"/wheels/vllm-"$VERSION"-*.whl 2>/dev/null | head -1 || true)
    if [ -z "$wheel" ]; then
        echo "check_vllm: downloading the vllm $VERSION wheel (no dependencies) ..."
        .venv/bin/python -m pip download --quiet --no-deps "vllm==$VERSION" -d "$CACHE/wheels" 2>&1 \
            | grep -v "^WARNING: Location" || true
        wheel=$(ls "$CACHE"/wheels/vllm-"$VERSION"-*.whl | head -1)
    fi
    echo "check_vllm: unpacking $wheel into $OVERLAY ..."
    rm -rf "$OVERLAY" && mkdir -p "$OVERLAY"
    .venv/bin/python -m zipfile -e "$wheel" "$OVERLAY"
    touch "$OVERLAY/.unpacked"
fi
export PYTHONPATH="$OVERLAY${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/python - "$VERSION" <<'PY'
import sys
import importlib.metadata as metadata
import vllm

want = sys.argv[1]
found = metadata.version("vllm")
print(f"check_vllm: vllm {found} from {vllm.__file__}")
assert found == want, f"expected vllm {want}, imported {found}"
PY
.venv/bin/python -m pytest -p no:cacheprovider -q tests/test_vllm_adapter.py tests/test_reasoning.py "$@"
