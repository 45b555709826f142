#!/usr/bin/env bash
# The vLLM-stack tests (tests/test_vllm_adapter.py and tests/test_reasoning.py: our tool and reasoning parsers inside
# vLLM's real parser classes, no server) against the Python layer of each vLLM release in VLLM_CHECK_VERSIONS (default: every
# supported release newer than the CPU build, 0.33.0 and 0.34.0). Each wheel is fetched once with `pip download --no-deps`
# and unpacked into an overlay folder put first on PYTHONPATH, so `import vllm` finds that release over the CPU torch of
# .venv while .venv itself stays on the CPU build 0.32.0 (which the main suite and the servers use). Not part of
# scripts/test.sh: each release downloads about a quarter of a gigabyte. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSIONS="${VLLM_CHECK_VERSIONS:-${VLLM_CHECK_VERSION:-0.33.0 0.34.0}}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/toolcall-parsers"

overlay() {  # the unpacked wheel of vLLM $1, fetched once
    local version="$1" folder="$CACHE/vllm-$1" wheel
    if [ ! -f "$folder/.unpacked" ]; then
        mkdir -p "$CACHE/wheels"
        wheel=$(ls "$CACHE"/wheels/vllm-"$version"-*.whl 2>/dev/null | head -1 || true)
        if [ -z "$wheel" ]; then
            echo "check_vllm: downloading the vllm $version wheel (no dependencies) ..." >&2
            .venv/bin/python -m pip download --quiet --no-deps "vllm==$version" -d "$CACHE/wheels" 2>&1 \
                | grep -v "^WARNING: Location" >&2 || true
            wheel=$(ls "$CACHE"/wheels/vllm-"$version"-*.whl | head -1)
        fi
        echo "check_vllm: unpacking $wheel into $folder ..." >&2
        rm -rf "$folder" && mkdir -p "$folder"
        .venv/bin/python -m zipfile -e "$wheel" "$folder"
        touch "$folder/.unpacked"
    fi
    echo "$folder"
}

status=0
for version in $VERSIONS; do
    folder=$(overlay "$version")
    PYTHONPATH="$folder${PYTHONPATH:+:$PYTHONPATH}" .venv/bin/python - "$version" <<'PY'
import sys
import importlib.metadata as metadata
import vllm

want = sys.argv[1]
found = metadata.version("vllm")
print(f"check_vllm: vllm {found} from {vllm.__file__}")
assert found == want, f"expected vllm {want}, imported {found}"
PY
    if ! PYTHONPATH="$folder${PYTHONPATH:+:$PYTHONPATH}" .venv/bin/python -m pytest -p no:cacheprovider -q \
        tests/test_vllm_adapter.py tests/test_reasoning.py "$@"; then
        echo "check_vllm: FAILED on vllm $version" >&2
        status=1
    fi
done
exit $status
