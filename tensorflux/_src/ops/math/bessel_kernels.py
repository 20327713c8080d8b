"""Bessel functions JAX lacks (J0, J1, Y0, Y1, K0, K1 and the scaled K0e, K1e), in jax.numpy.

These are the Cephes approximations TF's kernels use (through Eigen's
BesselFunctionsImpl.h): Chebyshev series for K on [0, 2] and (2, inf), rational
functions for J/Y on [0, 5] and the Hankel asymptotic form beyond. The coefficients are
the double-precision Cephes ones; evaluated in float32 they still give float32 accuracy
(half and bfloat16 are computed in float32). At and below zero the results are TF's:
K0, K1 are +inf and Y0, Y1 are -inf for x <= 0 (SciPy gives NaN for x < 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

# -- evaluation helpers -----------------------------------------------------------------------


def _polevl(x, coefs):
    """coefs[0] * x^n + ... + coefs[n] (Horner)."""
    out = jnp.full_like(x, coefs[0])
    for c in coefs[1:]:
        out = out * x + c
    return out


def _chbevl(x, coefs):
    """Sum of the Chebyshev series `coefs` at x, Cephes' chbevl (Clenshaw's recurrence)."""
    b0 = jnp.full_like(x, coefs[0])
    b1 = jnp.zeros_like(x)
    b2 = jnp.zeros_like(x)
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def computed_in_float32(fn):
    """Runs `fn` at least in float32, returning the input's dtype (half, bfloat16)."""
    def run(x):
        dtype = x.dtype
        if np.dtype(dtype).itemsize < 4:
            return fn(x.astype(jnp.float32)).astype(dtype)
        return fn(x)
    return run


# -- K0, K1 and their scaled forms -------------------------------------------------------------
_K0_A = (1.37446543561352307156E-16, 4.25981614279661018399E-14, 1.03496952576338420167E-11,
         1.90451637722020886025E-9, 2.53479107902614945675E-7, 2.28621210311945178607E-5,
         1.26461541144692592338E-3, 3.59799365153615016266E-2, 3.44289899924628486886E-1,
         -5.35327393233902768720E-1)
_K0_B = (5.30043377268626276149E-18, -1.64758043015242134646E-17, 5.21039150503902756861E-17,
         -1.67823109680541210385E-16, 5.51205597852431940784E-16, -1.84859337734377901440E-15,
         6.34007647740507060557E-15, -2.22751332699166985548E-14, 8.03289077536357521100E-14,
         -2.98009692317273043925E-13, 1.14034058820847496303E-12, -4.51459788337394416547E-12,
         1.85594911495471785253E-11, -7.95748924447710747776E-11, 3.57739728140030116597E-10,
         -1.69753450938905987466E-9, 8.57403401741422608519E-9, -4.66048989768794782956E-8,
         2.76681363944501510342E-7, -1.83175552271911948767E-6, 1.39498137188764993662E-5,
         -1.28495495816278026384E-4, 1.56988388573005337491E-3, -3.14481013119645005427E-2,
         2.44030308206595545468E0)
_K1_A = (-7.02386347938628759343E-18, -2.42744985051936593393E-15, -6.66690169419932900609E-13,
         -1.41148839263352776110E-10, -2.21338763073472585583E-8, -2.43340614156596823496E-6,
         -1.73028895751305206302E-4, -6.97572385963986435018E-3, -1.22611180822657148235E-1,
         -3.53155960776544875667E-1, 1.52530022733894777053E0)
_K1_B = (-5.75674448366501715755E-18, 1.79405087314755922667E-17, -5.68946255844285935196E-17,
         1.83809354436663880070E-16, -6.05704724837331885336E-16, 2.03870316562433424052E-15,
         -7.01983709041831346144E-15, 2.47715442448130437068E-14, -8.97670518232499435011E-14,
         3.34841966607842919884E-13, -1.28917396095102890680E-12, 5.13963967348173025100E-12,
         -2.12996783842756842877E-11, 9.21831518760500529508E-11, -4.19035475934189648750E-10,
         2.01504975519703286596E-9, -1.03457624656780970260E-8, 5.74108412545004946722E-8,
         -3.50196060308781257119E-7, 2.40648494783721712015E-6, -1.93619797416608296024E-5,
         1.95215518471351631108E-4, -2.85781685962277938680E-3, 1.03923736576817238437E-1,
         2.72062619048444266945E0)


def _k_parts(x, a, b, small_term):
    """(value on (0, 2], exp(x)-scaled value on (2, inf)) of K0 or K1."""
    small = jnp.where(x > 0, x, jnp.ones_like(x))  # keeps log/division finite off-branch
    near = _chbevl(small * small - 2.0, a)
    near = small_term(small, near)
    far_x = jnp.where(x <= 2, jnp.full_like(x, 4.0), x)  # NaN stays NaN
    far_scaled = _chbevl(8.0 / far_x - 2.0, b) * jax.lax.rsqrt(far_x)
    return near, far_scaled


def _k0_near(x, series):
    return series - jnp.log(0.5 * x) * jax.scipy.special.i0(x)


def _k1_near(x, series):
    return series / x + jax.scipy.special.i1(x) * jnp.log(0.5 * x)


def _select_k(x, near, far):
    return jnp.where(x <= 0, jnp.full_like(x, jnp.inf), jnp.where(x <= 2, near, far))


@computed_in_float32
def k0(x):
    near, far = _k_parts(x, _K0_A, _K0_B, _k0_near)
    return _select_k(x, near, far * jnp.exp(-x))


@computed_in_float32
def k0e(x):
    near, far = _k_parts(x, _K0_A, _K0_B, _k0_near)
    return _select_k(x, near * jnp.exp(x), far)


@computed_in_float32
def k1(x):
    near, far = _k_parts(x, _K1_A, _K1_B, _k1_near)
    return _select_k(x, near, far * jnp.exp(-x))


@computed_in_float32
def k1e(x):
    near, far = _k_parts(x, _K1_A, _K1_B, _k1_near)
    return _select_k(x, near * jnp.exp(x), far)


# -- J0, Y0 --------------------------------------------------------------------------------------
_SQ2OPI = 7.9788456080286535587989E-1  # sqrt(2 / pi)
_TWOOPI = 0.636619772367581343075535  # 2 / pi
_PIO4 = 0.7853981633974483096  # pi / 4
_THPIO4 = 2.35619449019234492885  # 3 pi / 4

# Hankel asymptotic form of order 0 (shared by J0 and Y0).
_P0_P = (7.96936729297347051624E-4, 8.28352392107440799803E-2, 1.23953371646414299388E0,
         5.44725003058768775090E0, 8.74716500199817011941E0, 5.30324038235394892183E0,
         9.99999999999999997821E-1)
_P0_Q = (9.24408810558863637013E-4, 8.56288474354474431428E-2, 1.25352743901058953537E0,
         5.47097740330417105182E0, 8.76190883237069594232E0, 5.30605288235394617618E0,
         1.00000000000000000218E0)
_Q0_P = (-1.13663838898469149931E-2, -1.28252718670509318512E0, -1.95539544257735972385E1,
         -9.32060152123768231369E1, -1.77681167980488050595E2, -1.47077505154951170175E2,
         -5.14105326766599330220E1, -6.05014350600728481186E0)
_Q0_Q = (1.00000000000000000000E0, 6.43178256118178023184E1, 8.56430025976980587198E2,
         3.88240183605401609683E3, 7.24046774195652478189E3, 5.93072701187316984827E3,
         2.06209331660327847417E3, 2.42005740240291393179E2)
_J0_RP = (-4.79443220978201773821E9, 1.95617491946556577543E12, -2.49248344360967716204E14,
          9.70862251047306323952E15)
_J0_RQ = (1.00000000000000000000E0, 4.99563147152651017219E2, 1.73785401676374683123E5,
          4.84409658339962045305E7, 1.11855537045356834862E10, 2.11277520115489217587E12,
          3.10518229857422583814E14, 3.18121955943204943306E16, 1.71086294081043136091E18)
_J0_DR1 = 5.78318596294678452118E0  # squares of the first two zeros of J0
_J0_DR2 = 3.04712623436620863991E1
_Y0_P = (1.55924367855235737965E4, -1.46639295903971606143E7, 5.43526477051876500413E9,
         -9.82136065717911466409E11, 8.75906394395366999549E13, -3.46628303384729719441E15,
         4.42733268572569800351E16, -1.84950800436986690637E16)
_Y0_Q = (1.00000000000000000000E0, 1.04128353664259848412E3, 6.26107330137134956842E5,
         2.68919633393814121987E8, 8.64002487103935000337E10, 2.02979612750105546709E13,
         3.17157752842975028269E15, 2.50596256172653059228E17)


def _hankel(y, pp, pq, qp, qq, shift, second_kind):
    """sqrt(2 / (pi y)) (P cos(y - shift) - 5/y Q sin(y - shift)) for J, with sin/cos
    exchanged (and the sign of the Q term) for Y; y > 5."""
    s = 25.0 / (y * y)
    p = _polevl(s, pp) / _polevl(s, pq)
    q = _polevl(s, qp) / _polevl(s, qq)
    yn = y - shift
    w = 5.0 / y
    if second_kind:
        value = p * jnp.sin(yn) + w * q * jnp.cos(yn)
    else:
        value = p * jnp.cos(yn) - w * q * jnp.sin(yn)
    return value * _SQ2OPI * jax.lax.rsqrt(y)


def _far(y):
    return jnp.where(y <= 5, jnp.full_like(y, 10.0), y)  # NaN stays NaN


def _j0_abs(y):
    z = y * y
    near = jnp.where(y < 1e-5, 1.0 - 0.25 * z,
                     (z - _J0_DR1) * (z - _J0_DR2) * _polevl(z, _J0_RP) / _polevl(z, _J0_RQ))
    far = _hankel(_far(y), _P0_P, _P0_Q, _Q0_P, _Q0_Q, _PIO4, second_kind=False)
    return jnp.where(y <= 5, near, far)


@computed_in_float32
def j0(x):
    return _j0_abs(jnp.abs(x))


@computed_in_float32
def y0(x):
    small = jnp.where(x > 0, x, jnp.ones_like(x))
    z = small * small
    near = _polevl(z, _Y0_P) / _polevl(z, _Y0_Q) + _TWOOPI * jnp.log(small) * _j0_abs(small)
    far = _hankel(_far(x), _P0_P, _P0_Q, _Q0_P, _Q0_Q, _PIO4, second_kind=True)
    return jnp.where(x <= 0, jnp.full_like(x, -jnp.inf), jnp.where(x <= 5, near, far))


# -- J1, Y1 --------------------------------------------------------------------------------------
_P1_P = (7.62125616208173112003E-4, 7.31397056940917570436E-2, 1.12719608129684925192E0,
         5.11207951146807644818E0, 8.42404590141772420927E0, 5.21451598682361504063E0,
         1.00000000000000000254E0)
_P1_Q = (5.71323128072548699714E-4, 6.88455908754495404082E-2, 1.10514232634061696926E0,
         5.07386386128601488557E0, 8.39985554327604159757E0, 5.20982848682361821619E0,
         9.99999999999999997461E-1)
_Q1_P = (5.10862594750176621635E-2, 4.98213872951233449420E0, 7.58238284132545283818E1,
         3.66779609360150777800E2, 7.10856304998926107277E2, 5.97489612400613639965E2,
         2.11688757100572135698E2, 2.52070205858023719784E1)
_Q1_Q = (1.00000000000000000000E0, 7.42373277035675149943E1, 1.05644886038262816351E3,
         4.98641058337653607651E3, 9.56231892404756170795E3, 7.99704160447350683650E3,
         2.82619278517639096600E3, 3.36093607810698293419E2)
_J1_RP = (-8.99971225705559398224E8, 4.52228297998194034323E11, -7.27494245221818276015E13,
          3.68295732863852883286E15)
_J1_RQ = (1.00000000000000000000E0, 6.20836478118054335476E2, 2.56987256757748830383E5,
          8.35146791431949253037E7, 2.21511595479792499675E10, 4.74914122079991414898E12,
          7.84369607876235854894E14, 8.95222336184627338078E16, 5.32278620332680085395E18)
_J1_Z1 = 1.46819706421238932572E1  # squares of the first two zeros of J1
_J1_Z2 = 4.92184563216946036703E1
_Y1_P = (1.26320474790178026440E9, -6.47355876379160291031E11, 1.14509511541823727583E14,
         -8.12770255501325109621E15, 2.02439475713594898196E17, -7.78877196265950026825E17)
_Y1_Q = (1.00000000000000000000E0, 5.94301592346128195359E2, 2.35564092943068577943E5,
         7.34811944459721705660E7, 1.87601316108706159478E10, 3.88231277496238566008E12,
         6.20557727146953693363E14, 6.87141087355300489866E16, 3.97270608116560655612E18)


def _j1(x):
    y = jnp.abs(x)
    z = y * y
    near = _polevl(z, _J1_RP) / _polevl(z, _J1_RQ) * x * (z - _J1_Z1) * (z - _J1_Z2)
    far = _hankel(_far(y), _P1_P, _P1_Q, _Q1_P, _Q1_Q, _THPIO4, second_kind=False)
    far = jnp.where(x < 0, -far, far)  # J1 is odd
    return jnp.where(y <= 5, near, far)


@computed_in_float32
def j1(x):
    return _j1(x)


@computed_in_float32
def y1(x):
    small = jnp.where(x > 0, x, jnp.ones_like(x))
    z = small * small
    near = (small * _polevl(z, _Y1_P) / _polevl(z, _Y1_Q)
            + _TWOOPI * (_j1(small) * jnp.log(small) - 1.0 / small))
    far = _hankel(_far(x), _P1_P, _P1_Q, _Q1_P, _Q1_Q, _THPIO4, second_kind=True)
    return jnp.where(x <= 0, jnp.full_like(x, -jnp.inf), jnp.where(x <= 5, near, far))
