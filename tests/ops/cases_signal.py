"""NumPy-checked cases for the FFT records (signal/fft_ops.py) and the bitwise ops.

Complex transforms are checked for gradients through real tensors (the real and
imaginary parts in and out), so finite differences of np.fft check TF's complex
gradient convention; RFFT/IRFFT gradients are checked with fft_length cropping and
padding their input too.
"""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, uniform

FLOAT = (np.float32, np.float64)
CPLX = (np.complex64, np.complex128)
LOOSE = 1e-4  # float32 FFTs sum many terms


def parts(op, f, npf, shape, name, real_in=False, real_out=False):
    """Case for the gradient of a transform through real tensors: a complex input is
    given as (real, imag) parts, a complex output returned as [real, imag]."""
    def fn(*xs):
        out = f(xs[0] if real_in else tf.complex(xs[0], xs[1]))
        return out if real_out else [tf.real(out), tf.imag(out)]

    def expect(*xs):
        out = npf(xs[0] if real_in else xs[0] + 1j * xs[1])
        return out if real_out else [np.real(out), np.imag(out)]

    shapes = (shape,) if real_in else (shape, shape)
    return Case(op, fn, expect, [shapes], (np.float64,), name=name)


def np_shift(shift):
    """TF's CPU shift: amount clamped to [0, bits - 1], left shifts on the bit pattern."""
    def f(x, y):
        bits = x.dtype.itemsize * 8
        y = np.clip(y.astype(np.int64), 0, bits - 1)
        if shift == "left":
            unsigned = np.dtype(f"u{x.dtype.itemsize}")
            return (x.view(unsigned) << y.astype(unsigned)).view(x.dtype)
        return x >> y.astype(x.dtype)
    return f


INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
SHIFT_GEN = [uniform(-100, 100), uniform(-3, 70)]  # amounts past the width and negative

CASES = [
    # -- complex transforms -------------------------------------------------------------
    Case("FFT", tf.signal.fft, np.fft.fft, [((3, 8),), ((5,),)], CPLX, rtol=LOOSE),
    Case("IFFT", tf.ifft, np.fft.ifft, [((2, 7),)], CPLX, rtol=LOOSE),
    Case("FFT2D", tf.signal.fft2d, np.fft.fft2, [((2, 3, 4),)], CPLX, rtol=LOOSE),
    Case("IFFT2D", tf.spectral.ifft2d, np.fft.ifft2, [((4, 5),)], CPLX, rtol=LOOSE),
    Case("FFT3D", tf.fft3d, lambda x: np.fft.fftn(x, axes=(-3, -2, -1)), [((2, 2, 3, 4),)],
         (np.complex64,), rtol=LOOSE),
    Case("IFFT3D", tf.signal.ifft3d, np.fft.ifftn, [((3, 2, 4),)], (np.complex128,)),
    parts("FFT", tf.signal.fft, np.fft.fft, (2, 5), "FFT(gradient)"),
    parts("IFFT", tf.signal.ifft, np.fft.ifft, (3, 4), "IFFT(gradient)"),
    parts("FFT2D", tf.signal.fft2d, np.fft.fft2, (3, 4), "FFT2D(gradient)"),
    parts("IFFT2D", tf.signal.ifft2d, np.fft.ifft2, (2, 3), "IFFT2D(gradient)"),
    parts("FFT3D", tf.signal.fft3d, np.fft.fftn, (2, 2, 3), "FFT3D(gradient)"),
    parts("IFFT3D", tf.signal.ifft3d, np.fft.ifftn, (2, 3, 2), "IFFT3D(gradient)"),
    # -- real transforms: fft_length crops or zero-pads the input --------------------------
    Case("RFFT", tf.signal.rfft, np.fft.rfft, [((3, 8),), ((7,),)], FLOAT, rtol=LOOSE),
    Case("RFFT", lambda x: tf.signal.rfft(x, [5]), lambda x: np.fft.rfft(x, 5), [((2, 8),)],
         FLOAT, rtol=LOOSE, name="RFFT(crop)"),
    Case("RFFT", lambda x: tf.spectral.rfft(x, [11]), lambda x: np.fft.rfft(x, 11),
         [((2, 6),)], (np.float64,), name="RFFT(pad)"),
    Case("IRFFT", tf.signal.irfft, np.fft.irfft, [((3, 5),)], CPLX, rtol=LOOSE),
    Case("IRFFT", lambda x: tf.signal.irfft(x, [7]), lambda x: np.fft.irfft(x, 7),
         [((2, 5),)], (np.complex128,), name="IRFFT(odd length, crop)"),
    Case("IRFFT", lambda x: tf.signal.irfft(x, [12]), lambda x: np.fft.irfft(x, 12),
         [((2, 4),)], (np.complex64,), rtol=LOOSE, name="IRFFT(pad)"),
    Case("RFFT2D", tf.signal.rfft2d, np.fft.rfft2, [((2, 4, 6),)], FLOAT, rtol=LOOSE),
    Case("RFFT2D", lambda x: tf.signal.rfft2d(x, [3, 9]), lambda x: np.fft.rfft2(x, [3, 9]),
         [((4, 6),)], (np.float64,), name="RFFT2D(crop and pad)"),
    Case("IRFFT2D", tf.signal.irfft2d, np.fft.irfft2, [((3, 4, 4),)], CPLX, rtol=LOOSE),
    Case("IRFFT2D", lambda x: tf.signal.irfft2d(x, [5, 5]),
         lambda x: np.fft.irfft2(x, [5, 5]), [((3, 4),)], (np.complex128,),
         name="IRFFT2D(odd length)"),
    Case("RFFT3D", tf.signal.rfft3d, np.fft.rfftn, [((2, 3, 4),)], FLOAT, rtol=LOOSE),
    Case("IRFFT3D", lambda x: tf.spectral.irfft3d(x, [2, 3, 5]),
         lambda x: np.fft.irfftn(x, [2, 3, 5], axes=(-3, -2, -1)), [((2, 2, 3, 3),)], CPLX,
         rtol=LOOSE),
    parts("RFFT", tf.signal.rfft, np.fft.rfft, (2, 6), "RFFT(gradient)", real_in=True),
    parts("RFFT", lambda x: tf.signal.rfft(x, [5]), lambda x: np.fft.rfft(x, 5), (2, 7),
          "RFFT(gradient, odd crop)", real_in=True),
    parts("RFFT", lambda x: tf.signal.rfft(x, [8]), lambda x: np.fft.rfft(x, 8), (2, 5),
          "RFFT(gradient, pad)", real_in=True),
    parts("IRFFT", tf.signal.irfft, np.fft.irfft, (2, 4), "IRFFT(gradient)", real_out=True),
    parts("IRFFT", lambda x: tf.signal.irfft(x, [5]), lambda x: np.fft.irfft(x, 5), (2, 4),
          "IRFFT(gradient, odd, crop)", real_out=True),
    parts("IRFFT", lambda x: tf.signal.irfft(x, [10]), lambda x: np.fft.irfft(x, 10), (3,),
          "IRFFT(gradient, pad)", real_out=True),
    parts("RFFT2D", lambda x: tf.signal.rfft2d(x, [2, 5]),
          lambda x: np.fft.rfft2(x, [2, 5]), (3, 4), "RFFT2D(gradient)", real_in=True),
    parts("IRFFT2D", lambda x: tf.signal.irfft2d(x, [3, 4]),
          lambda x: np.fft.irfft2(x, [3, 4]), (2, 3), "IRFFT2D(gradient)", real_out=True),
    parts("RFFT3D", tf.signal.rfft3d, np.fft.rfftn, (2, 2, 4), "RFFT3D(gradient)",
          real_in=True),
    parts("IRFFT3D", tf.signal.irfft3d, np.fft.irfftn, (2, 2, 3), "IRFFT3D(gradient)",
          real_out=True),
    # -- N-D transforms (trailing axes; norm scales as np.fft's) ----------------------------
    Case("FFTND", tf.signal.fftnd, np.fft.fftn, [((3, 4),)], CPLX, rtol=LOOSE),
    Case("FFTND", lambda x: tf.fftnd(x, fft_length=[3, 6], axes=[-2, -1], norm="ortho"),
         lambda x: np.fft.fftn(x, [3, 6], axes=(-2, -1), norm="ortho"), [((2, 5, 4),)],
         (np.complex128,), name="FFTND(crop, pad, ortho)"),
    Case("IFFTND", lambda x: tf.ifftnd(x, axes=[1, 2], norm="forward"),
         lambda x: np.fft.ifftn(x, axes=(1, 2), norm="forward"), [((2, 3, 4),)], CPLX,
         rtol=LOOSE),
    Case("RFFTND", lambda x: tf.rfftnd(x, axes=[-1]), lambda x: np.fft.rfft(x),
         [((2, 6),)], FLOAT, rtol=LOOSE),
    Case("RFFTND", lambda x: tf.signal.rfftnd(x, [4, 4], axes=[0, 1], norm="ortho"),
         lambda x: np.fft.rfftn(x, [4, 4], axes=(0, 1), norm="ortho"), [((3, 5),)], (np.float64,),
         name="RFFTND(ortho)"),
    Case("IRFFTND", tf.irfftnd, np.fft.irfftn, [((3, 4),)], CPLX, rtol=LOOSE),
    Case("IRFFTND", lambda x: tf.signal.irfftnd(x, [5], axes=[-1], norm="forward"),
         lambda x: np.fft.irfft(x, 5, norm="forward"), [((2, 4),)], (np.complex128,),
         name="IRFFTND(odd, forward)"),
    parts("FFTND", lambda x: tf.fftnd(x, [2, 5], axes=[-2, -1]),
          lambda x: np.fft.fftn(x, [2, 5], axes=(-2, -1)), (3, 4), "FFTND(gradient, crop and pad)"),
    parts("IFFTND", lambda x: tf.ifftnd(x, axes=[-1]), lambda x: np.fft.ifft(x), (2, 4),
          "IFFTND(gradient)"),
    parts("FFTND", tf.fftnd, np.fft.fftn, (2, 1, 2, 3), "FFTND(gradient, 4 axes)"),
    parts("RFFTND", tf.rfftnd, np.fft.rfftn, (2, 1, 2, 3), "RFFTND(gradient, 4 axes)",
          real_in=True),
    parts("RFFTND", lambda x: tf.rfftnd(x, [3, 4], axes=[0, 1]),
          lambda x: np.fft.rfftn(x, [3, 4], axes=(0, 1)), (2, 5), "RFFTND(gradient)", real_in=True),
    parts("IRFFTND", lambda x: tf.irfftnd(x, [2, 5], axes=[0, 1]),
          lambda x: np.fft.irfftn(x, [2, 5], axes=(0, 1)), (3, 3), "IRFFTND(gradient)",
          real_out=True),
    # -- bitwise ------------------------------------------------------------------------
    Case("BitwiseAnd", tf.bitwise.bitwise_and, np.bitwise_and, [((2, 3), (3,))], INTS,
         gen=uniform(-100, 100)),
    Case("BitwiseOr", tf.bitwise.bitwise_or, np.bitwise_or, [((4,), (4,))], INTS,
         gen=uniform(-100, 100)),
    Case("BitwiseXor", tf.bitwise.bitwise_xor, np.bitwise_xor, [((3, 1), (1, 2))], INTS,
         gen=uniform(-100, 100)),
    Case("Invert", tf.bitwise.invert, np.invert, [((5,),)], INTS, gen=uniform(-100, 100)),
    Case("LeftShift", tf.bitwise.left_shift, np_shift("left"), [((12,), (12,))], INTS,
         gen=SHIFT_GEN),
    Case("RightShift", tf.bitwise.right_shift, np_shift("right"), [((3, 4), (4,))],
         INTS, gen=SHIFT_GEN),
]
