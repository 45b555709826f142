#!/usr/bin/env bash
# Set up (see setup.sh) and run the demo: a real CPU vLLM server with our parser, two requests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python scripts/demo.py
