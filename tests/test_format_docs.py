"""docs/formats.md is written by scripts/format_docs.py from each format's docstring and spec, with the
hand-written notes kept between their markers. These tests fail when a docstring or a spec changes
and the page was not written again (`python scripts/format_docs.py`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import format_docs
import pytest
from toolcall_parsers.formats import FORMATS


def _page() -> str:
    return format_docs.DOCS.read_text(encoding="utf-8")


def test_the_committed_page_is_what_the_generator_writes(capsys: pytest.CaptureFixture[str]) -> None:
    assert format_docs.main(["--check"]) == 0, capsys.readouterr().err


def test_every_format_has_a_section_with_its_docstring_and_spec_facts() -> None:
    page = _page()
    for name, fmt in FORMATS.items():
        assert f"\n## `{name}`\n" in page
        assert f"- [`{name}`](#{name})" in page
        assert format_docs.docstring_markdown(format_docs.format_module(fmt).__doc__ or "") in page
        assert "\n".join(format_docs.facts(fmt, FORMATS)) in page


def test_check_names_the_stale_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "formats.md"
    page.write_text(_page().replace("\n## `tagged`\n\n", "\n## `tagged`\n\nAn edit by hand.\n\n"), encoding="utf-8")
    assert format_docs.main(["--check", "--path", str(page)]) == 1
    err = capsys.readouterr().err
    assert "tagged" in err
    assert "hermes_json" not in err
    assert format_docs.main(["--path", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == _page()


def test_a_format_without_notes_gets_a_section_and_an_empty_notes_block() -> None:
    formats = {**FORMATS, "zz_new": dataclasses.replace(FORMATS["tagged"], name="zz_new")}
    page = format_docs.render(formats, _page())
    assert "\n## `zz_new`\n" in page
    assert "- [`zz_new`](#zz_new)" in page
    assert "<!-- notes: zz_new -->\n<!-- /notes: zz_new -->" in page
    assert page.index("## `xml_tools`") < page.index("## `zz_new`")  # by name
    assert format_docs.read_notes(page)["tagged"] == format_docs.read_notes(_page())["tagged"]


def test_notes_survive_a_rewrite_byte_for_byte() -> None:
    odd = "\n  trailing spaces  \r\n\t- a tab, `code`, <b>html</b>, ## not a heading\n\n\n```\nfenced\n```\n"
    page = format_docs.render(FORMATS, "")  # every notes block empty
    edited = page.replace(
        "<!-- notes: hermes_json -->\n<!-- /notes: hermes_json -->",
        odd.join(["<!-- notes: hermes_json -->", "<!-- /notes: hermes_json -->"]),
    )
    edited = edited.replace("## `hermes_json`", "## `hermes_json` edited by hand")  # outside notes: rewritten
    again = format_docs.render(FORMATS, edited)
    assert format_docs.read_notes(again)["hermes_json"] == odd
    assert "edited by hand" not in again
    assert format_docs.render(FORMATS, again) == again
    assert format_docs.read_notes(format_docs.render(FORMATS, _page())) == format_docs.read_notes(_page())


def test_notes_of_no_registered_format_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "formats.md"
    text = _page() + "\n<!-- notes: gone_format -->\nkept?\n<!-- /notes: gone_format -->\n"
    page.write_text(text, encoding="utf-8")
    assert format_docs.main(["--path", str(page)]) == 1
    assert "gone_format" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == text


def test_a_literal_block_becomes_a_fenced_block() -> None:
    doc = (
        "`demo`: a lead sentence.\n\n"
        "Grammar, as this machine reads it::\n\n"
        "    output := (text | block)*\n"
        "    ws     := [ \\t\\r\\n]*      # a backslash stays one\n\n"
        "        nested := deeper lines keep their indent\n\n"
        "A paragraph after it, with `code`.\n\n"
        "- a list item\n"
        "  continued\n\n"
        "::\n\n"
        '    fence := "```"\n'
    )
    assert format_docs.docstring_markdown(doc) == (
        "`demo`: a lead sentence.\n\n"
        "Grammar, as this machine reads it:\n\n"
        "```\n"
        "output := (text | block)*\n"
        "ws     := [ \\t\\r\\n]*      # a backslash stays one\n\n"
        "    nested := deeper lines keep their indent\n"
        "```\n\n"
        "A paragraph after it, with `code`.\n\n"
        "- a list item\n"
        "  continued\n\n"
        "````\n"
        'fence := "```"\n'
        "````"
    )


def test_code_spans_hold_any_backticks() -> None:
    assert format_docs.code("<tool_call>") == "`<tool_call>`"
    assert format_docs.code("```") == "` ``` `"
    assert format_docs.code("a`b") == "`` a`b ``"
    assert format_docs.code("a\nb") == "`a\\nb`"


def test_the_readme_format_table_is_written_from_the_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every format has its row (name, models, engine names, strict, template); a hand edit is stale."""
    table = format_docs.readme_table(FORMATS)
    for name, fmt in FORMATS.items():
        assert f"| [`{name}`](docs/formats.md#{name}) | {fmt.models} |" in table
    readme = tmp_path / "README.md"
    text = format_docs.README.read_text(encoding="utf-8")
    assert table in text
    readme.write_text(text.replace(FORMATS["tagged"].models, "edited by hand"), encoding="utf-8")
    assert format_docs.main(["--check", "--readme", str(readme)]) == 1
    assert "format table is stale" in capsys.readouterr().err
    assert format_docs.main(["--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == text
