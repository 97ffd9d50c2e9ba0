"""Device and precision: CUDA when asked for (or present, with device auto) and otherwise the CPU;
bf16, fp16 or fp32 from the precision setting, the device and the model type (never fp16 for
T5-family models, whose activations overflow it)."""

from __future__ import annotations

from ...common.errors import AicdError
from ...models.pretrained import choose_device  # noqa: F401  (the encoders' device, declared once)


def no_fp16(model_type: str | None) -> bool:
    """T5-family models (T5, mT5, UMT5, LongT5, CodeT5/CodeT5+) overflow in fp16: their
    activations exceed 65504 and the loss turns NaN. bf16 or fp32 only."""
    return bool(model_type) and "t5" in model_type.lower()


def choose_precision(precision: str, device: str, model_type: str | None = None,
                     bf16_supported: bool | None = None) -> str:
    """auto: fp32 on CPU; on a GPU bf16 when it has it, else fp16 (fp32 for T5-family models).
    An explicit fp16 for a T5-family model is a one-line error."""
    if precision == "fp16" and no_fp16(model_type):
        raise AicdError(f"precision fp16 is not supported for {model_type} models (T5-family activations overflow "
                        "fp16 and the loss turns NaN): set precision to auto, bf16 or fp32")
    if precision != "auto":
        return precision
    if device == "cpu":
        return "fp32"
    if bf16_supported is None:
        import torch
        bf16_supported = torch.cuda.is_bf16_supported()
    if bf16_supported:
        return "bf16"
    return "fp32" if no_fp16(model_type) else "fp16"
