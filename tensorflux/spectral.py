"""`tf.spectral`: TF1's older name for part of tf.signal (the same functions)."""

from tensorflux._src.ops.signal.fft_ops import (  # noqa: F401
    fft, fft2d, fft3d, ifft, ifft2d, ifft3d, irfft, irfft2d, irfft3d, rfft, rfft2d, rfft3d,
)
from tensorflux._src.ops.signal.spectral_ops import dct, idct  # noqa: F401
