"""The SGLang adapter: one `BaseFormatDetector` per format (`detectors`), over one generic detector
(`adapter`), registered into SGLang by `plugin.register` (entry point group `sglang.srt.plugins`).

Importing this package imports nothing from SGLang; its modules do.
"""
