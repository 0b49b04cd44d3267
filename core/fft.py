"""``opweave.fft``: discrete Fourier transforms (PyTorch's torch.fft, NumPy-compatible).

``opweave.fft.NAME`` is the canonical op ``fft_NAME`` (``opweave.ops.fft_NAME``).
"""

from ._namespaces import prefixed

__getattr__, __dir__ = prefixed("opweave.fft", "fft_")
