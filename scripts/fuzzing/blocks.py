"""Blocks of calls with known results: the `Part` of a document, and the grammar-aware generators.

The generators here are optional per-format enrichments: each varies the spelling its format accepts
(key orders, quoting, separators, optional markers, schema-typed raw values, shell quoting) beyond
what the format's writer produces. A format without one is still fuzzed, through the generic
`generate.written_block`, which is built on the spec's `write` alone.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .values import (
    ALNUM,
    NAME_HEAD,
    dump_json,
    gen_arguments,
    gen_float,
    gen_ident,
    gen_int,
    gen_json,
    gen_name,
    gen_string,
    gen_word,
    py_literal,
)


@dataclass
class Part:
    """A piece of a generated document: prose (content) or a block of calls with known results."""

    text: str
    prose: bool
    calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)  # name, args, model id
    tools: list[dict[str, Any]] = field(default_factory=list)
    guard_after: bool = False  # the block ends in a literal (`null`): what follows must not continue it
    last_only: bool = False  # the block has no end marker: nothing but whitespace may follow
    lead: str = ""  # text before the block that stays content (the line break a fence starts after)
    after_ok: Callable[[str], bool] | None = None  # whether prose may follow the block
    loose: bool = False  # written by the spec's writer: whitespace next to it may be kept or trimmed


def tool(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required is not None:
        params["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": params}}


def hermes_block(rng: random.Random) -> Part:
    """`<tool_call>` with one call object in any of the shapes models write, an array of them, or
    two objects in one block."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]

    def obj(name: str, args: dict[str, Any]) -> dict[str, Any]:
        shape = rng.choice(["name-args", "args-name", "name-params", "function", "args-string", "no-args"])
        if shape == "no-args" and not args:
            return {"name": name}
        if shape == "args-name":
            return {"arguments": args, "name": name}
        if shape == "name-params":
            return {"name": name, "parameters": args}
        if shape == "function":
            return {"function": {"name": name, "arguments": args}}
        if shape == "args-string":
            return {"name": name, "arguments": json.dumps(args)}
        return {"name": name, "arguments": args}

    if len(calls) > 1 and rng.random() < 0.5:
        body = rng.choice(["", "\n", " "]).join(dump_json(rng, obj(n, a)) for n, a in calls)
    elif len(calls) > 1 or rng.random() < 0.1:
        body = dump_json(rng, [obj(n, a) for n, a in calls])
    else:
        body = dump_json(rng, obj(*calls[0]))
    sep = rng.choice(["", "\n", " "])
    tools = [tool(n) for n, _ in calls] if rng.random() < 0.3 else []
    return Part(f"<tool_call>{sep}{body}{sep}</tool_call>", False, [(n, a, None) for n, a in calls], tools)


AMBIGUOUS_CLOSE = re.compile(r"</parameter>\s*(<parameter|</invoke>|$)")
GUESS_WORD = re.compile(r"[A-Za-z][A-Za-z ]*")


def minimax_value(
    rng: random.Random, typed: bool, ambiguous: re.Pattern[str] = AMBIGUOUS_CLOSE
) -> tuple[dict[str, Any] | None, str, Any]:
    """(schema, raw text, typed value) for one parameter; `typed=False` only where a schema-less
    guess is unambiguous; `ambiguous` finds the text a raw value cannot hold."""
    if not typed:
        kind = rng.choice(["word", "int", "float", "true", "false", "null", "object", "array", "zip"])
        if kind == "word":
            word = rng.choice(string.ascii_letters) + gen_word(rng, string.ascii_letters + " ", 10)
            word = word if word.lower() not in ("true", "false", "null") else word + "x"
            return None, word, word
        if kind == "zip":
            return None, "02134", "02134"
        if kind in ("true", "false", "null"):
            return None, kind, json.loads(kind)
        value = {"int": gen_int(rng), "float": -3.5, "object": {"a": [1, "x"]}, "array": [1, None, "y"]}[kind]
        return None, json.dumps(value), value
    kind = rng.choice(["string", "string", "integer", "number", "boolean", "null", "object", "array", "mixed"])
    if kind == "string":
        value = gen_string(rng)
        while ambiguous.search(value):
            value = gen_string(rng)
        return {"type": rng.choice(["string", "string", "str"])}, value, value
    if kind == "integer":
        n = gen_int(rng)
        raw = rng.choice([str(n), f" {n}\n", f"{n}.0" if abs(n) < 2**53 else str(n)])  # past 2**53 `.0` is lossy
        return {"type": rng.choice(["integer", "integer", "int"])}, raw, n
    if kind == "number":
        x: float | int = rng.choice([gen_float(rng), gen_int(rng)])
        return {"type": "number"}, json.dumps(x), x
    if kind == "boolean":
        b = rng.random() < 0.5
        return {"type": "boolean"}, rng.choice([json.dumps(b), str(b), json.dumps(b).upper()]), b
    if kind == "null":
        return {"type": "null"}, rng.choice(["null", "Null", "NULL"]), None
    if kind in ("object", "array"):
        value: Any = (
            {gen_string(rng): gen_json(rng, 1) for _ in range(rng.randrange(3))}
            if kind == "object"
            else [gen_json(rng, 1) for _ in range(rng.randrange(3))]
        )
        raw = dump_json(rng, value)
        if ambiguous.search(raw):  # raw JSON is not escaped either: a closing tag in it is ambiguous
            return {"type": "null"}, "null", None
        return {"type": kind}, raw, value
    if rng.random() < 0.5:  # string or null: the exact text `null` is null
        return {"type": ["string", "null"]}, "null", None
    return {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "42", 42  # JSON of a member is that member


def xml_calls(
    rng: random.Random,
    ambiguous: re.Pattern[str],
    write_param: Callable[[random.Random, str, str], str],
    write_call: Callable[[random.Random, str, str], str],
) -> tuple[list[tuple[str, dict[str, Any], None]], list[dict[str, Any]], list[str]]:
    """One to three calls for the XML formats (`minimax_xml`, `qwen_xml`): names, raw parameter
    values typed by a generated schema (80% of blocks) or guessable without one; returns the calls,
    the tools and each call written (`write_param(rng, key, raw)`, `write_call(rng, name, params)`)."""
    calls, tools, written = [], [], []
    typed = rng.random() < 0.8
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name = gen_name(rng) + f"_{rng.randrange(10**9)}"
        args: dict[str, Any] = {}
        props: dict[str, Any] = {}
        params = []
        for _ in range(rng.randrange(5)):
            key = gen_name(rng)
            if key in args:
                continue
            schema, raw, value = minimax_value(rng, typed and rng.random() < 0.95, ambiguous)
            if schema is not None:
                props[key] = schema
            args[key] = value
            params.append(write_param(rng, key, raw))
        if typed:
            tools.append(tool(name, props))
        written.append(write_call(rng, name, "".join(params)))
        calls.append((name, args, None))
    return calls, tools, written


def minimax_block(rng: random.Random) -> Part:
    """`<minimax:tool_call>` with invokes whose raw values are typed by a generated tool schema."""

    def param(rng: random.Random, key: str, raw: str) -> str:
        return f"<parameter name={quote_name(rng, key)}>{raw}</parameter>" + rng.choice(["", "\n"])

    def invoke(rng: random.Random, name: str, params: str) -> str:
        sep = rng.choice(["", "\n"])
        return f"<invoke name={quote_name(rng, name)}>{sep}{params}</invoke>{sep}"

    calls, tools, invokes = xml_calls(rng, AMBIGUOUS_CLOSE, param, invoke)
    end = rng.random() < 0.9
    text = "<minimax:tool_call>" + rng.choice(["", "\n"]) + "".join(invokes) + ("</minimax:tool_call>" if end else "")
    return Part(text, False, calls, tools, last_only=not end)


def quote_name(rng: random.Random, name: str) -> str:
    return rng.choice([f'"{name}"', f'"{name}"', f"'{name}'", name])


def mistral_block(rng: random.Random) -> Part:
    """`[TOOL_CALLS]` in either generation: a JSON array (or object) of calls, or v11+
    `name[CALL_ID]id[ARGS]{..}` per call, with or without `[ARGS]`."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    if rng.random() < 0.4:
        items = [{"name": n, "arguments": a} for n, a in calls]
        body = dump_json(rng, items[0] if len(items) == 1 and rng.random() < 0.3 else items)
        return Part("[TOOL_CALLS]" + rng.choice(["", " "]) + body, False, [(n, a, None) for n, a in calls])
    out, expected, guard = [], [], False
    for name, args in calls:
        model_id = None
        head = f"[TOOL_CALLS]{name}"
        if rng.random() < 0.3:
            model_id = rng.choice(["".join(rng.choices(ALNUM, k=9)), "abc", "call_1234"])
            head += f"[CALL_ID]{model_id}"
        args_marker = rng.choice(["[ARGS]", "[ARGS]", "[ARGS] ", ""]) if model_id is None else "[ARGS]"
        guard = not args and bool(args_marker) and rng.random() < 0.3  # `null` / a string need [ARGS]
        string_args = bool(args_marker) and rng.random() < 0.1
        body = "null" if guard else json.dumps(json.dumps(args)) if string_args else dump_json(rng, args)
        out.append(head + args_marker + body)
        expected.append((name, args, model_id))
    return Part("".join(out), False, expected, guard_after=guard)


def llama_block(rng: random.Random) -> Part:
    """A Python call list at the start of a line, after `<|python_tag|>`, or in
    `<|python_start|>..<|python_end|>`, arguments as random literal trees."""
    calls = []
    rendered = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name = ".".join(gen_ident(rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))
        args = gen_arguments(rng, gen_ident)
        eq = rng.choice(["=", "=", " = "])
        sep = rng.choice([", ", ",", ",\n  "])
        kwargs = sep.join(f"{k}{eq}{py_literal(rng, v)}" for k, v in args.items())
        trailing = "," if args and rng.random() < 0.1 else ""
        rendered.append(f"{name}({kwargs}{trailing})")
        calls.append((name, args, None))
    prefix = rng.choice(["\n", "\n", "<|python_tag|>", "<|python_start|>"])
    suffix = "<|python_end|>" if prefix == "<|python_start|>" and rng.random() < 0.7 else ""
    body = rng.choice([", ", ","]).join(rendered)
    return Part(f"{prefix}[{body}]{suffix}", False, calls)


def tagged_block(rng: random.Random) -> Part:
    """`<TOOL_CALLS>` then `name {json}` per line; without `</TOOL_CALLS>` only at the very end."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    lines = []
    for name, args in calls:
        r = rng.random()
        body = "null" if not args and r < 0.3 else json.dumps(json.dumps(args)) if r < 0.1 else dump_json(rng, args)
        lines.append(f"{name} {body}" + rng.choice(["\n", "\n", "\n\n", " \n"]))
    end = rng.random() < 0.8
    text = "<TOOL_CALLS>" + rng.choice(["\n", "\n", "", " "]) + "".join(lines) + ("</TOOL_CALLS>" if end else "")
    return Part(text, False, [(n, a, None) for n, a in calls], last_only=not end)


def llama_json_block(rng: random.Random) -> Part:
    """Llama 3.x JSON calls on a line of their own or after `<|python_tag|>`, joined by `;`, a line
    break or nothing, in every head shape the format reads; or a built-in `NAME.call(k=literal)`."""
    if rng.random() < 0.15:
        name = gen_ident(rng)
        args = gen_arguments(rng, gen_ident)
        kwargs = rng.choice([", ", ","]).join(f"{k}={py_literal(rng, v)}" for k, v in args.items())
        return Part(f"<|python_tag|>{name}.call({kwargs})", False, [(name, args, None)], after_ok=_no_lone_semicolon)
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    objects = []
    for name, args in calls:
        head: dict[str, Any] = {"type": "function", "name": name} if rng.random() < 0.2 else {"name": name}
        head[rng.choice(["parameters", "parameters", "arguments"])] = json.dumps(args) if rng.random() < 0.1 else args
        if rng.random() < 0.1:
            head["id"] = gen_string(rng)  # keys after the arguments are ignored
        objects.append(dump_json(rng, head))
    start = rng.choice(["\n", "\n", "\n  ", "\r\n", "<|python_tag|>", "<|python_tag|>\n"])
    lead = "\n" if start[0] == "<" and rng.random() < 0.5 else ""  # a line break before the tag is content
    body = "".join(obj + rng.choice([";", "; ", ";\n", "\n", ""]) for obj in objects[:-1]) + objects[-1]
    return Part(start + body, False, [(n, a, None) for n, a in calls], lead=lead, after_ok=_no_lone_semicolon)


def _no_lone_semicolon(prose: str) -> bool:
    """After a llama_json call (a built-in one too), prose of only `;` and whitespace would join the
    next call to it."""
    return not re.fullmatch(r"\s*;[\s;]*", prose)


QWEN_AMBIGUOUS = re.compile(
    r"</parameter>\s*(<parameter=|</function>|$)|</function>\s*(</tool_call>|<tool_call>|<function=|$)"
    r"|(^|\n)<parameter="
)


def qwen_block(rng: random.Random) -> Part:
    """`<tool_call>` with `<function=..>` / `<parameter=..>` tags, raw values typed by a generated
    schema (the `minimax_xml` rules), one call or several per block."""

    def param(rng: random.Random, key: str, raw: str) -> str:
        framed = raw[:1] == "\n" or raw[-1:] == "\n" or rng.random() < 0.7
        raw = f"\n{raw}\n" if framed else raw
        return f"<parameter={key}>{raw}</parameter>" + rng.choice(["\n", "\n", ""])

    def function(rng: random.Random, name: str, params: str) -> str:
        sep = rng.choice(["\n", "\n", ""])
        return f"<function={name}>{sep}{params}</function>"

    calls, tools, functions = xml_calls(rng, QWEN_AMBIGUOUS, param, function)
    if rng.random() < 0.3:  # several functions in one block
        blocks = ["<tool_call>\n" + "\n".join(functions) + "\n</tool_call>"]
    else:
        blocks = [f"<tool_call>\n{f}\n</tool_call>" for f in functions]
    end = rng.random() < 0.9
    text = "".join(blocks)  # a line break between blocks is content
    return Part(text if end else text.removesuffix("\n</tool_call>"), False, calls, tools, last_only=not end)


WORD_ALPHABET = string.ascii_letters + string.digits + "._/-"
TOUGH_WORDS = ["a b", "it's", 'say "hi"', "back\\slash", "$HOME", "", "*.py", "x&y", "<p>", "tab\there"]


def gen_words(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(TOUGH_WORDS) if rng.random() < 0.3 else rng.choice(NAME_HEAD) + gen_word(rng, WORD_ALPHABET)
        for _ in range(count)
    ]


def shell_quote(rng: random.Random, word: str) -> str:
    """`word` as one POSIX shell word, in one of the quotings that splits back to it."""
    if word and re.fullmatch(r"[A-Za-z0-9._/-]+", word) and rng.random() < 0.7:
        return word
    if "'" not in word and rng.random() < 0.5:
        return f"'{word}'"
    if rng.random() < 0.5:
        return '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
    return "".join("\\" + c if not c.isalnum() else c for c in word) or "''"


def block_tool(rng: random.Random) -> tuple[str, dict[str, Any], list[str], str, dict[str, Any]]:
    """A tool for gptme-style blocks: its name, schema, words, body ("" when it takes none), and
    the arguments they map to."""
    name = gen_ident(rng) + f"_{rng.randrange(10**9)}"
    keys = list(dict.fromkeys(gen_ident(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))))
    optional = {gen_ident(rng) + "_opt": {"type": rng.choice(["string", "integer"])}} if rng.random() < 0.3 else {}
    props = {k: {"type": rng.choice(["string", "string", ["string", "null"]])} for k in keys} | optional
    with_body = bool(keys) and rng.random() < 0.8
    words = gen_words(rng, len(keys) - with_body)
    body = ""
    if with_body:
        body = gen_string(rng).replace("\r", "") if rng.random() < 0.7 else rng.choice(["", "\n", "x\n\ny", "  z  "])
    args = dict(zip(keys, [*words, body] if with_body else words, strict=True))
    return name, tool(name, props, keys), words, body, args


def fence_run(rng: random.Random, body: str) -> str:
    """An opening fence that no line of `body` can close."""
    char = rng.choice("`~")
    longest = max((len(m.group()) for m in re.finditer(re.escape(char) + "+", body)), default=0)
    return char * max(3, longest + 1) if rng.random() < 0.8 else char * (max(3, longest + 1) + rng.randrange(3))


def markdown_block(rng: random.Random) -> Part:
    """A fence whose info string is a declared tool and its shell-quoted words, at a line start."""
    name, schema, words, body, args = block_tool(rng)
    fence = fence_run(rng, body)
    info = " ".join([name, *(shell_quote(rng, w) for w in words)])
    newline = rng.choice(["\n", "\n", "\r\n"])
    text = f"{rng.choice(['', '', ' ', '   '])}{fence}{info}{newline}"
    text += (body + newline if body or rng.random() < 0.5 else "") + fence + rng.choice(["\n", "\n", " \n"])
    return Part(text, False, [(name, args, None)], [schema], lead="\n")


def xml_escape(rng: random.Random, text: str, quote: str = "") -> str:
    out = []
    for c in text:
        if c == "&" or c == "<" or c == quote or c == "\r":
            out.append(rng.choice({"&": ["&amp;", "&#38;"], "<": ["&lt;", "&#60;"], '"': ["&quot;"],
                                   "'": ["&apos;"], "\r": ["&#13;", "&#xD;"]}[c]))  # fmt: skip
        elif c == ">" and rng.random() < 0.3:
            out.append("&gt;")
        else:
            out.append(c)
    return "".join(out)


def xml_tools_block(rng: random.Random) -> Part:
    """`<tool-use>` with one element per call, named after a declared tool, `args` shell-quoted and
    entity-escaped, the body escaped, with or without framing line breaks."""
    calls, tools, elements = [], [], []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name, schema, words, body, args = block_tool(rng)
        quote = rng.choice(['"', "'"])
        attr = f" args={quote}{xml_escape(rng, ' '.join(shell_quote(rng, w) for w in words), quote)}{quote}"
        attr = attr if words or rng.random() < 0.3 else ""
        inner = xml_escape(rng, body)
        if body[:1] == "\n" or body[-1:] == "\n" or rng.random() < 0.5:
            inner = rng.choice(["\n", "\r\n"]) + inner + rng.choice(["\n", "\r\n"])
        elements.append(f"<{name}{attr}>{inner}</{name}>")
        calls.append((name, args, None))
        tools.append(schema)
    end = rng.random() < 0.9
    sep = rng.choice(["", "\n", " \n "])
    text = "<tool-use>" + sep + sep.join(elements) + sep + ("</tool-use>" if end else "")
    return Part(text, False, calls, tools, last_only=not end)


BLOCKS: dict[str, Callable[[random.Random], Part]] = {
    "hermes_json": hermes_block,
    "minimax_xml": minimax_block,
    "mistral_json": mistral_block,
    "llama_pythonic": llama_block,
    "tagged": tagged_block,
    "llama_json": llama_json_block,
    "qwen_xml": qwen_block,
    "markdown_tools": markdown_block,
    "xml_tools": xml_tools_block,
}
"""The grammar-aware generators, by format: optional. A format without one is fuzzed through the
generic `generate.written_block` (its spec's writer) alone; one with it, through both."""
