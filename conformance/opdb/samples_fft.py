"""Schema-driven sample overrides for the fft ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

from .schema_samples import cplx, t

OVERRIDES: dict[str, dict] = {
    "fft_fftfreq": {"n": 5},
    "fft_rfftfreq": {"n": 5},
    "stft": {"self": t(16), "n_fft": 4, "return_complex": True},
    "istft": {"self": cplx(3, 5), "n_fft": 4},
}
