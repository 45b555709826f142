"""The operator's toolbox behind `toolcall-parsers detect / parse --stream / smoke / capture`: one
module per command, each usable from Python; `cli.py` only parses arguments and prints."""
