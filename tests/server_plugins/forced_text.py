"""A test-only vLLM logits processor that makes the model write a given text, on any endpoint.

SmolLM2-135M cannot call tools on its own, so the end-to-end tests force the exact raw output they
want parsed. Chat Completions can force it through structured outputs, but `/v1/messages` has no
such field; every endpoint does pass a request's `vllm_xargs` to the sampling parameters, and vLLM
loads custom logits processors with `--logits-processors`. With `{"force_text": TEXT}` in a
request's `vllm_xargs`, this processor allows exactly the tokens of TEXT (the served tokenizer's
encoding), then the end-of-sequence token; requests without it are untouched. The detokenizer,
serving layer and tool parser then run for real on those token deltas.

Loaded by the e2e server fixtures as `forced_text:ForcedText` with this folder on `PYTHONPATH`; it is
not part of the shipped package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from vllm import SamplingParams
from vllm.tokenizers.registry import cached_tokenizer_from_config
from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

FORCE_XARG = "force_text"
Forcing = Callable[[list[int], torch.Tensor], torch.Tensor]


class ForcedText(AdapterLogitsProcessor):
    """Forces a request's `vllm_xargs["force_text"]`, token by token, then end of sequence."""

    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
        super().__init__(vllm_config, device, is_pin_memory)
        self._tokenizer = cached_tokenizer_from_config(vllm_config.model_config)

    def is_argmax_invariant(self) -> bool:
        return False

    def new_req_logits_processor(self, params: SamplingParams) -> Forcing | None:
        text = (params.extra_args or {}).get(FORCE_XARG)
        if not isinstance(text, str):
            return None
        ids = [*self._tokenizer.encode(text, add_special_tokens=False), self._tokenizer.eos_token_id]

        def force(output_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
            target = ids[min(len(output_ids), len(ids) - 1)]
            logits.fill_(float("-inf"))
            logits[target] = 0.0
            return logits

        return force
