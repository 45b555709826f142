"""The endpoint cases of tests/test_e2e_endpoints.py through our parsers and vLLM's built-ins, on one
real `vllm serve` (CPU, SmolLM2-135M), as a table: per format and parser, how many cases each
endpoint and mode ended with exactly what `parse()` of the same text finds (calls, content, stop
reason, ids, and the endpoint's streaming rules; `toolbox.replies`), and in parentheses how many
got at least the calls right (names and arguments).

The server is the tests' (`tests/server_plugins`: a logits processor that forces each case's text,
and a tool-parser plugin that builds, per request, our format's parser or `builtin:NAME`).

    python scripts/endpoint_scores.py [--formats hermes_json,qwen_xml] [--no-builtins]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

from endpoint_cases import any_format_server, ask_case, cases, differences, tools_for  # noqa: E402
from prepare_model import ensure_model  # noqa: E402
from toolcall_parsers import FORMATS, parse  # noqa: E402
from toolcall_parsers.toolbox.replies import APIS  # noqa: E402

MODES = (False, True)


Score = tuple[int, int, list[str]]
"""Cases passed exactly, cases whose calls were right, the first problem of each failed case."""


def score(base_url: str, fmt: str, parser: str, codec: tuple) -> dict[tuple[str, bool], Score]:
    """(api, streamed) -> its score."""
    jobs = [(case, api, stream) for case in cases(fmt, *codec) for api in APIS for stream in MODES]

    def run(job):
        case, api, stream = job
        name, _, max_tokens, raw = case
        try:
            reply = ask_case(base_url, fmt, case, api, stream, parser)
            problems = differences(fmt, raw, reply, max_tokens is not None)
            expected = parse(fmt, raw, tools_for(fmt))
            calls_right = reply.pairs() == [(c.name, c.arguments) for c in expected.calls]
        except Exception as err:  # a built-in that breaks the request is a failed case
            problems, calls_right = [f"{type(err).__name__}: {err}"[:200]], False
        return (api, stream), name, problems, calls_right

    table: dict[tuple[str, bool], Score] = {(api, s): (0, 0, []) for api in APIS for s in MODES}
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for key, name, problems, calls_right in pool.map(run, jobs):
            passed, right, notes = table[key]
            table[key] = (passed + (not problems), right + calls_right, notes + [f"{name}: {p}" for p in problems[:1]])
    return table


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--formats", default=",".join(sorted(FORMATS)))
    cli.add_argument("--no-builtins", action="store_true")
    cli.add_argument("--verbose", action="store_true", help="print the first problem of each failed case")
    args = cli.parse_args()
    from transformers import AutoTokenizer

    model = ensure_model()
    tok = AutoTokenizer.from_pretrained(model)
    codec = (lambda text: tok.encode(text, add_special_tokens=False)), (lambda ids: tok.decode(list(ids)))
    header = "| format | parser | " + " | ".join(f"{api} finished | {api} streamed" for api in APIS) + " |"
    print(header)
    print("|" + "---|" * (2 + 2 * len(APIS)))
    with any_format_server(model) as base_url:
        for fmt in args.formats.split(","):
            total = len(cases(fmt, *codec))
            parsers = [fmt] + ([] if args.no_builtins else [f"builtin:{n}" for n in FORMATS[fmt].vllm_names])
            for parser in parsers:
                table = score(base_url, fmt, parser, codec)
                cells = [f"{table[(api, s)][0]}/{total} ({table[(api, s)][1]})" for api in APIS for s in MODES]
                print(f"| `{fmt}` | `{parser.removeprefix('builtin:')}` | " + " | ".join(cells) + " |", flush=True)
                if args.verbose:
                    for (api, s), (_, _, notes) in table.items():
                        for note in notes:
                            print(f"    {api} {'streamed' if s else 'finished'}: {note}"[:300], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
