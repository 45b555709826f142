"""The vLLM adapter. Importing this package needs vLLM; the rest of toolcall_parsers does not."""
