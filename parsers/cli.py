"""`toolcall-parsers` / `python -m toolcall_parsers`: the formats, and the operator's toolbox.

toolcall-parsers formats [--json]                         # names, models, wire formats, engines replaced, templates
toolcall-parsers template hermes_json                     # path of a chat template (for --chat-template)
toolcall-parsers parse hermes_json [--tools T.json] < out.txt              # JSON result
toolcall-parsers parse hermes_json --stream --tokenizer DIR [--events] < out.txt   # real token deltas
toolcall-parsers parse hermes_json --stream --chunk 3 --events < out.txt  # 3-character deltas
toolcall-parsers detect MODEL [--chat-template FILE] [--json]             # which parser, which flags
toolcall-parsers derive MODEL_DIR | TEMPLATE.json | TEMPLATE.jinja [--json]   # the format a model's templates describe
toolcall-parsers derive --export hermes_json --start-anchor '<|im_start|>assistant\n'   # ours as a response template
toolcall-parsers smoke --base-url URL --model M [--api chat|responses|messages] [--parser NAME] [--force]
toolcall-parsers capture --base-url URL --model M --prompts FILE [--parser NAME] [--out FILE]

Exit status, every command:
  0  success: parsed; one of our formats fits (detect); every smoke check agreed; capture finished
  1  the check found a problem: the text holds a call marker but no valid call, or the stream
     disagrees with parse() (parse); no format of ours fits the template (detect); any smoke row
     failed (smoke)
  2  the command could not run: bad arguments, unknown format, unreadable model, template or file,
     unreachable server
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import FORMATS, get_format
from .toolbox.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, print_json


def _parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="toolcall-parsers",
        description="Tool-call parsers for LLM serving engines, and tools to pick and check one.",
        epilog="Exit status: 0 ok, 1 the check found a problem, 2 the command could not run.",
    )
    sub = cli.add_subparsers(dest="command", required=True)
    formats = sub.add_parser("formats", help="list the formats and the engine parsers each replaces")
    formats.add_argument("--json", action="store_true", help="one JSON object per format")
    template = sub.add_parser("template", help="print the path of a format's chat template")
    template.add_argument("name")

    parse_cmd = sub.add_parser("parse", help="parse a finished model output from stdin, print JSON")
    parse_cmd.add_argument("name")
    parse_cmd.add_argument("--tools", help="a JSON file with the request's tools (OpenAI format)")
    parse_cmd.add_argument("--stream", action="store_true", help="also feed the text as deltas, as a server streams")
    cut = parse_cmd.add_mutually_exclusive_group()
    cut.add_argument("--tokenizer", metavar="DIR", help="with --stream: real token deltas of this tokenizer")
    cut.add_argument("--chunk", type=int, metavar="N", help="with --stream: N-character deltas (default 1)")
    parse_cmd.add_argument("--events", action="store_true", help="with --stream: print the events, one JSON line each")
    parse_cmd.add_argument("--streaming-policy", help="with --stream: complete, eager or a number of characters")

    detect = sub.add_parser("detect", help="which of our parsers a model's chat template teaches, and how to serve it")
    detect.add_argument("model", help="a local model folder, or a Hugging Face id already in the local cache")
    detect.add_argument("--chat-template", metavar="FILE", help="the template to check instead of the model's own")
    detect.add_argument("--json", action="store_true", help="one JSON object on stdout")

    derive = sub.add_parser("derive", help="the format a model's templates describe, or ours as a response template")
    derive.add_argument(
        "source",
        nargs="?",
        help="a model folder, a JSON file holding a response template or schema, or a chat template",
    )
    derive.add_argument("--export", metavar="NAME", help="write our format NAME as a transformers response template")
    derive.add_argument("--start-anchor", default="", help="with --export: where the model's turn begins")
    derive.add_argument("--json", action="store_true", help="one JSON object on stdout")

    smoke = sub.add_parser("smoke", help="tool-calling prompts against a server, streamed and not")
    _server_args(smoke)
    smoke.add_argument("--force", action="store_true", help="pin the outputs through structured outputs (vLLM)")
    smoke.add_argument(
        "--api",
        choices=("chat", "responses", "messages"),
        default="chat",
        help="the endpoint to ask: /v1/chat/completions, /v1/responses or /v1/messages (Anthropic)",
    )
    smoke.add_argument("--max-tokens", type=int, default=512, help="per unforced request (forced: the text's length)")
    smoke.add_argument("--json", action="store_true", help="one JSON object on stdout")

    capture = sub.add_parser("capture", help="record a server's raw outputs as corpus JSONL (resumable)")
    _server_args(capture)
    capture.add_argument("--prompts", required=True, metavar="FILE", help="one prompt per line (text or JSON)")
    capture.add_argument("--out", metavar="FILE", help="JSONL to append to (default: PROMPTS.captured.jsonl)")
    capture.add_argument("--max-tokens", type=int, default=512)
    return cli


def _server_args(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--base-url", required=True, help="the server's OpenAI API, e.g. http://127.0.0.1:8000/v1")
    cmd.add_argument("--model", required=True, help="the served model name")
    cmd.add_argument("--parser", help="our format the server runs (needed by --force; capture parses with it)")
    cmd.add_argument("--api-key", default="unused")
    cmd.add_argument("--timeout", type=float, default=600.0, help="seconds a request may take, in all")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "formats":
            for fmt in FORMATS.values():
                replaces = {"vllm": list(fmt.vllm_names), "sglang": list(fmt.sglang_names)}
                if args.json:
                    row = {"name": fmt.name, "models": fmt.models, "summary": fmt.summary}
                    row["template"] = str(fmt.template_path)
                    print(json.dumps({**row, "replaces": replaces}))
                else:
                    names = " ".join(f"{engine}:{n}" for engine, ns in replaces.items() for n in ns) or "-"
                    print(f"{fmt.name}\t{fmt.models}\t{fmt.summary}\t{names}\t{fmt.template_path}")
            return EXIT_OK
        if args.command == "template":
            print(get_format(args.name).template_path)
            return EXIT_OK
        commands = {"parse": _parse, "detect": _detect, "derive": _derive, "smoke": _smoke, "capture": _capture}
        command = commands[args.command]
        return command(args)
    except (ValueError, UsageError, OSError) as err:
        print(f"toolcall-parsers: {err}", file=sys.stderr)
        return EXIT_USAGE


# -- derive --------------------------------------------------------------------------------------


def _derive(args: argparse.Namespace) -> int:
    from .derive.response_template import to_response_template

    if args.export:
        if args.source:
            raise UsageError("derive: give a SOURCE or --export NAME, not both")
        print_json(to_response_template(get_format(args.export), args.start_anchor))
        return EXIT_OK
    if not args.source:
        raise UsageError("derive: give a model folder, a response template file or a chat template (or --export NAME)")
    where, derived_by, fmt = _derived(Path(args.source))
    spec = fmt.spec
    try:
        exported: Any = to_response_template(fmt, args.start_anchor)
    except ValueError as err:
        exported = f"not expressible: {err}"
    report = {
        "source": str(where),
        "derived_by": derived_by,
        "family": type(spec).__name__ if spec is not None else fmt.name,
        "summary": fmt.summary,
        "markers": list(fmt.markers),
        "think": list(fmt.think_pairs[0]),
        "spec": _spec_fields(spec),
        "response_template": exported,
    }
    if args.json:
        print_json(report)
    else:
        print(f"{report['source']} ({derived_by}): {report['family']}: {report['summary']}")
        for key, value in (report["spec"] or {}).items():
            print(f"  {key} = {value!r}")
        print("as a transformers response template:")
        print(exported if isinstance(exported, str) else json.dumps(exported, indent=2))
    return EXIT_OK


def _spec_fields(spec: Any) -> dict[str, Any] | None:
    import dataclasses

    if spec is None:
        return None
    return {k: v for k, v in dataclasses.asdict(spec).items() if k not in ("name", "summary", "models")}


def _derived(source: Path) -> tuple[Path, str, Any]:
    """(the file read, what the format was derived from, the format) for a model folder, a JSON file
    (a response template or schema, or a tokenizer config) or a chat template: the model's response
    template first, else its chat template (a folder's `chat_template.jinja`, else its config's; of
    a list of named templates, `tool_use`, else `default`)."""
    from .derive.chat_template import from_chat_template
    from .derive.response_schema import is_response_schema
    from .derive.response_template import from_response_template

    if not source.exists():
        raise UsageError(f"derive: {source}: no such file or folder")
    config_path = source / "tokenizer_config.json" if source.is_dir() else source
    text = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""
    if config_path.suffix != ".json" and not source.is_dir():
        return source, "chat template", from_chat_template(text)  # a Jinja file
    try:
        config = json.loads(text) if text else {}
    except (ValueError, RecursionError) as err:
        raise UsageError(f"derive: {config_path} is not JSON ({type(err).__name__}: {str(err)[:120]})") from None
    if not isinstance(config, dict):
        raise UsageError(f"derive: {config_path} holds JSON {type(config).__name__}, not an object")
    for key in ("response_template", "response_schema"):
        if isinstance(config.get(key), dict):
            return config_path, key.replace("_", " "), from_response_template(config[key])
    if "fields" in config:
        return config_path, "response template", from_response_template(config)
    if is_response_schema(config):
        return config_path, "response schema", from_response_template(config)
    jinja = source / "chat_template.jinja" if source.is_dir() else None
    template, where = _chat_template(config), config_path
    if jinja is not None and jinja.is_file():
        template, where = jinja.read_text(encoding="utf-8"), jinja
    if template is None:
        raise UsageError(f"derive: {source} has no response template, response schema or chat template")
    tokens = {k: v for k, v in config.items() if k.endswith("_token") and isinstance(v, str)}
    return where, "chat template", from_chat_template(template, **tokens)


def _chat_template(config: dict[str, Any]) -> str | None:
    """A tokenizer config's chat template: a string, or of a list of named ones `tool_use`, else
    `default`."""
    template = config.get("chat_template")
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("tool_use") or named.get("default")
    return template if isinstance(template, str) else None


# -- parse ---------------------------------------------------------------------------------------


def _parse(args: argparse.Namespace) -> int:
    from .toolbox.parse_text import chunk_deltas, event_json, parse_text, result_json, token_deltas

    get_format(args.name)
    if not args.stream and (args.tokenizer or args.chunk is not None or args.events or args.streaming_policy):
        raise UsageError("--tokenizer, --chunk, --events and --streaming-policy need --stream")
    tools = json.loads(Path(args.tools).read_text(encoding="utf-8")) if args.tools else None
    if tools is not None and not isinstance(tools, list):
        raise UsageError(f"--tools {args.tools}: expected a JSON list of tools, got {type(tools).__name__}")
    text = sys.stdin.read()
    deltas = None
    if args.stream:
        if args.tokenizer:
            from .detect import load_tokenizer

            deltas = token_deltas(text, load_tokenizer(args.tokenizer))
        else:
            deltas = chunk_deltas(text, 1 if args.chunk is None else args.chunk)
    report = parse_text(args.name, text, tools, deltas, args.streaming_policy)
    if args.events:
        for delta, event in report.events:
            print(json.dumps(event_json(delta, event), ensure_ascii=False))
    else:
        print_json(result_json(report.result))
    status = EXIT_OK
    if report.marker_without_call:
        print(f"toolcall-parsers: {args.name}: the text holds a call marker but no valid call:", file=sys.stderr)
        for reason in report.rejected:
            print(f"  {reason}", file=sys.stderr)
        status = EXIT_FAILED
    elif report.rejected:
        for reason in report.rejected:
            print(f"toolcall-parsers: warning: {reason}", file=sys.stderr)
    if report.stream_differs:
        print("toolcall-parsers: the streamed events fold into a different result than parse():", file=sys.stderr)
        print(json.dumps(result_json(report.streamed_result), ensure_ascii=False), file=sys.stderr)
        status = EXIT_FAILED
    return status


# -- detect --------------------------------------------------------------------------------------


def _detect(args: argparse.Namespace) -> int:
    from .detect import detect_model, serve_commands
    from .toolbox.console import status

    with status("reading the tokenizer and rendering the probe ...", not args.json):
        detection = detect_model(args.model, args.chat_template)
    commands = serve_commands(args.model, detection, args.chat_template)
    if detection.error:
        raise UsageError(f"{args.model}: {detection.error}")
    if args.json:
        print_json({**detection.to_json(), "commands": commands})
    else:
        _print_detection(args.model, detection, commands)
    return EXIT_OK if detection.parser else EXIT_FAILED


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "unknown (did not render)"}[value]


def _print_detection(model: str, detection: Any, commands: dict[str, str]) -> None:
    from rich.table import Table

    from .detect import THINKING_TOGGLES
    from .toolbox.console import stdout_console

    table = Table(title=f"detect {model}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    table.add_row("chat template", detection.template_source)
    if detection.parser:
        others = [c for c in detection.candidates if c != detection.parser]
        also = f" (also reads it: {', '.join(others)})" if others else ""
        if detection.taught_only:
            also = " (taught by the instructions only: the template renders no history calls)"
        table.add_row("parser", f"[green]{detection.parser}[/]{also}")
    else:
        table.add_row("parser", "[red]none of ours[/]")
    table.add_row("template teaches tools", _yes_no(detection.teaches_tools))
    writes = detection.writes if detection.writes else "(nothing: the template drops tool calls)"
    table.add_row("writes for a call", writes)
    table.add_row("probe shape", detection.probe or "(none rendered)")
    if detection.failed_probes:
        table.add_row("probe shapes that failed", "\n".join(detection.failed_probes))
    if detection.marker_tokens:
        tokens = ", ".join(f"{t.token} (id {t.id}{', special' if t.special else ''})" for t in detection.marker_tokens)
        table.add_row("single tokens in the call", tokens)
    else:
        table.add_row("single tokens in the call", "none: the markers are ordinary text")
    if detection.parser:
        strips = detection.skip_special_tokens_strips
        table.add_row(
            "skip_special_tokens strips the calls",
            _yes_no(strips) + (" (our parsers turn it off when tools are on)" if strips else ""),
        )
    table.add_row("renders tool results", _yes_no(detection.renders_tool_results))
    table.add_row("renders reasoning", _yes_no(detection.renders_reasoning))
    if detection.reasoning_markers:
        opener, closer = detection.reasoning_markers
        opened = detection.reasoning_opened_by
        when = "always" if "default" in opened and len(opened) == len(THINKING_TOGGLES) else ", ".join(opened)
        where = f"; the generation prompt opens it ({when})" if opened else ""
        table.add_row("reasoning markers", f"{opener} .. {closer}{where}")
        used = detection.reasoning_parser
        table.add_row(
            "reasoning parser",
            f"[green]{used}[/]" if used else "none of ours reads these markers with this parser: reasoning stays text",
        )
    if not detection.parser:
        table.add_row("suggested", f"{detection.suggested} with our template (below): {detection.suggestion_note}")
    table.add_row("vLLM", commands["vllm"])
    table.add_row("SGLang", commands["sglang"])
    stdout_console().print(table)


# -- smoke ---------------------------------------------------------------------------------------


def _client(args: argparse.Namespace) -> Any:
    import openai

    return openai.OpenAI(base_url=args.base_url, api_key=args.api_key, timeout=args.timeout, max_retries=0)


def _check_server(client: Any, args: argparse.Namespace) -> None:
    try:
        client.models.list()
    except Exception as err:
        raise UsageError(f"cannot reach {args.base_url}: {type(err).__name__}: {err}") from None


def _smoke(args: argparse.Namespace) -> int:
    from .toolbox.console import progress
    from .toolbox.smoke import PROMPTS, Server, row_json, run_smoke

    if args.force and not args.parser:
        raise UsageError("--force needs --parser NAME (the format whose text is forced)")
    if args.force and args.api == "messages":
        raise UsageError("--force needs structured outputs, which /v1/messages lacks: use --api chat or responses")
    if args.parser:
        get_format(args.parser)
    client = _client(args)
    _check_server(client, args)
    with progress(enabled=not args.json) as bar:
        task = bar.add_task("smoke", total=2 * len(PROMPTS))
        server = Server(args.base_url, args.model, args.api, args.api_key, args.timeout, args.max_tokens)
        rows = run_smoke(server, args.parser, args.force, lambda: bar.advance(task), args.timeout)
    ok = all(row.ok for row in rows)
    if args.json:
        report = {"ok": ok, "api": args.api, "parser": args.parser, "forced": args.force}
        print_json({**report, "rows": [row_json(r) for r in rows]})
    else:
        _print_smoke(args, rows, ok)
    return EXIT_OK if ok else EXIT_FAILED


def _mark(value: bool) -> str:
    return "[green]yes[/]" if value else "[red]NO[/]"


def _print_smoke(args: argparse.Namespace, rows: list[Any], ok: bool) -> None:
    from rich.table import Table

    from .toolbox.console import stdout_console

    mode = "forced" if args.force else "unforced"
    title = f"smoke {args.base_url} {args.model} ({args.api}, {args.parser or 'server parser'}, {mode})"
    table = Table(title=title)
    for column in ("prompt", "parsed ok", "stream == non-stream", "first tool-call delta", "finish reason"):
        table.add_column(column)
    for row in rows:
        first = f"{row.streamed.first_call_delta:.2f} s" if row.streamed.first_call_delta is not None else "-"
        finish = (
            row.plain.finish
            if row.plain.finish == row.streamed.finish
            else f"{row.plain.finish} / {row.streamed.finish}"
        )
        table.add_row(row.prompt, _mark(row.parsed_ok), _mark(row.same), first, f"{finish}")
    console = stdout_console()
    console.print(table)
    for row in rows:
        for problem in row.problems:
            console.print(f"[red]{row.prompt}[/]: {problem}", markup=True)
    console.print("[green]OK[/]" if ok else "[red]FAILED[/]")


# -- capture -------------------------------------------------------------------------------------


def _capture(args: argparse.Namespace) -> int:
    import datetime

    from .toolbox.capture import capture, done_ids, read_prompts
    from .toolbox.console import progress, stderr_console

    if args.parser:
        get_format(args.parser)
    prompts_path = Path(args.prompts)
    prompts = read_prompts(prompts_path)
    out = Path(args.out) if args.out else prompts_path.with_suffix(".captured.jsonl")
    client = _client(args)
    _check_server(client, args)
    already = len(done_ids(out) & {p.id for p in prompts})
    today = datetime.date.today().isoformat()
    source = f"captured {today} from {args.model} at {args.base_url}, tool_choice=none; review before committing"
    with progress() as bar:
        task = bar.add_task("capture", total=len(prompts), completed=already)
        captured = list(
            capture(client, args.model, prompts, out, args.parser, source, args.max_tokens, lambda: bar.advance(task))
        )
    with_calls = sum(bool((e.get("expected") or {}).get("calls") or e.get("formats_finding_calls")) for e in captured)
    stderr_console().print(
        f"captured {len(captured)} (skipped {already} already in {out}); {with_calls} hold calls by our parse"
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
