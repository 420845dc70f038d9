#!/usr/bin/env python3
"""Independent oracle for the fp8 codecs (OCP 8-bit floating point, v1.0, 2023).

Written from the format definitions, without the C++ code's bit manipulation or
its quantum arithmetic: every one of the 256 patterns is decoded with
fractions.Fraction, and a binary32 value is rounded to the nearest of those
decoded values (an exact integer comparison), ties to the pattern whose last
mantissa bit is 0. Beyond the largest finite value the next value of the
format's grid is a stand-in (E5M2: 2^16, the even pattern 0x7C; E4M3: 480, the
odd pattern 0x7F): a value that rounds to it or lies beyond it overflows, to
+-inf (E5M2) or to the NaN 0x7F (E4M3 has no infinity: OCP's non-saturating
conversion). NaN inputs give the canonical NaNs 0x7F / 0x7E, +-inf gives +-inf
(E5M2) or 0x7F (E4M3); a negative value that rounds to zero gives -0.

Prints the CRC-32s (zlib) that fp8_python_oracle_test.cc compares against, per
format:
  widen:  for b in 0..255, the 4 little-endian bytes of the binary32 value b
          decodes to (NaN: the canonical 0x7FC00000);
  midpoints: for sign in (0, 1), hi in 0..2^(31-D)-1, lo in low_bits(D), the
          byte the binary32 pattern (sign << 31) | (hi << D) | lo rounds to,
          D = 20 (E4M3) or 21 (E5M2), the binary32 mantissa bits the format
          drops at normal magnitudes. low_bits puts inputs on, next to and at
          every rounding midpoint and at every eighth between them, over the
          whole binary32 range (subnormal, normal, overflow, inf, NaN). In the
          fp8 subnormal range the midpoints have few significant bits, so they
          are among the lo = 0 patterns, with their neighbours at lo = 1 and
          lo = 2^D - 1 (of hi - 1);
  dense:  for hi in 0..2^20-1, lo in (0, 0xFFF), the byte (hi << 12) | lo
          rounds to: all of binary32 at a resolution of 2^-11 per binade.
Run: /usr/bin/python3 tests/unit/datapath/arith/fp8_python_oracle.py
"""
from fractions import Fraction
import bisect
import struct
import sys
import zlib

SCALE = 2 ** 149  # every binary32 and fp8 value is an integer multiple of 2^-149


class Format:
    def __init__(self, name, exp_bits, man_bits, bias, canonical_nan, has_inf):
        self.name = name
        self.exp_bits = exp_bits
        self.man_bits = man_bits
        self.bias = bias
        self.canonical_nan = canonical_nan
        self.has_inf = has_inf

    # OCP FP8 v1.0, section 4: (sign, kind, magnitude) with kind 'nan', 'inf' or 'finite'.
    def decode(self, b):
        sign = b >> 7
        e = (b >> self.man_bits) & ((1 << self.exp_bits) - 1)
        m = b & ((1 << self.man_bits) - 1)
        top = (1 << self.exp_bits) - 1
        if self.has_inf:  # E5M2: IEEE-like
            if e == top:
                return sign, ('inf' if m == 0 else 'nan'), None
        elif e == top and m == (1 << self.man_bits) - 1:  # E4M3: S.1111.111 only
            return sign, 'nan', None
        if e == 0:
            mag = Fraction(2) ** (1 - self.bias) * Fraction(m, 1 << self.man_bits)
        else:
            mag = Fraction(2) ** (e - self.bias) * (1 + Fraction(m, 1 << self.man_bits))
        return sign, 'finite', mag


E4M3 = Format('e4m3', 4, 3, 7, 0x7F, False)
E5M2 = Format('e5m2', 5, 2, 15, 0x7E, True)


def scaled(mag):
    s = mag * SCALE
    assert s.denominator == 1
    return s.numerator


class Rounder:
    def __init__(self, f):
        self.f = f
        grid = []  # (scaled magnitude, pattern) of the non-negative finite values
        for b in range(0x80):
            sign, kind, mag = f.decode(b)
            if kind == 'finite':
                grid.append((scaled(mag), b))
        grid.sort()
        largest = grid[-1][0]
        # The stand-in for the first value past the largest finite one.
        if f.has_inf:
            sentinel = (scaled(Fraction(2) ** 16), 0x7C)
        else:
            sentinel = (scaled(Fraction(480)), 0x7F)
        assert sentinel[0] > largest
        self.grid = grid + [sentinel]
        self.keys = [g[0] for g in self.grid]
        self.sentinel = sentinel

    def round_magnitude(self, x):
        """Pattern (no sign) of the nearest value to the scaled magnitude x; None: overflow."""
        i = bisect.bisect_left(self.keys, x)
        if i == len(self.keys):
            return None  # beyond the stand-in
        if self.keys[i] == x:
            choice = self.grid[i]
        else:
            lo, hi = self.grid[i - 1], self.grid[i]
            d_lo, d_hi = x - lo[0], hi[0] - x
            if d_lo < d_hi:
                choice = lo
            elif d_hi < d_lo:
                choice = hi
            else:  # a tie: the even pattern
                choice = lo if lo[1] % 2 == 0 else hi
        return None if choice == self.sentinel else choice[1]

    def narrow(self, bits):
        sign = bits >> 31
        e = (bits >> 23) & 0xFF
        m = bits & 0x7FFFFF
        f = self.f
        if e == 0xFF:
            if m != 0:
                return f.canonical_nan
            return (sign << 7) | 0x7C if f.has_inf else f.canonical_nan
        # IEEE 754 binary32: subnormal m * 2^-149, normal (2^23 + m) * 2^(e - 150).
        mag = Fraction(m) * Fraction(2) ** -149 if e == 0 else \
            Fraction((1 << 23) + m) * Fraction(2) ** (e - 150)
        r = self.round_magnitude(scaled(mag))
        if r is None:
            return (sign << 7) | 0x7C if f.has_inf else f.canonical_nan
        return (sign << 7) | r


def widen_crc(f):
    out = bytearray()
    for b in range(256):
        sign, kind, mag = f.decode(b)
        if kind == 'nan':
            out += (0x7FC00000).to_bytes(4, 'little')
        elif kind == 'inf':
            out += struct.pack('<f', float('-inf') if sign else float('inf'))
        else:
            v = float(mag)  # exact: mag has at most 4 significant bits
            assert Fraction(v) == mag
            out += struct.pack('<f', -v if sign else v)
    return zlib.crc32(bytes(out))


def low_bits(drop):
    full = 1 << drop
    half = full >> 1
    lows = {0, 1, 2, half - 1, half, half + 1, full - 2, full - 1}
    lows.update(k * (full >> 3) for k in range(1, 8))
    return sorted(lows)


def midpoint_inputs(drop):
    for sign in (0, 1):
        for hi in range(1 << (31 - drop)):
            for lo in low_bits(drop):
                yield (sign << 31) | (hi << drop) | lo


def dense_inputs():
    for hi in range(1 << 20):
        for lo in (0, 0xFFF):
            yield (hi << 12) | lo


def narrow_crc(rounder, inputs):
    out = bytes(rounder.narrow(b) for b in inputs)
    return zlib.crc32(out), len(out)


def main():
    print(f'python {sys.version.split()[0]}')
    for f, drop in ((E4M3, 20), (E5M2, 21)):
        r = Rounder(f)
        print(f'{f.name} widen     crc32 = 0x{widen_crc(f):08X}')
        crc, count = narrow_crc(r, midpoint_inputs(drop))
        print(f'{f.name} midpoints crc32 = 0x{crc:08X} over {count} inputs '
              f'(low bits {", ".join(hex(x) for x in low_bits(drop))})')
        crc, count = narrow_crc(r, dense_inputs())
        print(f'{f.name} dense     crc32 = 0x{crc:08X} over {count} inputs')


if __name__ == '__main__':
    main()
