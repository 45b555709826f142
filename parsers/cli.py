"""`toolcall-parsers` / `python -m toolcall_parsers`: list formats, locate templates, parse text.

toolcall-parsers formats                      # names, wire formats, templates
toolcall-parsers template hermes_json         # path of the chat template (for --chat-template)
toolcall-parsers parse hermes_json [--tools tools.json] < output.txt   # JSON result
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from . import FORMATS, get_format, parse


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(prog="toolcall-parsers", description="Tool-call parsers for LLM serving engines.")
    sub = cli.add_subparsers(dest="command", required=True)
    sub.add_parser("formats", help="list the formats")
    template = sub.add_parser("template", help="print the path of a format's chat template")
    template.add_argument("name")
    parse_cmd = sub.add_parser("parse", help="parse a finished model output from stdin, print JSON")
    parse_cmd.add_argument("name")
    parse_cmd.add_argument("--tools", help="a JSON file with the request's tools (OpenAI format)")
    args = cli.parse_args(argv)

    try:
        if args.command == "formats":
            for fmt in FORMATS.values():
                print(f"{fmt.name}\t{fmt.summary}\t{fmt.template_path}")
        elif args.command == "template":
            print(get_format(args.name).template_path)
        else:
            tools = json.loads(Path(args.tools).read_text(encoding="utf-8")) if args.tools else None
            result = parse(args.name, sys.stdin.read(), tools=tools)
            print(json.dumps(dataclasses.asdict(result), ensure_ascii=False, indent=2))
    except ValueError as err:
        print(f"toolcall-parsers: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
