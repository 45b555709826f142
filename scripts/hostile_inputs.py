"""Hostile model outputs for the linear-cost check of `scripts/bench.py --hostile`.

Each input is a function of a target size in characters, so the same shape can be measured at two
sizes: a parser whose cost per character stays the same is linear (docs/design.md, invariants 5 and 8),
one whose cost per character grows with the size is not. The shapes come from the issue tracker:
markers repeated without ever forming a call, broken calls repeated, thousands of valid calls, long
runs of whitespace where a parser may hold text back, deep nesting, escape-heavy strings, noise.
Texts are built by repetition, deterministic (noise is seeded), and at least `size` long. Every
registered format gets the shapes its spec gives (`written_hostiles`: its markers and its writer's
calls), on top of the hand-made ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolcall_parsers.formats import FORMATS, Format


@dataclass(frozen=True)
class Hostile:
    """One hostile output shape for one format; `make(size)` gives a text of about `size` chars."""

    fmt: str
    name: str
    make: Callable[[int], str]


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}


TOOLS: list[dict[str, Any]] = [
    _tool(
        "f",
        {
            "i": {"type": "integer"},
            "n": {"type": "number"},
            "s": {"type": "string"},
            "a": {"type": "array"},
            "o": {"type": "object"},
            "v": {},  # untyped: a MiniMax value is then read as JSON when it parses, else kept as text
            # Schemas a client controls (issue 24): typing must cost the same per character whatever they say.
            "union_items": {"type": "array", "items": {"anyOf": [{"type": "integer"}] * 255}},
            "enum_items": {"type": "array", "items": {"enum": list(range(20_000))}},
        },
    )
]
TOOLS.append(_tool("save", {"path": {"type": "string"}, "content": {"type": "string"}}))
TOOLS[-1]["function"]["parameters"]["required"] = ["path", "content"]
"""The request's tools for every input: one tool `f` whose parameters cover the schema-typed paths,
and `save` (path, content: required strings) for the tool-block formats."""


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`head`, then `unit` as many times as it takes to reach `size` characters, then `tail`."""
    count = max(1, -(-(size - len(head) - len(tail)) // len(unit)))
    return head + unit * count + tail


def _lines(line: Callable[[int], str], size: int, head: str = "", tail: str = "") -> str:
    """`head`, then line(0), line(1), ... until `size` characters, then `tail`: many distinct items."""
    parts, total, n = [head], len(head) + len(tail), 0
    while total < size:
        parts.append(line(n))
        total += len(parts[-1])
        n += 1
    parts.append(tail)
    return "".join(parts)


def _fill(head: str, filler: str, tail: str, size: int) -> str:
    """One structure whose middle (`filler` repeated) makes up the size: e.g. a 1 MB run of spaces."""
    return _repeat(filler, size, head, tail)


def _nested(size: int, open_: str, close: str, head: str, tail: str) -> str:
    """`head` + open_^d + close^d + `tail`, with depth d filling the size (closed, so valid syntax)."""
    depth = max(1, (size - len(head) - len(tail)) // (len(open_) + len(close)))
    return head + open_ * depth + close * depth + tail


def binary_noise(size: int) -> str:
    """Random bytes decoded as UTF-8 with errors="replace": U+FFFD, control characters, stray
    brackets and quotes, as from a broken detokenizer or a model emitting garbage."""
    data = random.Random(size).randbytes(2 * size)
    return data.decode("utf-8", errors="replace")[:size]


VALID: dict[str, str] = {name: fmt.write([("save", {"path": "a.py", "content": "x"})]) for name, fmt in FORMATS.items()}
"""One valid call per format, as its writer spells it: the bench checks that the parser it measures
still reads it."""

SPACES = " "
HAND_MADE: list[Hostile] = [
    # -- hermes_json --------------------------------------------------------------------------------
    Hostile("hermes_json", "<tool_call> repeated", lambda n: _repeat("<tool_call>", n)),
    Hostile(
        "hermes_json",
        '<tool_call>{"name": 1}</tool_call> repeated',
        lambda n: _repeat('<tool_call>{"name": 1}</tool_call>', n),
    ),
    Hostile(
        "hermes_json",
        "many valid calls (one per line)",
        lambda n: _lines(lambda i: f'<tool_call>{{"name": "f", "arguments": {{"i": {i}}}}}</tool_call>\n', n),
    ),
    Hostile(
        "hermes_json",
        "spaces after a complete call",
        lambda n: _fill('<tool_call>{"name": "f", "arguments": {"i": 1}}</tool_call>', SPACES, "Done.", n),
    ),
    Hostile(
        "hermes_json",
        "deep [[[ in arguments",
        lambda n: _nested(n, "[", "]", '<tool_call>{"name": "f", "arguments": {"a": ', "}}</tool_call>"),
    ),
    Hostile(
        "hermes_json",
        'deep {"a":{"a": in arguments',
        lambda n: _nested(n, '{"a":', "}", '<tool_call>{"name": "f", "arguments": {"o": ', "}}</tool_call>"),
    ),
    Hostile("hermes_json", "binary noise", binary_noise),
    # -- mistral_json -------------------------------------------------------------------------------
    Hostile("mistral_json", "[TOOL_CALLS] repeated", lambda n: _repeat("[TOOL_CALLS]", n)),
    Hostile("mistral_json", "[TOOL_CALLS]f[ARGS]{x} repeated", lambda n: _repeat("[TOOL_CALLS]f[ARGS]{x}", n)),
    Hostile("mistral_json", "many valid v11 calls", lambda n: _lines(lambda i: f'[TOOL_CALLS]f[ARGS]{{"i": {i}}}', n)),
    Hostile(
        "mistral_json",
        "deep [[[ in arguments",
        lambda n: _nested(n, "[", "]", '[TOOL_CALLS]f[ARGS]{"a": ', "}"),
    ),
    Hostile(
        "mistral_json",
        'deep {"a":{"a": in arguments',
        lambda n: _nested(n, '{"a":', "}", '[TOOL_CALLS]f[ARGS]{"o": ', "}"),
    ),
    Hostile("mistral_json", "binary noise", binary_noise),
    # -- tagged -------------------------------------------------------------------------------------
    Hostile("tagged", "<TOOL_CALLS> repeated", lambda n: _repeat("<TOOL_CALLS>", n)),
    Hostile("tagged", "f {x} lines in one block", lambda n: _repeat("f {x}\n", n, "<TOOL_CALLS>\n", "</TOOL_CALLS>")),
    Hostile(
        "tagged",
        "many valid lines",
        lambda n: _lines(lambda i: f'f {{"i": {i}}}\n', n, "<TOOL_CALLS>\n", "</TOOL_CALLS>"),
    ),
    Hostile(
        "tagged", "deep [[[ in arguments", lambda n: _nested(n, "[", "]", '<TOOL_CALLS>\nf {"a": ', "}\n</TOOL_CALLS>")
    ),
    Hostile(
        "tagged",
        'deep {"a":{"a": in arguments',
        lambda n: _nested(n, '{"a":', "}", '<TOOL_CALLS>\nf {"o": ', "}\n</TOOL_CALLS>"),
    ),
    Hostile("tagged", "binary noise", binary_noise),
    # -- minimax_xml --------------------------------------------------------------------------------
    Hostile("minimax_xml", "<minimax:tool_call> repeated", lambda n: _repeat("<minimax:tool_call>", n)),
    Hostile(
        "minimax_xml",
        "string value of </parameter> x look-alikes",
        lambda n: _fill(
            '<minimax:tool_call><invoke name="f"><parameter name="s">',
            "</parameter> x",
            "</parameter></invoke></minimax:tool_call>",
            n,
        ),
    ),
    Hostile(
        "minimax_xml",
        "number value: digits then x",
        lambda n: _fill(
            '<minimax:tool_call><invoke name="f"><parameter name="n">',
            "1234567890",
            "x</parameter></invoke></minimax:tool_call>",
            n,
        ),
    ),
    Hostile(
        "minimax_xml",
        "many valid invokes",
        lambda n: _lines(
            lambda i: f'<invoke name="f"><parameter name="i">{i}</parameter></invoke>\n',
            n,
            "<minimax:tool_call>\n",
            "</minimax:tool_call>",
        ),
    ),
    Hostile(
        "minimax_xml",
        "spaces between tags",
        lambda n: _fill(
            "<minimax:tool_call>",
            SPACES,
            '<invoke name="f"><parameter name="i">1</parameter></invoke></minimax:tool_call>',
            n,
        ),
    ),
    Hostile(
        "minimax_xml",
        "spaces after </parameter>",
        lambda n: _fill(
            '<minimax:tool_call><invoke name="f"><parameter name="i">1</parameter>',
            SPACES,
            "</invoke></minimax:tool_call>",
            n,
        ),
    ),
    Hostile(
        "minimax_xml",
        "untyped value starting with spaces",
        lambda n: _fill(
            '<minimax:tool_call><invoke name="f"><parameter name="v">',
            SPACES,
            "x</parameter></invoke></minimax:tool_call>",
            n,
        ),
    ),
    Hostile("minimax_xml", "binary noise", binary_noise),
    # -- llama_pythonic -----------------------------------------------------------------------------
    Hostile("llama_pythonic", "string heavy in escapes", lambda n: _fill('[f(s="', '\\"\\\\\\n', '")]', n)),
    Hostile("llama_pythonic", "triple-quoted string", lambda n: _fill('[f(s="""', "a \"b\" 'c'\n", '""")]', n)),
    Hostile("llama_pythonic", "[f(i=N)] lines (many lists)", lambda n: _lines(lambda i: f"[f(i={i})]\n", n)),
    Hostile("llama_pythonic", "spaces between arguments", lambda n: _fill("[f(i=1,", SPACES, 's="x")]', n)),
    Hostile("llama_pythonic", "spaces after <|python_tag|>", lambda n: _fill("<|python_tag|>", SPACES, "[f(i=1)]", n)),
    Hostile("llama_pythonic", "spaces after a line-start [", lambda n: _fill("Calling.\n[", SPACES, "f(i=1)]", n)),
    Hostile("llama_pythonic", "deep [[[ in a literal", lambda n: _nested(n, "[", "]", "[f(a=", ")]")),
    Hostile("llama_pythonic", "deep {'a':{'a': in a literal", lambda n: _nested(n, "{'a':", "}", "[f(o=", ")]")),
    Hostile("llama_pythonic", "binary noise", binary_noise),
    # -- llama_json ---------------------------------------------------------------------------------
    Hostile("llama_json", "<|python_tag|> repeated", lambda n: _repeat("<|python_tag|>", n)),
    Hostile("llama_json", "line-start { repeated", lambda n: _repeat("\n{", n)),
    Hostile(
        "llama_json", '{"name": "f", "age": 1} lines', lambda n: _lines(lambda i: f'{{"name": "f", "age": {i}}}\n', n)
    ),
    Hostile(
        "llama_json",
        "many valid calls (; separated)",
        lambda n: _lines(lambda i: f'{{"name": "f", "parameters": {{"i": {i}}}}}; ', n),
    ),
    Hostile("llama_json", "broken calls repeated", lambda n: _repeat('\n{"name": "f", "parameters": {"i": x}}', n)),
    Hostile("llama_json", "over-long names repeated", lambda n: _repeat('\n{"name": "' + "n" * 1100 + '"', n)),
    Hostile("llama_json", "spaces in a call's head", lambda n: _fill('{"name"', SPACES, ': "f", "parameters": {}}', n)),
    Hostile("llama_json", "spaces after a call", lambda n: _fill('{"name": "f", "parameters": {}}', SPACES, "; x", n)),
    Hostile(
        "llama_json",
        "string heavy in escapes",
        lambda n: _fill('{"name": "f", "parameters": {"s": "', '\\"\\n', '"}}', n),
    ),
    Hostile(
        "llama_json",
        "deep [[[ in arguments",
        lambda n: _nested(n, "[", "]", '{"name": "f", "parameters": {"a": ', "}}"),
    ),
    Hostile(
        "llama_json",
        "built-in call, escape-heavy string",
        lambda n: _fill('<|python_tag|>f.call(s="', '\\"\\n', '")', n),
    ),
    Hostile("llama_json", "binary noise", binary_noise),
    # -- qwen_xml -----------------------------------------------------------------------------------
    Hostile("qwen_xml", "<tool_call> repeated", lambda n: _repeat("<tool_call>", n)),
    Hostile("qwen_xml", "unclosed <function=f> repeated", lambda n: _repeat("<tool_call>\n<function=f>\n", n)),
    Hostile("qwen_xml", "over-long names repeated", lambda n: _repeat("<tool_call><function=" + "n" * 1100, n)),
    Hostile(
        "qwen_xml",
        "string value of </parameter> x look-alikes",
        lambda n: _fill(
            "<tool_call>\n<function=f>\n<parameter=s>\n", "</parameter> x", "\n</parameter>\n</function>", n
        ),
    ),
    Hostile(
        "qwen_xml",
        "string value of </function> y look-alikes",
        lambda n: _fill(
            "<tool_call>\n<function=f>\n<parameter=s>\n", "</function> y", "\n</parameter>\n</function>", n
        ),
    ),
    Hostile(
        "qwen_xml",
        "string value of newlines",
        lambda n: _fill("<tool_call>\n<function=f>\n<parameter=s>\n", "\n", "x\n</parameter>\n</function>", n),
    ),
    Hostile(
        "qwen_xml",
        "string value of x<parameter= lines",
        lambda n: _fill(
            "<tool_call>\n<function=f>\n<parameter=s>\n", "x <parameter=\n", "\n</parameter>\n</function>", n
        ),
    ),
    Hostile(
        "qwen_xml",
        "number value: digits then x",
        lambda n: _fill("<tool_call>\n<function=f>\n<parameter=n>\n", "1234567890", "x\n</parameter>\n</function>", n),
    ),
    Hostile(
        "qwen_xml",
        "many valid functions in one block",
        lambda n: _lines(
            lambda i: f"<function=f>\n<parameter=i>\n{i}\n</parameter>\n</function>\n", n, "<tool_call>\n"
        ),
    ),
    Hostile(
        "qwen_xml",
        "many valid blocks, parameter closes dropped",
        lambda n: _lines(lambda i: f"<tool_call>\n<function=f>\n<parameter=i>\n{i}\n</function>\n</tool_call>\n", n),
    ),
    Hostile("qwen_xml", "spaces between tags", lambda n: _fill("<tool_call>", SPACES, VALID["qwen_xml"][11:], n)),
    Hostile(
        "qwen_xml",
        "spaces after </parameter>",
        lambda n: _fill("<tool_call><function=f><parameter=i>1</parameter>", SPACES, "</function></tool_call>", n),
    ),
    Hostile(
        "qwen_xml",
        "spaces after a </function> that may end a value",
        lambda n: _fill("<tool_call><function=f><parameter=i>1</function>", SPACES, "</tool_call>", n),
    ),
    Hostile("qwen_xml", "binary noise", binary_noise),
    # -- markdown_tools -----------------------------------------------------------------------------
    Hostile("markdown_tools", "``` lines (content fences)", lambda n: _repeat("```\n", n)),
    Hostile("markdown_tools", "```save a lines (one unclosed call)", lambda n: _repeat("```save a\n", n)),
    Hostile("markdown_tools", "long info string", lambda n: _fill("```save ", "a ", "\nx\n```", n)),
    Hostile("markdown_tools", "body of ```x look-alike closers", lambda n: _fill("```save a\n", "```x\n", "```", n)),
    Hostile("markdown_tools", "body of 70-backtick lines", lambda n: _fill("```save a\n", "`" * 70 + "\n", "```", n)),
    Hostile("markdown_tools", "spaces after a closing run", lambda n: _fill("```save a\nx\n```", SPACES, "x\n```", n)),
    Hostile("markdown_tools", "many valid calls", lambda n: _lines(lambda i: f"```save f{i}\nx\n```\n", n)),
    Hostile("markdown_tools", "binary noise", binary_noise),
    # -- xml_tools ----------------------------------------------------------------------------------
    Hostile("xml_tools", "<tool-use> repeated", lambda n: _repeat("<tool-use>", n)),
    Hostile("xml_tools", "body of &amp; entities", lambda n: _fill('<tool-use><save args="a">', "&amp;", "</save>", n)),
    Hostile("xml_tools", "</sav look-alikes", lambda n: _fill('<tool-use><save args="a">', "</sav", "</save>", n)),
    Hostile("xml_tools", "body of newlines", lambda n: _fill('<tool-use><save args="a">', "\n", "</save>", n)),
    Hostile("xml_tools", "long args attribute", lambda n: _fill('<tool-use><save args="', "a ", '">x</save>', n)),
    Hostile("xml_tools", "valid elements", lambda n: _lines(lambda i: f'<save args="{i}">x</save>', n, "<tool-use>")),
    Hostile("xml_tools", "binary noise", binary_noise),
    # -- xlam_json ----------------------------------------------------------------------------------
    # each line may open a list of calls, and the text is valid JSON nested ever deeper (the helper
    # attack of 2026-12-05: read to the depth bound from every line, 250 µs a character)
    Hostile("xlam_json", "lines of [1, (JSON nesting on)", lambda n: _repeat("\n[1,", n)),
]
"""Shapes from the issue tracker, by hand, for the formats they were found in."""

SENTINEL = "zq9value"
NUMBER = 987654321


def _around(text: str, piece: str) -> tuple[str, str]:
    """What comes before and after `piece` in `text`."""
    i = text.index(piece)
    return text[:i], text[i + len(piece) :]


def written_hostiles(name: str, fmt: Format) -> list[Hostile]:
    """Shapes any format has, from its spec: each marker repeated, written calls by the thousand, a
    written call cut short and repeated, a value that never ends, long values of text and spaces,
    spaces after the opener and after a call, brackets nested deep in a value, noise."""
    valid = VALID[name]
    head, tail = _around(fmt.write([("save", {"path": "a.py", "content": SENTINEL})]), SENTINEL)
    deep_head, deep_tail = _around(fmt.write([("f", {"a": NUMBER})]), str(NUMBER))

    def call(i: int) -> str:
        return fmt.write([("save", {"path": f"a{i}.py", "content": "x"})]) + "\n"

    shapes = [Hostile(name, f"{marker} repeated", lambda n, m=marker: _repeat(m, n)) for marker in fmt.markers]
    shapes += [
        Hostile(name, "many written calls", lambda n: _lines(call, n)),
        Hostile(name, "a written call cut short, repeated", lambda n: _repeat(valid[: len(valid) // 2] + "\n", n)),
        Hostile(name, "a value that never ends", lambda n: _repeat("abc ", n, head)),
        Hostile(name, "a long value", lambda n: _fill(head, "abc ", tail, n)),
        Hostile(name, "a value of spaces", lambda n: _fill(head, SPACES, "x" + tail, n)),
        Hostile(name, "spaces after a written call", lambda n: _fill(valid, SPACES, "Done.", n)),
        Hostile(name, "deep [[[ in a value", lambda n: _nested(n, "[", "]", deep_head, deep_tail)),
        Hostile(name, "binary noise", binary_noise),
    ]
    if fmt.typed_values:  # values typed by the request's schema: the hostile part is the schema
        for key, what in (("union_items", "a 255-member union"), ("enum_items", "a 20,000-value enum")):
            before, after = _around(fmt.write([("f", {key: SENTINEL})]), SENTINEL)
            shapes.append(
                Hostile(
                    name,
                    f"an array typed by {what}",
                    lambda n, b=before, a=after: _fill(b + "[", '"1", ', '"1"]' + a, n),
                )
            )
    opener = fmt.markers[0] if fmt.markers else ""
    if opener and valid.startswith(opener):
        rest = valid[len(opener) :]
        shapes.append(Hostile(name, "spaces after the opener", lambda n: _fill(opener, SPACES, rest, n)))
    return shapes


def _all_hostiles() -> list[Hostile]:
    """The hand-made shapes, then every format's written ones (a name already taken is left out)."""
    shapes = list(HAND_MADE)
    taken = {(h.fmt, h.name) for h in shapes}
    for name, fmt in FORMATS.items():
        shapes += [h for h in written_hostiles(name, fmt) if (h.fmt, h.name) not in taken]
    return shapes


HOSTILE: list[Hostile] = _all_hostiles()
"""Every hostile input: for every registered format at least the written shapes."""
