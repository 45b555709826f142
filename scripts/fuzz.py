"""Fuzz every registered wire format against the parser contract: the command line of the
`fuzzing` library next to this file (what it checks, and how: `scripts/fuzzing/__init__.py`).

    python scripts/fuzz.py --format all --seconds 60
    python scripts/fuzz.py --format hermes_json --inputs 20000 --seed 7 --no-log-check
    python scripts/fuzz.py --format qwen_xml --inputs 2000 --written-only   # as a format with no generator
    python scripts/fuzz.py --replay fuzz-out/hermes_json-chunking-0123456789.json   # still failing?
    python scripts/fuzz.py --shrink fuzz-out/*.json --shrink-seconds 60             # smaller, in place
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzing.run import main

if __name__ == "__main__":
    sys.exit(main())
