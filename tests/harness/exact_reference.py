#!/usr/bin/env python3
"""Exact float sums, rounded once: the reference the exact-sum harness tests compare the
switch's KULISCH_FIXED results with, written from the format definitions (IEEE 754 binary32,
binary16, bfloat16; OCP FP8 E4M3FN and E5M2) with Python's integers and fractions only — none
of EPIC's code.

    exact_reference.py IN OUT

IN: one case per line, `DTYPE N HEX0 HEX1 ...`: N elements, one little-endian hex string per
contribution (N * width bytes each). OUT: one line per case, the hex of the N results.

Result of an element (docs/arithmetic.md): NaN if any contribution is NaN or both infinities
occur; an infinity if one occurs; else the exact sum rounded once to nearest, ties to even
(subnormals exact; beyond the largest finite value: infinity, or NaN for E4M3, which has no
infinity); an exact zero is -0 only when every contribution was -0. NaNs are canonical.
"""
import sys
from fractions import Fraction

# name: (width bytes, exponent bits, mantissa bits, bias, has_inf, canonical NaN)
FORMATS = {
    "fp32": (4, 8, 23, 127, True, 0x7FC00000),
    "bf16": (2, 8, 7, 127, True, 0x7FC0),
    "fp16": (2, 5, 10, 15, True, 0x7E00),
    "fp8_e5m2": (1, 5, 2, 15, True, 0x7E),
    "fp8_e4m3": (1, 4, 3, 7, False, 0x7F),
}


def decode(fmt, bits):
    """('nan' | 'inf' | 'value', value or sign)."""
    _, ebits, mbits, bias, has_inf, _ = fmt
    sign = bits >> (ebits + mbits) & 1
    e = bits >> mbits & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if has_inf and e == top:
        return ("nan", None) if m else ("inf", sign)
    if not has_inf and e == top and m == (1 << mbits) - 1:
        return ("nan", None)
    if e == 0:
        v = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
    return ("value", (sign, -v if sign else v))


def encode_inf(fmt, sign):
    _, ebits, mbits, _, has_inf, nan = fmt
    if not has_inf:
        return nan
    return sign << (ebits + mbits) | ((1 << ebits) - 1) << mbits


def round_once(fmt, x):
    """x (a nonzero Fraction) rounded to nearest even into fmt: its bits."""
    _, ebits, mbits, bias, has_inf, nan = fmt
    sign = 1 if x < 0 else 0
    a = -x if sign else x
    p = mbits + 1
    emin = 1 - bias
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    q = Fraction(2) ** (e - (p - 1))
    m = a / q
    r = m.numerator // m.denominator
    rest = m - r
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and r % 2 == 1):
        r += 1
    if r == 1 << p:
        r >>= 1
        e += 1
    top = (1 << ebits) - 1
    if r < 1 << (p - 1):  # subnormal (or the smallest normal reached by rounding: r == 2^(p-1))
        field = 0
    else:
        field = e + bias
        r -= 1 << (p - 1)
    overflow = field > top or (has_inf and field == top) or (
        not has_inf and field == top and r == (1 << mbits) - 1)
    if overflow:
        return encode_inf(fmt, sign) if has_inf else nan
    return sign << (ebits + mbits) | field << mbits | r


def element(fmt, contributions):
    nan = pos_inf = neg_inf = False
    all_neg_zero = True
    total = Fraction(0)
    for bits in contributions:
        kind, v = decode(fmt, bits)
        if kind == "nan":
            nan = True
            all_neg_zero = False
        elif kind == "inf":
            pos_inf |= v == 0
            neg_inf |= v == 1
            all_neg_zero = False
        else:
            sign, value = v
            if not (sign == 1 and value == 0):
                all_neg_zero = False
            total += value
    if nan or (pos_inf and neg_inf):
        return fmt[5]
    if pos_inf or neg_inf:
        return encode_inf(fmt, 1 if neg_inf else 0)
    if total == 0:
        return 1 << (fmt[1] + fmt[2]) if all_neg_zero else 0
    return round_once(fmt, total)


def case(line):
    words = line.split()
    fmt = FORMATS[words[0]]
    n = int(words[1])
    w = fmt[0]
    raws = [bytes.fromhex(h) for h in words[2:]]
    out = bytearray()
    for i in range(n):
        bits = [int.from_bytes(r[i * w:(i + 1) * w], "little") for r in raws]
        out += element(fmt, bits).to_bytes(w, "little")
    return out.hex()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
        for line in f:
            if line.strip():
                o.write(case(line) + "\n")


if __name__ == "__main__":
    main()
