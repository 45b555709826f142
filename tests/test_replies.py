"""toolbox.replies and toolbox.endpoints without a server: each endpoint's answer folds into the same
`Reply`, a breach of the endpoint's streaming rules is reported (never raised), and tools and
`tool_choice` are spelled the way each endpoint takes them. The real endpoints, through the real
clients: tests/test_e2e_endpoints.py."""

from __future__ import annotations

from toolcall_parsers.toolbox.endpoints import messages_tools, responses_tools, tool_choice_for
from toolcall_parsers.toolbox.replies import (
    chat_reply,
    messages_reply,
    messages_stream_reply,
    responses_reply,
    responses_stream_reply,
)

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}},
}


def responses_events(arguments_deltas: list[str], done: str, item_arguments: str | None = None) -> list[dict]:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
    final_item = {**item, "arguments": done if item_arguments is None else item_arguments}
    message = {"type": "message", "content": [{"type": "output_text", "text": "Hi."}]}
    return [
        {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "Hi"},
        {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "."},
        {"type": "response.output_text.done", "item_id": "m", "content_index": 0, "text": "Hi."},
        {"type": "response.output_item.added", "item": item},
        *({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": d} for d in arguments_deltas),
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": done},
        {"type": "response.output_item.done", "item": final_item},
        {"type": "response.completed", "response": {"status": "completed", "output": [message, final_item]}},
    ]


def test_a_responses_stream_folds_to_what_the_finished_response_holds():
    events = responses_events(['{"a": ', "1}"], '{"a": 1}')
    reply = responses_stream_reply(events)
    assert (reply.content, reply.calls, reply.stop, reply.problems) == (
        "Hi.",
        [("call_1", "f", '{"a": 1}')],
        "tool_calls",
        [],
    )
    assert responses_reply(events[-1]["response"]).calls == reply.calls


def test_a_responses_stream_whose_fragments_do_not_add_up_is_reported():
    reply = responses_stream_reply(responses_events(['{"a": ', "2}"], '{"a": 1}'))
    assert any("argument deltas" in p for p in reply.problems)
    reply = responses_stream_reply(responses_events(['{"a": 1}'], '{"a": 1}', item_arguments='{"a": 3}'))
    assert any("the item's arguments" in p for p in reply.problems)
    reply = responses_stream_reply(responses_events(['{"a": 1}'], '{"a": 1}')[:-1])
    assert "the stream ended without response.completed" in reply.problems


def test_a_responses_cut_by_max_output_tokens_stops_for_length():
    incomplete = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}
    assert responses_reply(incomplete).stop == "length"


def messages_events(tool_start: dict, fragments: list[str], stop: str | None = "tool_use") -> list[dict]:
    events = [
        {"type": "message_start", "message": {"content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "input": {}, **tool_start}},
        *(
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": f}}
            for f in fragments
        ),
        {"type": "content_block_stop", "index": 1},
    ]
    return events + ([{"type": "message_delta", "delta": {"stop_reason": stop}}] if stop else [])


def test_a_messages_stream_folds_text_and_tool_use_blocks():
    reply = messages_stream_reply(messages_events({"id": "t1", "name": "f"}, ['{"a"', ": 1}"]))
    assert (reply.content, reply.calls, reply.stop, reply.problems) == (
        "Hi.",
        [("t1", "f", '{"a": 1}')],
        "tool_calls",
        [],
    )
    finished = {
        "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "Hi."}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
    }
    assert messages_reply(finished).calls == reply.calls and messages_reply(finished).content == "Hi."


def test_a_messages_stream_breaking_its_rules_is_reported():
    assert any(
        "without its id or name" in p for p in messages_stream_reply(messages_events({"id": "t1"}, ["{}"])).problems
    )
    assert any(
        "not JSON" in p for p in messages_stream_reply(messages_events({"id": "t1", "name": "f"}, ['{"a"'])).problems
    )
    assert any(
        "not a JSON object" in p
        for p in messages_stream_reply(messages_events({"id": "t", "name": "f"}, ["[1]"])).problems
    )
    no_stop = messages_stream_reply(messages_events({"id": "t1", "name": "f"}, ["{}"], stop=None))
    assert "the stream ended without a message_delta" in no_stop.problems
    assert messages_stream_reply(messages_events({"id": "t1", "name": "f"}, ["{}"], stop="max_tokens")).stop == "length"


def test_chat_arguments_that_are_not_a_string_are_a_problem_not_a_crash():
    completion = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}],
                },
            }
        ]
    }
    reply = chat_reply(completion)
    assert reply.calls == [] and any("not a JSON string" in p for p in reply.problems)


def test_tools_and_tool_choice_in_each_endpoints_spelling():
    assert responses_tools([WEATHER]) == [
        {"type": "function", "name": "get_weather", "description": "d", "parameters": {"type": "object"}}
    ]
    assert messages_tools([WEATHER]) == [
        {"name": "get_weather", "input_schema": {"type": "object"}, "description": "d"}
    ]
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert [tool_choice_for("responses", c) for c in ("auto", "required", "none", named)] == [
        "auto",
        "required",
        "none",
        {"type": "function", "name": "get_weather"},
    ]
    assert [tool_choice_for("messages", c) for c in ("auto", "required", "none", named)] == [
        {"type": "auto"},
        {"type": "any"},
        {"type": "none"},
        {"type": "tool", "name": "get_weather"},
    ]
    assert tool_choice_for("chat", named) is named


def test_a_block_started_twice_or_a_delta_of_the_wrong_kind_is_reported():
    """The reviewer's cases: a repeated index listed the call twice, a text_delta in a tool_use
    block became its arguments; each is now a problem."""
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f"}}
    stop = {"type": "content_block_stop", "index": 0}
    end = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}
    twice = messages_stream_reply(
        [start, stop, {**start, "content_block": {**start["content_block"], "id": "u"}}, stop, end]
    )
    assert "block 0 started twice" in twice.problems and len(twice.calls) == 1
    text_in_call = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": '{"a": 1}'}}
    wrong = messages_stream_reply([start, text_in_call, stop, end])
    assert any("text_delta in tool_use block 0" in p for p in wrong.problems) and wrong.calls == [("t", "f", "{}")]
    late = {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}
    assert "a delta for block 0, which is not open" in messages_stream_reply([start, stop, late, end]).problems
    kept = {**start, "content_block": {**start["content_block"], "input": {"a": 1}}}
    assert messages_stream_reply([kept, stop, end]).calls == [("t", "f", '{"a": 1}')]  # no deltas: the start's input


def test_a_failed_responses_answer_or_an_error_event_is_a_problem():
    failed = responses_stream_reply([{"type": "response.failed", "response": {"status": "failed", "output": []}}])
    assert any("'failed'" in p for p in failed.problems)
    assert any("'cancelled'" in p for p in responses_reply({"status": "cancelled", "output": []}).problems)
    error = responses_stream_reply([{"type": "error", "message": "boom"}])
    assert "an error event: boom" in error.problems
    unended = [
        {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "x"},
        {"type": "response.completed", "response": {"status": "completed", "output": []}},
    ]
    assert any("never came to their done event" in p for p in responses_stream_reply(unended).problems)


def test_arguments_cut_by_max_tokens_are_the_raw_text_and_one_problem_on_every_endpoint():
    cut = '{"a": "x'
    chat = chat_reply({"choices": [{"finish_reason": "length", "message": {"tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": cut}}]}}]})  # fmt: skip
    item = {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": cut}
    responses = responses_reply(
        {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [item]}
    )
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "c", "name": "f"}}
    fragment = {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": cut}}
    messages = messages_stream_reply(
        [start, fragment, {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}]
    )
    for reply in (chat, responses, messages):
        assert reply.calls == [("c", "f", cut)] and reply.stop == "length"
        assert [p for p in reply.problems if "not JSON" in p] == [f"arguments of 'f' are not JSON: {cut!r}"]


def test_a_malformed_answer_is_a_problem_not_an_exception():
    assert chat_reply({"choices": []}).problems
    assert chat_reply({"choices": [{"message": {"tool_calls": [{"id": "c", "function": None}]}}]}).problems
    assert responses_stream_reply([{"type": "response.output_text.delta", "delta": "x"}]).problems
    assert tool_choice_for("responses", None) == "auto" and tool_choice_for("messages", None) == {"type": "auto"}
