"""Reasoning documents: a think block around, before and inside a format's calls, with what a
reasoning parser and a tool parser composed must return (reasoning, content, calls).

Two sources, for every format whose models reason in think blocks (`Format.think_blocks`):

- `scenarios(fmt)`: the named shapes reasoning models write, the same for every format (think then
  call, text between, a call inside a closed and an unclosed block, two blocks, the closer inside
  a call's string, truncation, broken calls, markers named in prose, no tools, `tool_choice="none"`).
- `random_document(rng, fmt)`: a fuzz document: reasoning prose (with partial markers, calls
  drafted inside a closed block) before a generated document of the format (`generate.gen_document`),
  or an unclosed block whose last words run into the document's first call.

What the answer part holds (content and calls) is the format's own reading of it (`parse`), which the
corpus and the fuzzer test on their own; what these documents add is the split: the reasoning is
given exactly, and the answer text is what the tool parser must get.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from toolcall_parsers import parse
from toolcall_parsers.formats import FORMATS

from .generate import gen_document, gen_prose
from .invariants import counter_ids, events_equal, merge
from .mutate import _MUTATION_FUNCS, _MUTATION_WEIGHTS

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
TOOLS = [WEATHER, SEARCH]


@dataclass(frozen=True)
class Doc:
    """A reasoning document. `reasoning` is exact (None: none); `answer` is the text after the
    split, which the format reads for content and calls; `tools` / `tool_choice` are the request's;
    `start` is where the prompt leaves reasoning ("before", "opened", "closed")."""

    fmt: str
    name: str
    text: str
    reasoning: str | None
    answer: str
    tools: list[dict[str, Any]] | None = None
    tool_choice: str = "auto"
    start: str = "before"
    calls: int | None = None  # how many calls the shape means (a check on the writer), where known

    def expected(self) -> tuple[str | None, str | None, list[tuple[str, dict[str, Any]]]]:
        """(reasoning, content, calls as (name, arguments)) of a composition that is right."""
        if self.tools is None or self.tool_choice == "none":
            return self.reasoning, self.answer.strip() or None, []
        result = parse(self.fmt, self.answer, self.tools)
        return self.reasoning, result.content, [(c.name, c.arguments) for c in result.calls]


def reasoning_formats() -> list[str]:
    return [name for name, fmt in FORMATS.items() if fmt.think_blocks]


def scenarios(name: str) -> list[Doc]:
    fmt = FORMATS[name]
    o, c = fmt.think_markers
    weather = fmt.write([("get_weather", {"city": "Oslo"})])
    search = fmt.write([("search", {"query": f"a {c} b"})])
    half = weather[: len(weather) // 2]
    named = [m for m in fmt.call_openers or fmt.markers if m.strip() and m not in (o, c)]
    opener = (named or ["<tool_call>"])[0]  # a call's markup, named in reasoning prose

    def doc(label: str, text: str, reasoning: str | None, answer: str, calls: int | None, **kw: Any) -> Doc:
        return Doc(name, label, text, reasoning, answer, kw.pop("tools", TOOLS), calls=calls, **kw)

    docs = [
        doc("think_then_call", f"{o}The user wants Oslo.{c}\n\n{weather}", "The user wants Oslo.", f"\n\n{weather}", 1),
        doc("text_between", f"{o}Oslo.{c}\n\nLet me look.\n{weather}", "Oslo.", f"\n\nLet me look.\n{weather}", 1),
        doc("no_think", f"Sure.\n{weather}", None, f"Sure.\n{weather}", 1),
        doc("space_before_think", f"\n\n{o}\nr\n{c}\n{weather}", "r", f"\n{weather}", 1),
        doc("call_in_closed_think", f"{o}maybe {weather} no{c}\n{weather}", f"maybe {weather} no", f"\n{weather}", 1),
        doc("two_think_blocks", f"{o}a{c}\n{weather}\n{o}b{c}", "a", f"\n{weather}\n{o}b{c}", 1),
        doc("closer_in_string", f"{o}r{c}\n{search}", "r", f"\n{search}", 1),
        doc("truncated_call", f"{o}r{c}\nok {half}", "r", f"\nok {half}", 0),
        doc("broken_call", f"{o}r{c}\n{half} and on", "r", f"\n{half} and on", 0),
        doc("truncated_reasoning", f"{o}still thinking", "still thinking", "", 0),
        doc("marker_in_closed_prose", f"{o}I use {opener} here{c}The answer is 4.", f"I use {opener} here",
            "The answer is 4.", 0),
        doc("no_tools", f"{o}r{c}\n{weather}", "r", f"\n{weather}", 0, tools=None),
        doc("tool_choice_none", f"{o}r{c}\n{weather}", "r", f"\n{weather}", 0, tool_choice="none"),
        doc("opened_by_prompt", f"r{c}\n{weather}", "r", f"\n{weather}", 1, start="opened"),
        doc("opener_again_after_prompt", f"{o}\nr\n{c}\n\nAnswer.", "r", "\n\nAnswer.", 0, start="opened"),
        doc("closed_by_prompt", f"{weather}", None, weather, 1, start="closed"),
    ]  # fmt: skip
    for other_open, other_close in fmt.think_pairs[1:]:  # the prompt may open any pair's block
        docs.append(doc(f"opened_by_prompt_{other_open}", f"r{other_close}\n{weather}", "r", f"\n{weather}", 1,
                        start="opened"))  # fmt: skip
    if fmt.think_label:
        label = fmt.think_label
        docs += [
            doc("labelled_think", f"{o}{label}The user wants Oslo.{c}\n{weather}", "The user wants Oslo.",
                f"\n{weather}", 1),
            doc("label_only_at_the_start", f"{o}{label}a {label}b{c}ok", f"a {label}b", "ok", 0),
            doc("label_word_in_prose", f"{o}{label.strip()} is a word{c}ok", f"{label.strip()} is a word", "ok", 0),
        ]  # fmt: skip
    if fmt.call_openers:
        weather, search = opened_call(name, weather), opened_call(name, search)
        prose = "".join(f"I use {opener} here, {i}. " for i in range(6))  # more than _LATER_OPENERS
        docs += [
            doc("call_in_unclosed_think", f"{o}I will call.\n{weather}", "I will call.", weather, 1),
            doc("closer_in_string_unclosed", f"{o}r\n{search}", "r", search, 1),
            doc("marker_in_unclosed_prose", f"{o}I use {opener} here", f"I use {opener} here", "", 0),
            doc("unclosed_no_tools", f"{o}I will call.\n{weather}", f"I will call.\n{weather}", "", 0, tools=None),
            doc("unclosed_tool_choice_none", f"{o}I will call.\n{weather}", f"I will call.\n{weather}", "", 0,
                tool_choice="none"),
            doc("opened_call_unclosed", f"r\n{weather}", "r", weather, 1, start="opened"),
            doc("prose_opener_then_call_unclosed", f"{o}I use {opener} here.\nthen\n{weather}",
                f"I use {opener} here.\nthen", weather, 1),
            doc("many_prose_openers_then_call_unclosed", f"{o}{prose}\n{weather}", prose.strip(), weather, 1),
        ]  # fmt: skip
        draft = opened_call(name, half)
        mid_value = weather[: weather.index("Oslo") + 2]  # the draft's value cut inside "Oslo"
        paris = fmt.write([("get_weather", {"city": "Paris"})])
        two = opened_call(name, fmt.write([("search", {"query": f"a {c} b"}), ("search", {"query": f"c {c} d"})]))
        docs += [
            doc("draft_left_unfinished_then_closed", f"{o}Maybe {draft} no, not needed.\n{c}\nIt is sunny.",
                f"Maybe {draft} no, not needed.", "\nIt is sunny.", 0),
            doc("draft_left_unfinished_no_tools", f"{o}Maybe {draft} no.{c}\nIt is sunny.",
                f"Maybe {draft} no.", "\nIt is sunny.", 0, tools=None),
            # A closer inside a drafted call's string, then a draft left unfinished: the second
            # closer is the block's, whatever the first was.
            doc("closer_in_string_then_draft_closed", f"{o}r\n{search} then {draft} no.{c}\nDone.",
                f"r\n{search} then {draft} no.", "\nDone.", 0),
            doc("closers_in_two_strings_unclosed", f"{o}r\n{two}", "r", two, 2),
            # A call drafted and left mid-value, the block closed right there, then the real call:
            # the draft is reasoning, not the start of one call that runs on into the real one.
            doc("draft_mid_value_then_closed_and_called", f"{o}Maybe {mid_value}{c}\n\n{paris}",
                f"Maybe {mid_value}", f"\n\n{paris}", 1),
        ]  # fmt: skip
        ends = [m for m in fmt.markers if weather.rstrip().endswith(m)]
        if ends:
            unended = weather.rstrip()[: -len(max(ends, key=len))]
            docs.append(doc("closer_before_the_calls_end", f"{o}r\n{unended} {c}\nDone.", f"r\n{unended.rstrip()}",
                            "\nDone.", 0))  # fmt: skip
    return docs


def random_document(rng: random.Random, name: str) -> Doc:
    """Reasoning prose (markers of the format in it, calls drafted inside) then a generated document;
    or, one time in three where the format has call openers, an unclosed block that runs into a
    document that starts with a call."""
    fmt = FORMATS[name]
    o, c = fmt.think_markers
    words = _clean(gen_prose(rng, name, think=False), (o, c))
    case = gen_document(rng, name, written_only=True)
    tools = case.tools or TOOLS
    if fmt.call_openers and rng.random() < 1 / 3:
        block = opened_call(name, fmt.write([("get_weather", {"city": rng.choice(["Oslo", "Lima", "東京"])})]))
        words = _clean(words, fmt.call_openers)
        rest = case.text if c not in case.text else ""  # a closer after the call would close the block
        if not any(tool["function"]["name"] == "get_weather" for tool in tools):
            tools = [*tools, WEATHER]  # formats that read declared tools only (xml_tools) must know it
        return Doc(name, "unclosed", f"{o}{words}\n{block}{rest}", words.strip() or None, block + rest, tools)
    if rng.random() < 0.5:
        drafted = fmt.write([("search", {"query": "draft"})])
        words += rng.choice([" ", "\n"]) + drafted + " " + _clean(gen_prose(rng, name, think=False), (o, c))
    lead = rng.choice(["", "\n", "  \n"])
    tail = rng.choice(["", "\n", "\n\n"])
    text = f"{lead}{o}{words}{c}{tail}{case.text}"
    return Doc(name, "random", text, words.strip() or None, tail + case.text, tools)


def opened_call(name: str, call: str) -> str:
    """A written call as a model writes it inside a think block: after one of the format's call
    openers (Llama's `<|python_tag|>` before JSON its writer leaves bare)."""
    openers = FORMATS[name].call_openers
    return call if call.lstrip().startswith(openers) else openers[0] + call.lstrip()


def _clean(text: str, markers: tuple[str, ...]) -> str:
    """`text` with none of `markers` in it (removing one may join the text around it into another)."""
    while any(marker in text for marker in markers):
        for marker in markers:
            text = text.replace(marker, "")
    return text


# -- mutated documents, split engine-free ------------------------------------------------------------


def mutated_document(rng: random.Random, name: str) -> tuple[str, list[dict[str, Any]], str]:
    """(text, tools, start): a reasoning document broken by the fuzzer's mutations (truncated,
    flipped, markers injected or repeated, surrogates, splices), with think markers and call openers
    thrown in at random places; the prompt's start drawn too."""
    fmt = FORMATS[name]
    doc = random_document(rng, name)
    text = doc.text
    for mutation in rng.choices(_MUTATION_FUNCS, _MUTATION_WEIGHTS, k=rng.choice([0, 1, 1, 2])):
        text = mutation(rng, text, name)
    extra = [m for pair in fmt.think_pairs for m in pair] + list(fmt.call_openers) + [fmt.think_label]
    for _ in range(rng.choice([0, 0, 1, 2])):
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(extra) + text[at:]
    return text, doc.tools or TOOLS, rng.choice(["before", "before", "opened", "closed"])


def split_events(name: str, chunks: list[str], tools: Any, start: str) -> tuple[str, str, list[Any]]:
    """(reasoning, answer, the format's events on the answer) of our split and tool parser composed,
    fed `chunks`, as an engine runs them: the split first, its answer text to the format's stream
    as it comes; a call held in an unclosed block is read at the end."""
    fmt = FORMATS[name]
    split = fmt.reasoning_split(start)
    stream = fmt.stream(tools, counter_ids)  # ids made from the call's index: the same in every run
    reasoning: list[str] = []
    answer: list[str] = []
    events: list[Any] = []

    def take(pieces: list[Any]) -> None:
        for piece in pieces:
            if type(piece).__name__ == "Reasoning":
                reasoning.append(piece.text)
            else:
                answer.append(piece.text)
                events.extend(stream.feed(piece.text))

    for chunk in chunks:
        take(split.feed(chunk))
    take(split.close(calls=fmt.call_reading(tools)))
    events.extend(stream.close())
    return "".join(reasoning), "".join(answer), events


def _drop_whitespace(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


def reasoning_violations(name: str, text: str, tools: Any, start: str, chunkings: list[list[str]]) -> list[str]:
    """What breaks the composition's invariants on `text`: an exception; any chunking whose reasoning,
    answer or events differ from the whole text's; characters lost (everything but the markers and
    label the split drops and whitespace at the reasoning's ends is in the reasoning or the answer,
    in order)."""
    try:
        whole = split_events(name, [text], tools, start)
    except Exception as exc:
        return [f"raises on the whole text: {type(exc).__name__}: {exc}"]
    found = []
    for chunks in chunkings:
        try:
            chunked = split_events(name, chunks, tools, start)
        except Exception as exc:
            found.append(f"raises chunked: {type(exc).__name__}: {exc}")
            continue
        if chunked[:2] != whole[:2] or not events_equal(merge(whole[2]), merge(chunked[2])):
            found.append(f"chunking changes the answer: {chunked[:2]!r} vs {whole[:2]!r}")
    reasoning, answer, _ = whole
    if not text.endswith(answer):
        found.append(f"the answer is not the end of the text: {answer!r}")
        return found
    # Before the answer: a think opener (and label), the reasoning, a closer; nothing else.
    before, said = _drop_whitespace(text[: len(text) - len(answer)]), _drop_whitespace(reasoning)
    fmt = FORMATS[name]
    label = _drop_whitespace(fmt.think_label)
    heads = {"", label} | {_drop_whitespace(o) + tail for o, _ in fmt.think_pairs for tail in ("", label)}
    tails = {""} | {_drop_whitespace(c) for _, c in fmt.think_pairs}
    if not any(before == head + said + tail for head in heads for tail in tails):
        found.append(f"characters lost or moved around the reasoning {reasoning!r}: {text[:200]!r}")
    return found
