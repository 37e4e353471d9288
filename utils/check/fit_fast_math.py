#!/usr/bin/python3
"""Refits the coefficients of lib/Runtime/CPU/Kernels/FastMath.h and checks
the formulas in float32 arithmetic against the double-precision functions.

    /usr/bin/python3 utils/check/fit_fast_math.py

Needs numpy (Debian python3-numpy). Prints each polynomial's coefficients
as the header spells them (highest degree first) and the largest absolute
and relative errors over a dense grid of floats; exits 1 if an error is
above the bound FastMath.h states (2e-7). numpy's float32 exp stands in for
fastExp, whose own relative error (3e-7) adds at most 7e-8 here, since the
erf and tanh pieces that use it have results below 0.22 times that error.
"""
import math
import sys

import numpy as np

F = np.float32


def fit_odd(fn, hi, degree):
    """P with fn(x) ~ x * P(x^2) on (0, hi], least squares in relative error."""
    xs = np.linspace(1e-6, hi, 20000)
    ys = np.array([fn(x) / x for x in xs])
    v = np.vander(xs * xs, degree + 1, increasing=True)
    c, *_ = np.linalg.lstsq(v / ys[:, None], np.ones_like(ys), rcond=None)
    return c


def fit_erfc_log(lo, hi, degree):
    """Q with erfc(z) ~ t exp(-z^2 + Q(t)), t = 1 / (1 + z / 2), on [lo, hi]."""
    zs = np.linspace(lo, hi, 20000)
    ts = 1 / (1 + 0.5 * zs)
    g = np.array([math.log(math.erfc(z) / t) + z * z for z, t in zip(zs, ts)])
    c, *_ = np.linalg.lstsq(np.vander(ts, degree + 1, increasing=True), g,
                            rcond=None)
    return c


def horner(coeffs, x):
    r = np.full_like(x, coeffs[-1])
    for c in coeffs[-2::-1]:
        r = r * x + c
    return r


def show(name, coeffs):
    print(name + ":", ", ".join("%.9gf" % F(c) for c in coeffs[::-1]))


def fast_erf(x, p, q):
    z = np.minimum(np.abs(x), F(4))
    s = z * z
    small = z * horner(p, s)
    t = F(1) / (F(1) + F(0.5) * z)
    large = F(1) - t * np.exp(horner(q, t) - s).astype(F)
    return np.copysign(np.where(z < F(0.875), small, large), x)


def fast_tanh(x, p):
    z = np.minimum(np.abs(x), F(9))
    small = z * horner(p, z * z)
    large = F(1) - F(2) / (F(1) + np.exp(F(2) * z))
    return np.copysign(np.where(z < F(0.625), small, large), x)


def errors(name, got, ref, x, small):
    ae = np.abs(got.astype(np.float64) - ref)
    re = ae / np.maximum(np.abs(ref), 1e-38)
    worst_rel = re[np.abs(x) < small].max()
    print("%s: max abs error %.3g (at %g), max relative below %g: %.3g"
          % (name, ae.max(), x[ae.argmax()], small, worst_rel))
    return ae.max() <= 2e-7 and worst_rel <= 2e-7


def main():
    p_erf = [F(c) for c in fit_odd(math.erf, 0.875, 5)]
    q_erf = [F(c) for c in fit_erfc_log(0.875, 4.0, 7)]
    p_tanh = [F(c) for c in fit_odd(math.tanh, 0.625, 6)]
    show("erf P", p_erf)
    show("erf Q", q_erf)
    show("tanh P", p_tanh)
    x = np.concatenate([np.linspace(-12, 12, 2000001, dtype=F),
                        F(np.logspace(-30, 0, 10000)),
                        -F(np.logspace(-30, 0, 10000))])
    ref_erf = np.array([math.erf(float(v)) for v in x])
    ok = errors("erf", fast_erf(x, p_erf, q_erf), ref_erf, x, 0.875)
    ok &= errors("tanh", fast_tanh(x, p_tanh), np.tanh(x.astype(np.float64)),
                 x, 12)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
