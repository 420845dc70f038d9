#!/usr/bin/env python3
"""Independent oracle for fp16 conversion: CPython's struct 'e' format.

Prints the CRC-32s (zlib) that fp16_python_oracle_test.cc compares against:
  widen:  for h in 0..0xFFFF, skipping NaNs, the 4 little-endian bytes of the
          binary32 value struct.unpack('<e') decodes h to;
  narrow: for sign in (0, 1), hi in 0..2^19-1, lo in LOW_BITS, skipping NaNs,
          the 2 little-endian bytes struct.pack('<e') rounds the binary32
          pattern (sign << 31) | (hi << 13) | lo to. struct rounds half to even
          and raises OverflowError when the rounded value does not fit, which
          IEEE round-to-nearest turns into inf.
The low 13 bits are the ones fp16 drops: LOW_BITS puts inputs exactly on,
just below, at and just above every rounding midpoint of every fp16 value.
Run: /usr/bin/python3 tests/unit/datapath/arith/fp16_python_oracle.py
"""
import math
import struct
import sys
import zlib

LOW_BITS = (0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF)


def widen_crc():
    crc = 0
    for h in range(0x10000):
        v = struct.unpack('<e', h.to_bytes(2, 'little'))[0]
        if math.isnan(v):
            continue
        crc = zlib.crc32(struct.pack('<f', v), crc)
    return crc


def narrow(bits):
    v = struct.unpack('<f', bits.to_bytes(4, 'little'))[0]
    try:
        return struct.pack('<e', v)
    except OverflowError:
        return struct.pack('<e', math.copysign(math.inf, v))


def narrow_crc():
    crc = 0
    count = 0
    for sign in (0, 1):
        for hi in range(1 << 19):
            for lo in LOW_BITS:
                bits = (sign << 31) | (hi << 13) | lo
                if (bits & 0x7F800000) == 0x7F800000 and (bits & 0x007FFFFF) != 0:
                    continue  # NaN
                crc = zlib.crc32(narrow(bits), crc)
                count += 1
    return crc, count


def main():
    print(f'python {sys.version.split()[0]}')
    print(f'widen  crc32 = 0x{widen_crc():08X}')
    crc, count = narrow_crc()
    print(f'narrow crc32 = 0x{crc:08X} over {count} inputs')


if __name__ == '__main__':
    main()
