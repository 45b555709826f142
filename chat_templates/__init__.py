"""Chat templates shipped with toolcall-parsers, one `<format>.jinja` per wire format."""
