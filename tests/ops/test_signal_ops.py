"""tf.signal / tf.spectral beyond the registry's FFT cases: the FFT wrappers' dtype rules,
names, fft_length checks and errors; framing, windows, STFT, DCT, MDCT and mel helpers
against NumPy/SciPy expectations written here from TF's documented definitions; and
gradients of the composed functions against central differences of those expectations.
"""

import numpy as np
import pytest
import scipy.fft
import scipy.signal

import tensorflux as tf
from tests.ops.harness import numeric_gradient

InvalidArgumentError = tf.errors.InvalidArgumentError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- NumPy references ---------------------------------------------------------------------
def np_frame(x, length, step, pad_end=False, pad_value=0.0, axis=-1):
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if pad_end:
        count = -(-n // step)
        extra = max(0, length + step * (count - 1) - n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (extra,), pad_value, x.dtype)], -1)
    else:
        count = max(0, 1 + (n - length) // step)
    frames = np.stack([x[..., i * step:i * step + length] for i in range(count)], -2) \
        if count else np.zeros(x.shape[:-1] + (0, length), x.dtype)
    axis = axis % (x.ndim)
    return np.moveaxis(frames, [-2, -1], [axis, axis + 1])


def np_overlap_add(frames, step):
    count, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + ((count - 1) * step + length,), frames.dtype)
    for i in range(count):
        out[..., i * step:i * step + length] += frames[..., i, :]
    return out


def np_raised_cosine(length, periodic, a, b):
    """TF's window: the denominator is length for periodic windows of even length only."""
    if length == 1:
        return np.ones(1)
    n = length - 1 + (1 if periodic and length % 2 == 0 else 0)
    return a - b * np.cos(2 * np.pi * np.arange(length) / n)


def np_stft(x, length, step, fft_length, pad_end=False):
    window = np_raised_cosine(length, True, 0.5, 0.5)
    return np.fft.rfft(np_frame(x, length, step, pad_end) * window, fft_length)


def np_inverse_stft(s, length, step, fft_length, window):
    frames = np.fft.irfft(s, fft_length)[..., :length]
    if frames.shape[-1] < length:
        pad = [(0, 0)] * (frames.ndim - 1) + [(0, length - frames.shape[-1])]
        frames = np.pad(frames, pad)
    return np_overlap_add(frames * window, step)


def np_mdct(x, length, scale):
    """scale * the textbook MDCT of vorbis-windowed frames every length // 2 samples."""
    half = length // 2
    n = np.arange(length)
    window = np.sin(np.pi / 2 * np.sin(np.pi / length * (n + 0.5)) ** 2)
    frames = np_frame(x, length, half) * window
    k = np.arange(half)
    basis = np.cos(np.pi / half * (n[:, None] + 0.5 + half / 2) * (k[None, :] + 0.5))
    return scale * frames @ basis


def np_mel(bins, spectrogram_bins, rate, lower, upper):
    """HTK mel triangles over the spectrogram bins, the DC bin weighted 0."""
    mel = lambda hz: 1127.0 * np.log(1.0 + hz / 700.0)  # noqa: E731
    freqs = mel(np.linspace(0.0, rate / 2.0, spectrogram_bins))[1:, None]
    edges = np.linspace(mel(lower), mel(upper), bins + 2)
    lo, mid, hi = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)))
    return np.concatenate([np.zeros((1, bins)), weights])


# -- namespaces -------------------------------------------------------------------------------
def test_spectral_and_top_level_names_are_the_signal_functions():
    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
                 "irfft2d", "rfft3d", "irfft3d", "dct", "idct"):
        assert getattr(tf.spectral, name) is getattr(tf.signal, name)
    for name in ("fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "fftnd", "ifftnd",
                 "rfftnd", "irfftnd"):
        assert getattr(tf, name) is getattr(tf.signal, name)
        assert name in tf.__all__ and getattr(tf.compat.v1, name) is getattr(tf, name)
    assert not hasattr(tf, "rfft")  # TF1 has rfft under tf.signal / tf.spectral only
    assert tf.compat.v1.signal is tf.signal and tf.compat.v1.spectral is tf.spectral


# -- FFT wrappers -----------------------------------------------------------------------------
def test_fft_dtype_rules_names_and_attrs():
    f32 = tf.signal.rfft([1.0, 2.0, 3.0, 4.0])
    f64 = tf.signal.rfft(tf.constant(np.ones((2, 6))), fft_length=[4])
    inv = tf.signal.irfft(tf.constant(np.ones((2, 3), np.complex128)))
    cplx = tf.signal.fft([1.0, 2.0])
    assert (f32.dtype, f64.dtype, inv.dtype, cplx.dtype) == (
        tf.complex64, tf.complex128, tf.float64, tf.complex64)
    assert f32.op.type == "RFFT" and f32.op.name == "rfft" and f64.op.name == "rfft_1"
    assert f64.op.get_attr("Treal") == tf.float64 and f64.op.get_attr("Tcomplex") == \
        tf.complex128
    assert inv.op.type == "IRFFT" and inv.op.name == "irfft" and inv.shape.as_list() == [2, 4]
    assert cplx.op.name == "FFT" and tf.signal.fft2d(tf.zeros([2, 2], tf.complex64)).op.type \
        == "FFT2D"
    named = tf.signal.rfft2d(tf.zeros([3, 4]), name="spec")
    assert named.op.name == "spec" and named.shape.as_list() == [3, 3]
    nd = tf.signal.rfftnd(tf.zeros([3, 4, 6]), axes=[-2, -1])
    assert nd.op.type == "RFFTND" and nd.op.name == "rfftnd" and nd.shape.as_list() == [3, 4, 4]
    assert tf.irfftnd(tf.zeros([2, 5], tf.complex128)).shape.as_list() == [2, 8]
    got = run([f32, f64, inv])
    np.testing.assert_allclose(got[0], np.fft.rfft([1.0, 2.0, 3.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.fft.rfft(np.ones((2, 6)), 4), rtol=1e-12)
    np.testing.assert_allclose(got[2], np.fft.irfft(np.ones((2, 3))), rtol=1e-12)


def test_fft_construction_errors():
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values: "
                                        "complex64, complex128"):
        tf.signal.fft(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="IRFFT requires tf.complex64 or tf.complex128"):
        tf.signal.irfft(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Shape must be at least rank 2 but is rank 1 for "
                                         r"'FFT2D' \(op: 'FFT2D'\)"):
        tf.signal.fft2d(tf.zeros([3], tf.complex64))
    with pytest.raises(ValueError, match="must have rank at least 2"):
        tf.signal.rfft2d(tf.zeros([3]))
    with pytest.raises(ValueError, match="Dimension must be 1 but is 2"):
        tf.signal.rfft(tf.zeros([3, 4]), [2, 2])
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.signal.rfft(tf.zeros([3, 4]), 4)
    with pytest.raises(ValueError, match="`fft_length` must be non-negative, got -1."):
        tf.signal.rfft(tf.zeros([3, 4]), [-1])
    with pytest.raises(ValueError, match=r"fft_length\[-1\] must be > 0, got 0"):
        tf.signal.irfft(tf.zeros([3, 4], tf.complex64), [0])


def test_fft_length_fed_at_run_time_and_unknown_shapes():
    x = tf.placeholder(tf.float32, [2, None])
    n = tf.placeholder(tf.int32, [1])
    spec = tf.signal.rfft(x, n)
    back = tf.signal.irfft(spec, n)
    assert spec.shape.as_list() == [2, None] and back.shape.as_list() == [2, None]
    v = np.arange(14, dtype=np.float32).reshape(2, 7)
    got = run([spec, back], {x: v, n: [5]})
    np.testing.assert_allclose(got[0], np.fft.rfft(v, 5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], v[:, :5], rtol=1e-5, atol=1e-5)
    empty = tf.signal.rfft(tf.zeros([0, 8]))
    assert empty.shape.as_list() == [0, 5] and run(empty).shape == (0, 5)


def test_nd_kernel_rejects_non_trailing_axes():
    x = tf.zeros([2, 3, 4], tf.complex64)
    with pytest.raises(InvalidArgumentError, match="axes must be successive and ascending."):
        run(tf.signal.fftnd(x, axes=[0, 2]))
    with pytest.raises(InvalidArgumentError, match="The last axis to perform transform on "
                                                   "must be -1."):
        run(tf.signal.ifftnd(x, axes=[0, 1]))


def test_fftshift_and_ifftshift_match_numpy():
    v = np.arange(35.0).reshape(5, 7)
    x = tf.placeholder(tf.float64, [None, None])
    outs = [tf.signal.fftshift(x), tf.signal.ifftshift(x), tf.signal.fftshift(x, axes=1),
            tf.signal.ifftshift(x, axes=[-2]), tf.signal.fftshift(tf.constant(v[:4]), axes=0)]
    got = run(outs, {x: v})
    want = [np.fft.fftshift(v), np.fft.ifftshift(v), np.fft.fftshift(v, axes=1),
            np.fft.ifftshift(v, axes=-2), np.fft.fftshift(v[:4], axes=0)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert outs[4].shape.as_list() == [4, 7]


# -- framing ----------------------------------------------------------------------------------
def test_frame_values_padding_axes_and_static_shapes():
    v = np.arange(2 * 11 * 3, dtype=np.float32).reshape(2, 11, 3)
    x = tf.constant(v)
    cases = [
        (tf.signal.frame(x, 4, 3, axis=1), np_frame(v, 4, 3, axis=1), [2, 3, 4, 3]),
        (tf.signal.frame(x, 4, 3, pad_end=True, pad_value=-1.0, axis=-2),
         np_frame(v, 4, 3, True, -1.0, axis=1), [2, 4, 4, 3]),
        (tf.signal.frame(x, 2, 2), np_frame(v, 2, 2), [2, 11, 1, 2]),
        (tf.signal.frame(x, 3, 1, axis=0), np_frame(v, 3, 1, axis=0), [0, 3, 11, 3]),
        (tf.signal.frame(x, 5, 2, pad_end=True, axis=0), np_frame(v, 5, 2, True, axis=0),
         [1, 5, 11, 3]),
    ]
    got = run([c[0] for c in cases])
    for (t, want, shape), g in zip(cases, got):
        assert t.shape.as_list() == shape
        np.testing.assert_array_equal(g, want)
    unknown = tf.placeholder(tf.float32, [None, None])
    framed = tf.signal.frame(unknown, 4, 2, name="framer")
    assert framed.shape.as_list() == [None, None, 4]
    assert framed.name.startswith("framer/")
    w = np.arange(18, dtype=np.float32).reshape(2, 9)
    np.testing.assert_array_equal(run(framed, {unknown: w}), np_frame(w, 4, 2))


def test_frame_argument_errors():
    with pytest.raises(ValueError, match="must have rank 0"):
        tf.signal.frame(tf.zeros([8]), [4], 2)
    with pytest.raises(ValueError, match="must have rank at least 1"):
        tf.signal.frame(tf.zeros([]), 4, 2)


def test_overlap_and_add_values_fast_path_and_errors():
    v = np.arange(2 * 4 * 5, dtype=np.float64).reshape(2, 4, 5)
    x = tf.constant(v)
    slow = tf.signal.overlap_and_add(x, 2)
    fast = tf.signal.overlap_and_add(x, 5)
    fed = tf.placeholder(tf.float64, [None, None])
    dynamic = tf.signal.overlap_and_add(fed, 3)
    assert slow.shape.as_list() == [2, 11] and fast.shape.as_list() == [2, 20]
    assert fast.op.name == "overlap_and_add_1/fast_path" and dynamic.shape.as_list() == [None]
    got = run([slow, fast, dynamic], {fed: v[0]})
    np.testing.assert_array_equal(got[0], np_overlap_add(v, 2))
    np.testing.assert_array_equal(got[1], v.reshape(2, 20))
    np.testing.assert_array_equal(got[2], np_overlap_add(v[0], 3))
    with pytest.raises(ValueError, match="frame_step must be an integer. Got"):
        tf.signal.overlap_and_add(x, 2.0)
    with pytest.raises(ValueError, match="must have rank at least 2"):
        tf.signal.overlap_and_add(tf.zeros([3]), 1)


# -- windows ----------------------------------------------------------------------------------
def test_windows_match_their_definitions():
    fed_length = tf.placeholder(tf.int32, [])
    cases = [(tf.signal.hann_window(8), np_raised_cosine(8, True, 0.5, 0.5)),
             (tf.signal.hann_window(7), np_raised_cosine(7, True, 0.5, 0.5)),
             (tf.signal.hann_window(7, periodic=False, dtype=tf.float64),
              scipy.signal.windows.hann(7, sym=True)),
             (tf.signal.hamming_window(6, periodic=False), scipy.signal.windows.hamming(6)),
             (tf.signal.hamming_window(10, dtype=tf.float64),
              scipy.signal.windows.hamming(10, sym=False)),
             (tf.signal.hann_window(1), np.ones(1)),
             (tf.signal.hann_window(fed_length), np_raised_cosine(5, True, 0.5, 0.5)),
             (tf.signal.kaiser_window(9, beta=5.0, dtype=tf.float64), np.kaiser(9, 5.0)),
             (tf.signal.kaiser_window(8), np.kaiser(8, 12.0)),
             (tf.signal.kaiser_bessel_derived_window(10, beta=4.0, dtype=tf.float64),
              scipy.signal.windows.kaiser_bessel_derived(10, 4.0)),
             (tf.signal.vorbis_window(6, dtype=tf.float64),
              np.sin(np.pi / 2 * np.sin(np.pi / 6 * (np.arange(6) + 0.5)) ** 2))]
    got = run([c[0] for c in cases], {fed_length: 5})
    for (t, want), g in zip(cases, got):
        tol = 1e-12 if t.dtype == tf.float64 else 2e-6
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol)
        assert g.dtype == t.dtype.as_numpy_dtype
    assert cases[0][0].shape.as_list() == [8] and cases[6][0].shape.as_list() == [None]
    assert tf.signal.hann_window(4, dtype=tf.float16).dtype == tf.float16
    # TF's KBD window of odd length has 2 * (length // 2) points.
    assert tf.signal.kaiser_bessel_derived_window(7).shape.as_list() == [6]
    with pytest.raises(ValueError, match="dtype must be a floating point type. Found"):
        tf.signal.hann_window(4, dtype=tf.int32)
    with pytest.raises(ValueError, match="dtype must be a floating point type. Found"):
        tf.signal.vorbis_window(4, dtype=tf.int32)


# -- STFT -------------------------------------------------------------------------------------
def test_stft_and_inverse_stft_match_their_definitions():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(2, 50))
    x = tf.placeholder(tf.float64, [2, None])
    spec = tf.signal.stft(x, 12, 5)  # fft_length: 16, the enclosing power of 2
    padded = tf.signal.stft(x, 12, 5, fft_length=20, pad_end=True)
    s = np_stft(v, 12, 5, 16)
    back = tf.signal.inverse_stft(tf.constant(s), 12, 5)
    short = tf.signal.inverse_stft(tf.constant(s), 20, 5, fft_length=16,
                                   window_fn=None)
    assert spec.shape.as_list() == [2, None, 9] and back.shape.as_list() == [2, 47]
    hann = np_raised_cosine(12, True, 0.5, 0.5)
    got = run([spec, padded, back, short], {x: v})
    np.testing.assert_allclose(got[0], s, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], np_stft(v, 12, 5, 20, pad_end=True), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(got[2], np_inverse_stft(s, 12, 5, 16, hann), atol=1e-12)
    np.testing.assert_allclose(got[3], np_inverse_stft(s, 20, 5, 16, 1.0), atol=1e-12)


def test_inverse_stft_window_fn_reconstructs_the_signal():
    rng = np.random.default_rng(1)
    v = rng.normal(size=200).astype(np.float32)
    x = tf.constant(v)
    for window_fn in (tf.signal.hann_window, tf.signal.hamming_window):
        spec = tf.signal.stft(x, 40, 10, window_fn=window_fn)
        inverse = tf.signal.inverse_stft_window_fn(10, forward_window_fn=window_fn)
        back = tf.signal.inverse_stft(spec, 40, 10, window_fn=inverse)
        got = run(back)
        # Every sample covered by a full set of overlapping frames comes back.
        np.testing.assert_allclose(got[40:-40], v[40:len(got) - 40], atol=2e-5)


# -- DCT --------------------------------------------------------------------------------------
def test_dct_and_idct_match_scipy():
    rng = np.random.default_rng(2)
    v = rng.normal(size=(3, 10))
    x = tf.placeholder(tf.float64, [None, 10])
    outs, want = [], []
    for kind in (1, 2, 3, 4):
        outs += [tf.signal.dct(x, type=kind), tf.signal.idct(x, type=kind)]
        want += [scipy.fft.dct(v, type=kind),
                 scipy.fft.idct(v, type=kind) * (2 * 9 if kind == 1 else 20)]
        if kind != 1:
            outs += [tf.signal.dct(x, type=kind, norm="ortho"),
                     tf.signal.idct(x, type=kind, norm="ortho")]
            want += [scipy.fft.dct(v, type=kind, norm="ortho"),
                     scipy.fft.idct(v, type=kind, norm="ortho")]
    outs += [tf.signal.dct(x, n=6), tf.signal.dct(x, type=4, n=14), tf.spectral.dct(x)]
    want += [scipy.fft.dct(v, n=6), scipy.fft.dct(v, type=4, n=14), scipy.fft.dct(v)]
    got = run(outs, {x: v})
    for t, g, w in zip(outs, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
        assert t.shape.as_list() == [None, w.shape[1]] and g.dtype == np.float64
    f32 = tf.signal.dct(tf.constant(v.astype(np.float32)), type=3, norm="ortho")
    assert f32.dtype == tf.float32 and f32.shape.as_list() == [3, 10]
    np.testing.assert_allclose(run(f32), scipy.fft.dct(v, type=3, norm="ortho"), atol=1e-5)


def test_dct_argument_errors():
    x = tf.zeros([2, 4])
    with pytest.raises(NotImplementedError, match="axis must be -1. Got: 0"):
        tf.signal.dct(x, axis=0)
    with pytest.raises(ValueError, match=r"Types I, II, III and IV \(I\)DCT are supported."):
        tf.signal.idct(x, type=5)
    with pytest.raises(ValueError, match="Normalization is not supported for the Type-I DCT"):
        tf.signal.dct(x, type=1, norm="ortho")
    with pytest.raises(ValueError, match="Type-I DCT requires the dimension to be greater"):
        tf.signal.dct(tf.zeros([2, 1]), type=1)
    with pytest.raises(ValueError, match="Unknown normalization. Expected None or 'ortho', "
                                         "got: l2"):
        tf.signal.dct(x, norm="l2")
    with pytest.raises(ValueError, match="n should be a positive integer or None"):
        tf.signal.dct(x, n=0)


# -- MDCT -------------------------------------------------------------------------------------
def test_mdct_matches_the_textbook_transform_and_inverts():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(2, 40))
    x = tf.constant(v)
    plain = tf.signal.mdct(x, 8)
    ortho = tf.signal.mdct(x, 8, norm="ortho")
    assert plain.shape.as_list() == [2, 9, 4]
    # Perfect reconstruction (TF's documented round trip): pad half a frame in front.
    padded = tf.pad(x, [[0, 0], [4, 0]])
    trips = [tf.signal.inverse_mdct(tf.signal.mdct(padded, 8, pad_end=True, norm=norm),
                                    norm=norm)[:, 4:44] for norm in (None, "ortho")]
    flat = tf.signal.inverse_mdct(tf.signal.mdct(padded, 8, pad_end=True, window_fn=None),
                                  window_fn=None)[:, 4:44]
    got = run([plain, ortho] + trips + [flat])
    np.testing.assert_allclose(got[0], np_mdct(v, 8, 2.0), atol=1e-12)
    np.testing.assert_allclose(got[1], np_mdct(v, 8, np.sqrt(2.0 / 4)), atol=1e-12)
    for g in got[2:]:
        np.testing.assert_allclose(g, v, atol=1e-12)
    with pytest.raises(ValueError, match="The frame length must be a multiple of 4."):
        tf.signal.mdct(x, 6)


# -- mel scale and MFCCs ----------------------------------------------------------------------
def test_mel_weight_matrix_and_mfccs():
    default = tf.signal.linear_to_mel_weight_matrix()
    custom = tf.signal.linear_to_mel_weight_matrix(8, 33, tf.constant(16000.0), 20.0, 7000.0,
                                                   dtype=tf.float64, name="mel")
    assert default.shape.as_list() == [129, 20] and default.dtype == tf.float32
    assert custom.op.name == "mel" and custom.dtype == tf.float64
    logs = np.log(np.random.default_rng(4).uniform(0.1, 2.0, (3, 2, 12)))
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(tf.constant(logs))
    mfcc32 = tf.signal.mfccs_from_log_mel_spectrograms(tf.constant(logs.astype(np.float32)))
    assert mfcc.shape.as_list() == [3, 2, 12] and mfcc32.dtype == tf.float32
    got = run([default, custom, mfcc, mfcc32])
    np.testing.assert_allclose(got[0], np_mel(20, 129, 8000, 125.0, 3800.0), atol=5e-6)
    np.testing.assert_allclose(got[1], np_mel(8, 33, 16000, 20.0, 7000.0), atol=1e-12)
    want = scipy.fft.dct(logs, type=2) / np.sqrt(2 * 12)
    np.testing.assert_allclose(got[2], want, atol=1e-12)
    np.testing.assert_allclose(got[3], want, atol=2e-5)


@pytest.mark.parametrize("kwargs, message", [
    ({"num_mel_bins": 0}, "num_mel_bins must be positive. Got: 0"),
    ({"sample_rate": 0.0}, "sample_rate must be positive. Got: 0.0"),
    ({"lower_edge_hertz": -1.0}, "lower_edge_hertz must be non-negative. Got: -1.0"),
    ({"lower_edge_hertz": 3800.0}, "lower_edge_hertz 3800.0 >= upper_edge_hertz 3800.0"),
    ({"upper_edge_hertz": 5000.0}, "upper_edge_hertz must not be larger than the Nyquist "
                                   "frequency"),
    ({"dtype": tf.int32}, "dtype must be a floating point type. Got"),
    ({"sample_rate": tf.placeholder_with_default(8000.0, [])},
     "`sample_rate` was a non-constant Tensor"),
])
def test_mel_weight_matrix_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.signal.linear_to_mel_weight_matrix(**kwargs)


# -- gradients of the composed functions ------------------------------------------------------
def test_gradients_of_composed_functions_match_finite_differences():
    rng = np.random.default_rng(5)
    v = rng.normal(size=(1, 20))
    specs = [
        (lambda t: tf.real(tf.signal.stft(t, 8, 5)),
         lambda a: np.real(np_stft(a, 8, 5, 8))),
        (lambda t: tf.imag(tf.signal.stft(t, 6, 4, fft_length=8, pad_end=True)),
         lambda a: np.imag(np_stft(a, 6, 4, 8, pad_end=True))),
        (lambda t: tf.signal.overlap_and_add(tf.reshape(t, [4, 5]), 3),
         lambda a: np_overlap_add(a.reshape(4, 5), 3)),
        (lambda t: tf.signal.dct(t, type=1), lambda a: scipy.fft.dct(a, type=1)),
        (lambda t: tf.signal.dct(t, type=2, norm="ortho"),
         lambda a: scipy.fft.dct(a, type=2, norm="ortho")),
        (lambda t: tf.signal.idct(t, type=2), lambda a: scipy.fft.dct(a, type=3)),
        (lambda t: tf.signal.dct(t, type=4, n=12), lambda a: scipy.fft.dct(a, type=4, n=12)),
        (lambda t: tf.signal.mdct(t, 8), lambda a: np_mdct(a, 8, 2.0)),
        (lambda t: tf.signal.inverse_stft(tf.complex(tf.reshape(t[:, :18], [2, 9]),
                                                     tf.zeros([2, 9], tf.float64)), 16, 4),
         lambda a: np_inverse_stft(a[:, :18].reshape(2, 9) + 0j, 16, 4, 16,
                                   np_raised_cosine(16, True, 0.5, 0.5))),
    ]
    x = tf.placeholder(tf.float64, [1, 20])
    weights = [rng.uniform(0.5, 1.5, np.shape(npf(v))) for _, npf in specs]
    # Fed weights keep the (data-independent) gradients of these linear maps compiled
    # in one run rather than folded op by op.
    fed = [tf.placeholder(tf.float64, np.shape(w)) for w in weights]
    grads = [tf.gradients(tf.reduce_sum(f(x) * w), x)[0] for (f, _), w in zip(specs, fed)]
    got = run(grads, {x: v, **dict(zip(fed, weights))})
    for (_, npf), w, g in zip(specs, weights, got):
        numeric = numeric_gradient(lambda a: float(np.sum(w * npf(a))), [v.copy()], 0)
        np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-6)


def test_real_fft_gradients_with_unknown_shapes_and_fed_lengths():
    # The gradients' crop/pad and bin weights computed at run time, not from static values.
    rng = np.random.default_rng(6)
    v, c = rng.normal(size=(2, 7)), rng.normal(size=(2, 4)) + 1j * rng.normal(size=(2, 4))
    x = tf.placeholder(tf.float64, [None, None])
    re, im = tf.placeholder(tf.float64, [None, None]), tf.placeholder(tf.float64, [None, None])
    n = tf.placeholder(tf.int32, [1])
    wx, wy = rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, (2, 5))
    fx, fy = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
    spectrum = tf.signal.rfft(x, [5])
    loss_x = tf.reduce_sum(tf.real(spectrum) * fx) + tf.reduce_sum(tf.imag(spectrum) * fx)
    loss_y = tf.reduce_sum(tf.signal.irfft(tf.complex(re, im), n) * fy)
    grads = tf.gradients(loss_x, x) + tf.gradients(loss_y, [re, im])
    got = run(grads, {x: v, re: c.real, im: c.imag, n: [5], fx: wx, fy: wy})

    def spec_loss(a):
        s = np.fft.rfft(a, 5)
        return float(np.sum(s.real * wx) + np.sum(s.imag * wx))

    def inv_loss(a, b):
        return float(np.sum(np.fft.irfft(a + 1j * b, 5) * wy))

    parts = [c.real.copy(), c.imag.copy()]
    np.testing.assert_allclose(got[0], numeric_gradient(spec_loss, [v.copy()], 0), atol=1e-6)
    np.testing.assert_allclose(got[1], numeric_gradient(inv_loss, parts, 0), atol=1e-6)
    np.testing.assert_allclose(got[2], numeric_gradient(inv_loss, parts, 1), atol=1e-6)
