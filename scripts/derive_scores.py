# ruff: noqa: RUF001, RUF002  (DeepSeek's prefix is spelled with U+FF5C, the fullwidth bar)
"""How formats derived from chat templates alone read their named format's corpus.

For every chat template of ours (`chat_templates/`) and every model template of llama.cpp's
collection that `tests/test_detect.py` maps to a format of ours, `from_chat_template` derives a
format (or refuses, with its reason); the derived format then reads the named format's corpus,
whole, char by char and in random chunks, and a case counts where its events equal the named
format's in all three. Then the same with every derived marker renamed to strings no format of ours
uses, in the template and in the corpus: the reading must not change.

    python scripts/derive_scores.py [--markdown]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

from toolcall_parsers import FORMATS, Format, from_chat_template  # noqa: E402
from toolcall_parsers.core.events import merge_text  # noqa: E402
from toolcall_parsers.core.logs import logs_silenced  # noqa: E402


def events(fmt: Format, chunks: list[str], tools: object) -> list[object]:
    stream = fmt.stream(tools, lambda name, index: f"call_{index}")
    out = []
    for chunk in chunks:
        out += stream.feed(chunk)
    return merge_text(out + stream.close())


def chunkings(text: str) -> list[list[str]]:
    rng, cuts, at = random.Random(1), [], 0
    while at < len(text):
        step = rng.randint(1, 7)
        cuts.append(text[at : at + step])
        at += step
    return [[text], list(text), cuts]


def renames(fmt: Format, template: str) -> dict[str, str]:
    """Each marker of a derived format spelled anew, keeping its shape: its first word gets a prefix
    no format of ours uses (the same for every marker of that word, so a tag and its close stay a
    pair), and a tag is renamed by its stem (all but its `>`), so a drifted spelling of it in the
    corpus (`</parameter1>`) is renamed with it; a fullwidth-bar prefix (`｜DSML｜`) is renamed
    wherever it stands, as templates assemble their tags from it. Only markers the template writes:
    a think pair it never renders is the family's default, which a template cannot rename."""
    out = {}
    markers = [m for m in {*fmt.markers, *fmt.think_pairs[0]} if m in template]
    words: dict[str, str] = {}  # one new word per old one, so a tag and its close stay a pair
    for marker in sorted(markers, key=len, reverse=True):
        stem = marker[:-1] if marker.endswith(">") and len(marker) > 2 else marker
        word = re.search(r"[A-Za-z]\w*", stem)
        if word is None:  # a marker of no word (`<|"|>`): a tag stays a tag, its first character kept
            out[stem] = stem[0] + f"@@{len(out)}@@" + stem[1:] if stem[:1] in "<[" else f"@@{len(out)}@@"
            continue
        new = words.setdefault(word.group(), f"zq{len(words)}{word.group()}")
        out[stem] = stem[: word.start()] + new + stem[word.end() :]
        if (prefix := re.search("｜[A-Za-z]\\w*｜", marker)) is not None:  # DSML's prefix, which templates
            old = prefix.group()  # assemble tags from: renamed wherever it stands
            out[old] = f"｜{words.setdefault(old[1:-1], f'zq{len(words)}{old[1:-1]}')}｜"
    return out


def renamed(text: str, table: dict[str, str]) -> str:
    for old in sorted(table, key=len, reverse=True):
        text = text.replace(old, table[old])
    return text


def score(derived: Format, named: str, table: dict[str, str] | None = None) -> tuple[int, int]:
    from helpers import load_corpus

    cases = [case for case in load_corpus(named) if not case.get("options")]
    equal = 0
    for case in cases:
        text, tools = case["text"], case.get("tools")
        expected = [repr(events(FORMATS[named], chunks, tools)) for chunks in chunkings(text)]
        if table is not None:
            text, expected = renamed(text, table), [renamed(e, table) for e in expected]
        got = [repr(events(derived, chunks, tools)) for chunks in chunkings(text)]
        equal += got == expected
    return equal, len(cases)


def templates() -> list[tuple[str, str, str]]:
    """(where, template text, named format) for ours and llama.cpp's collection."""
    from model_templates import ensure_templates
    from test_detect import MODEL_TEMPLATES

    out = [(f"ours: {name}", fmt.template_path.read_text(encoding="utf-8"), name) for name, fmt in FORMATS.items()]
    folder = ensure_templates()
    out += [
        (model, (folder / f"{model}.jinja").read_text(encoding="utf-8"), fmt) for model, fmt in MODEL_TEMPLATES.items()
    ]
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print("| template | named | derived family | corpus equal | renamed equal |")
    print("|---|---|---|---|---|")
    for where, text, named in templates():
        with logs_silenced():
            try:
                derived = from_chat_template(text)
            except Exception as err:  # a refusal (ValueError) or a template that does not render
                print(f"| {where} | `{named}` | refused: {str(err)[:140]} | | |")
                continue
            equal, total = score(derived, named)
            table = renames(derived, text)
            try:
                again = from_chat_template(renamed(text, table))
                r_equal, r_total = score(again, named, table)
                renamed_cell = f"{r_equal}/{r_total}"
            except Exception as err:
                renamed_cell = f"refused: {str(err)[:80]}"
        family = type(derived.spec).__name__
        print(f"| {where} | `{named}` | {family} {derived.markers} | {equal}/{total} | {renamed_cell} |")


if __name__ == "__main__":
    main()
