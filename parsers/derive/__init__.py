"""Formats derived from what a model ships: its response template (`response_template`)."""
