"""The tool definitions the demo, the capture and the smoke scripts (and the e2e tests) send."""

from __future__ import annotations

from typing import Any


def function_tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAI function tool with an object schema."""
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


GET_WEATHER = function_tool("get_weather", "Current weather for a city", {"city": {"type": "string"}}, ["city"])
SEARCH_WEB = function_tool("search_web", "Search the web", {"query": {"type": "string"}}, ["query"])
SEND_EMAIL = function_tool(
    "send_email",
    "Send an email",
    {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
    ["to", "subject"],
)
