#!/usr/bin/env python3
"""The results sub_byte_mma.cu expects, from the PTX ISA alone: its inputs made again from the
same hash, placed by the ISA's fragment layouts of mma.sync (.s4/.u4: eight to a register, .b1:
thirty-two; runs along a row, rows g and g+8, then columns beyond) and by wmma's loads (row-major
A, column-major B, sub-byte elements packed from each byte's lowest bits), and summed exactly as
the ISA defines: D = C + sum of A*B wrapping modulo 2^32 or, with .satfinite, clamped; .b1 counts
the positions where (A xor B) or (A and B) is 1. Prints each form's FNV-1a hash as the program
does; with a file name, writes every result as the program would.
    sub_byte_mma_reference.py [RESULTS]
"""
import struct
import sys

MASK = 0xFFFFFFFF
RECORDS, WORDS = 1024, 4


def mix(x):
    x &= MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    x ^= x >> 16
    return x


def random_word(form, record, index):
    return mix(mix(mix((form * 0x9E3779B9 + 23) & MASK) ^ record) ^ ((index * 0x85EBCA6B) & MASK))


def random_accumulator(form, record, index):
    word = random_word(form + 1000, record, index)
    if record % 4 != 3:
        return word
    return 0x7FFFFFFF - (word >> 20) if word & 1 else 0x80000000 + (word >> 20)


def signed32(x):
    x &= MASK
    return x - (1 << 32) if x & 0x80000000 else x


def elements(word, bits, signed):
    values = []
    for index in range(32 // bits):
        value = (word >> (index * bits)) & ((1 << bits) - 1)
        if signed and value >= 1 << (bits - 1):
            value -= 1 << bits
        values.append(value)
    return values


def accumulate(c, a_row, b_column, saturate, bit_operation):
    if bit_operation == "xor":
        total = signed32(c) + sum(x ^ y for x, y in zip(a_row, b_column))
    elif bit_operation == "and":
        total = signed32(c) + sum(x & y for x, y in zip(a_row, b_column))
    else:
        total = signed32(c) + sum(x * y for x, y in zip(a_row, b_column))
    if saturate:
        total = max(-(1 << 31), min((1 << 31) - 1, total))
    return total & MASK


# mma.sync forms: rows of A (8 or 16), k, bits per element, A and B registers, signedness of A and
# B, .satfinite, .b1 operation.
REGISTER_FORMS = [
    (8, 32, 4, 1, 1, True, True, False, None),
    (8, 32, 4, 1, 1, False, True, True, None),
    (16, 32, 4, 2, 1, False, False, False, None),
    (16, 64, 4, 4, 2, True, False, True, None),
    (8, 128, 1, 1, 1, False, False, False, "xor"),
    (16, 128, 1, 2, 1, False, False, False, "and"),
    (16, 256, 1, 4, 2, False, False, False, "xor"),
]
# wmma forms: k, bits, signed, .satfinite, .b1 operation.
WMMA_FORMS = [(32, 4, True, False, None), (32, 4, False, True, None), (128, 1, False, False, "xor"), (128, 1, False, False, "and")]


def register_form(form, record, m, k, bits, a_registers, b_registers, a_signed, b_signed, saturate, operation, out):
    per = 32 // bits
    a = [[0] * k for _ in range(m)]
    b = [[0] * 8 for _ in range(k)]
    places = []
    for lane in range(32):
        group, thread = lane >> 2, lane & 3
        a_values = sum((elements(random_word(form, record, lane * 16 + i), bits, a_signed) for i in range(a_registers)), [])
        b_values = sum((elements(random_word(form, record, lane * 16 + 4 + i), bits, b_signed) for i in range(b_registers)), [])
        for i, value in enumerate(a_values):
            row = group if m == 8 else group + 8 * ((i // per) & 1)
            column = per * thread + i if m == 8 else per * thread + i % per + 4 * per * (i // (2 * per))
            a[row][column] = value
        for i, value in enumerate(b_values):
            row = per * thread + i if m == 8 else per * thread + i % per + 4 * per * (i // per)
            b[row][group] = value
        for i in range(2 if m == 8 else 4):
            places.append((lane, i, group + 8 * (i >> 1), 2 * thread + (i & 1), random_accumulator(form, record, lane * 16 + 8 + i)))
    for lane, i, row, column, c in places:
        out[((form * RECORDS + record) * 32 + lane) * WORDS + i] = accumulate(c, a[row], [b[x][column] for x in range(k)],
                                                                            saturate, operation)


def wmma_form(form, record, k, bits, signed, saturate, operation, out):
    def packed(words, index):
        bit = index * bits
        value = (words[bit // 32] >> (bit % 32)) & ((1 << bits) - 1)
        return value - (1 << bits) if signed and bits > 1 and value >= 1 << (bits - 1) else value

    a_words = [random_word(form, record, lane) for lane in range(32)]
    b_words = [random_word(form, record, 32 + lane) for lane in range(32)]
    c = [random_accumulator(form, record, index) for index in range(64)]
    for lane in range(32):
        for i in range(2):
            element = 2 * lane + i
            row, column = element // 8, element % 8
            a_row = [packed(a_words, row * k + x) for x in range(k)]
            b_column = [packed(b_words, column * k + x) for x in range(k)]
            out[((form * RECORDS + record) * 32 + lane) * WORDS + i] = accumulate(c[element], a_row, b_column, saturate, operation)


def main():
    forms = len(REGISTER_FORMS) + len(WMMA_FORMS)
    out = [0] * (forms * RECORDS * 32 * WORDS)
    for form, shape in enumerate(REGISTER_FORMS):
        for record in range(RECORDS):
            register_form(form, record, *shape, out)
    for index, shape in enumerate(WMMA_FORMS):
        for record in range(RECORDS):
            wmma_form(len(REGISTER_FORMS) + index, record, *shape, out)
    per_form = RECORDS * 32 * WORDS
    for form in range(forms):
        hash_value = 2166136261
        for word in out[form * per_form:(form + 1) * per_form]:
            for byte in range(4):
                hash_value = ((hash_value ^ ((word >> (8 * byte)) & 0xFF)) * 16777619) & MASK
        print("form %2d %08x" % (form, hash_value))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "wb") as file:
            file.write(struct.pack("<%dI" % len(out), *out))


if __name__ == "__main__":
    main()
