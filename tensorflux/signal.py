"""`tf.signal`: FFTs, framing, windows, STFT, DCT/MDCT and mel-scale helpers (TF1.15 and
the later TF1-compatible names: the N-D FFTs, kaiser windows, MDCT)."""

from tensorflux._src.ops.signal.fft_ops import (  # noqa: F401
    fft, fft2d, fft3d, fftnd, fftshift, ifft, ifft2d, ifft3d, ifftnd, ifftshift, irfft,
    irfft2d, irfft3d, irfftnd, rfft, rfft2d, rfft3d, rfftnd,
)
from tensorflux._src.ops.signal.frame_ops import frame, overlap_and_add  # noqa: F401
from tensorflux._src.ops.signal.mel_ops import (  # noqa: F401
    linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms,
)
from tensorflux._src.ops.signal.spectral_ops import (  # noqa: F401
    dct, idct, inverse_mdct, inverse_stft, inverse_stft_window_fn, mdct, stft,
)
from tensorflux._src.ops.signal.window_ops import (  # noqa: F401
    hamming_window, hann_window, kaiser_bessel_derived_window, kaiser_window, vorbis_window,
)
