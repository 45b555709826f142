"""Formats derived from what a model ships: its response template and its chat template."""
