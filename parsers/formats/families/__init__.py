"""Family machines configured by data: each module holds one family's machine and its spec, a frozen
dataclass whose one value per format gives that format's stream, writer, constraints and `Format`
(docs/adding-a-format.md). The older families still live beside their formats in `formats/`."""
