"""The records of warpgroup_fp8_sums.cu: (kind, C, a[32], b[32]) that show how a Hopper tensor
core groups, aligns and rounds FP8 products under wgmma: a large product and a small one a gap
of 2 to 30 binades below it at every other k, with and without a second large product that
cancels the first; two or three products of random exponents; whole random dot products with a
random C, of every kind; C against one or two products. Writes them to the file named; the
program's recorded results belong to exactly these records.
    python3 warpgroup_fp8_sums_inputs.py RECORDS
"""
import random
import struct
import sys

random.seed(11)
records = []


def e5(exponent, sign=0, mantissa=0):
    return (sign << 7) | ((exponent + 15) << 2) | mantissa


def e4(exponent, sign=0, mantissa=0):
    return (sign << 7) | ((exponent + 7) << 3) | mantissa


def add(kind, a, b, c=0):
    records.append(struct.pack('<II32s32s8x', kind, c, bytes(a), bytes(b)))


# Kind: 0-3 .f32 accumulators (a, b) = (e4m3, e4m3), (e4m3, e5m2), (e5m2, e4m3), (e5m2, e5m2);
# 4-7 the same into .f16.
pairs = ((0, 1), (0, 16), (0, 31), (5, 9), (3, 19), (2, 3), (8, 24))
for kind, encode, large, low in ((3, e5, 7, -14), (0, e4, 4, -6)):
    for i, j in pairs:
        for p in range(32):
            if p in (i, j):
                continue
            for gap in range(2, 31):
                h = 2 * large - gap
                x = h // 2
                y = h - x
                if x < low or y < low:
                    continue
                for mantissas in range(3):
                    ma = random.randrange(4 if encode is e5 else 8)
                    mb = random.randrange(4 if encode is e5 else 8)
                    sign = random.randrange(2)
                    for cancel in (0, 1):
                        a = [0] * 32
                        b = [0] * 32
                        a[i] = encode(large, 0, random.randrange(2))
                        b[i] = encode(large)
                        if cancel:
                            a[j] = a[i] ^ 0x80
                            b[j] = b[i]
                        a[p] = encode(x, sign, ma)
                        b[p] = encode(y, 0, mb)
                        add(kind, a, b)
# Two or three products of random exponents, anywhere.
for n in range(60000):
    kind = random.choice((0, 3))
    encode, large, low = (e5, 7, -14) if kind == 3 else (e4, 8, -6)
    a = [0] * 32
    b = [0] * 32
    for p in random.sample(range(32), random.choice((2, 3))):
        a[p] = encode(random.randint(low, large), random.randrange(2), random.randrange(4 if encode is e5 else 8))
        b[p] = encode(random.randint(low, large), 0, random.randrange(4 if encode is e5 else 8))
    add(kind, a, b)
# Whole random dot products, every kind, C random.
for n in range(80000):
    kind = random.randrange(8)
    a = [random.randrange(256) for _ in range(32)]
    b = [random.randrange(256) for _ in range(32)]
    for v in (a, b):
        for z in range(32):
            if (v[z] & 0x7F) in (0x7F, 0x7C, 0x7D, 0x7E):  # no NaN or infinity
                v[z] &= 0xF0
    if kind < 4:
        c = struct.unpack('<I', struct.pack('<f', random.choice([1, -1, 0]) * random.uniform(1, 2) * 2.0 ** random.randint(-20, 20)))[0]
    else:
        c = struct.unpack('<H', struct.pack('<e', random.choice([1, -1, 0]) * random.uniform(1, 2) * 2.0 ** random.randint(-10, 10)))[0]
    add(kind, a, b, c)
# C against one or two products, every exponent gap.
for n in range(40000):
    kind = random.choice((3, 7, 0, 4))
    encode = e5 if kind in (3, 7) else e4
    a = [0] * 32
    b = [0] * 32
    for p in random.sample(range(32), random.choice((1, 2))):
        a[p] = encode(random.randint(-6, 7), random.randrange(2), random.randrange(4))
        b[p] = encode(random.randint(-6, 7), 0, random.randrange(4))
    if kind < 4:
        c = struct.unpack('<I', struct.pack('<f', random.choice([1, -1]) * random.uniform(1, 2) * 2.0 ** random.randint(-24, 24)))[0]
    else:
        c = struct.unpack('<H', struct.pack('<e', random.choice([1, -1]) * random.uniform(1, 2) * 2.0 ** random.randint(-12, 12)))[0]
    add(kind, a, b, c)
open(sys.argv[1], 'wb').write(b''.join(records))
print(len(records))
