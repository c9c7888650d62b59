#!/usr/bin/env python3
"""Writes the PTX conformance cases under cases/<family>/<name>.ptx.

Every case is the same kernel frame around a few lines of PTX, so the cases are generated from
the table below rather than written by hand; the generated files are committed so that the
runner, and whoever reads a failure, sees plain PTX. Rerun after editing the table:
    python3 tests/conformance/generate_cases.py
The header comments of each file are the case's descriptor, parsed by conformance_runner.cpp.
"""

import pathlib
import shutil

CASES_DIR = pathlib.Path(__file__).resolve().parent / "cases"

# element type -> (register type, load/store type, size in bytes)
TYPES = {
    "u16": ("b16", "u16", 2), "s16": ("b16", "s16", 2),
    "f16": ("b16", "b16", 2), "bf16": ("b16", "b16", 2),
    "u32": ("b32", "u32", 4), "s32": ("b32", "s32", 4), "f32": ("f32", "f32", 4),
    "u64": ("b64", "u64", 8), "s64": ("b64", "s64", 8), "f64": ("f64", "f64", 8),
}
INPUT_REGISTERS = ("%a", "%b", "%c")
ROUNDINGS = ("rn", "rz", "rm", "rp")
INTEGER_ROUNDINGS = ("rni", "rzi", "rmi", "rpi")
WIDTH_TYPES = {32: ("s32", "u32"), 64: ("s64", "u64")}

cases = {}


def case(family, name, inputs, output, body, version="8.1", **descriptor):
    """Registers one case; descriptor keys become header lines (skip, tolerance, domain, note).
    `version` is the PTX ISA version the case needs."""
    key = f"{family}/{name.replace('.', '_')}"
    assert key not in cases, key
    cases[key] = (inputs, output, body, version, descriptor)


def element_address(parameter, size):
    return [f"ld.param.u64 %address, [{parameter}];",
            "cvta.to.global.u64 %address, %address;",
            f"mul.wide.u32 %offset, %index, {size};",
            "add.u64 %address, %address, %offset;"]


def render(key, inputs, output, body, version, descriptor):
    header = [f"// conformance case {key}",
              f"// inputs: {' '.join(inputs)}",
              f"// output: {output}"]
    header += [f"// {name}: {value}" for name, value in descriptor.items()]
    declarations = [f".reg .{TYPES[t][0]} {r};" for t, r in zip(inputs, INPUT_REGISTERS)]
    declarations.append(f".reg .{TYPES[output][0]} %d;")
    loads = []
    for index, (element, register) in enumerate(zip(inputs, INPUT_REGISTERS)):
        loads += element_address(f"in{index}", TYPES[element][2])
        loads.append(f"ld.global.{TYPES[element][1]} {register}, [%address];")
    store = element_address("out", TYPES[output][2])
    store.append(f"st.global.{TYPES[output][1]} [%address], %d;")
    kernel = [
        ".reg .pred %outside;", ".reg .b32 %index, %count;", ".reg .b64 %address, %offset;",
        ".reg .pred %p<2>;", ".reg .b32 %t<4>;",
        *declarations, "",
        "mov.u32 %index, %ctaid.x;", "mov.u32 %t0, %ntid.x;", "mov.u32 %t1, %tid.x;",
        "mad.lo.u32 %index, %index, %t0, %t1;", "ld.param.u32 %count, [count];",
        "setp.ge.u32 %outside, %index, %count;", "@%outside bra done;",
        *loads, *body, *store]
    lines = header + [
        f".version {version}", ".target sm_90", ".address_size 64", "",
        ".visible .entry conformance(.param .u64 in0, .param .u64 in1, .param .u64 in2,",
        "                            .param .u64 out, .param .u32 count)", "{",
        *["    " + line if line else line for line in kernel],
        "done:", "    ret;", "}", ""]
    return "\n".join(lines)


def unary(family, instruction, source, result=None, **descriptor):
    case(family, instruction, [source], result or source, [f"{instruction} %d, %a;"], **descriptor)


def binary(family, instruction, source, result=None, second=None, **descriptor):
    case(family, instruction, [source, second or source], result or source,
         [f"{instruction} %d, %a, %b;"], **descriptor)


def ternary(family, instruction, types, result, **descriptor):
    case(family, instruction, list(types), result, [f"{instruction} %d, %a, %b, %c;"], **descriptor)


def comparison_mask(family, name, instruction, comparisons, source):
    """One case for all comparisons: bit k of the output is the result of comparison k."""
    body = ["mov.u32 %d, 0;"]
    for bit, comparison in enumerate(comparisons):
        body += [f"{instruction.format(comparison)} %p0, %a, %b;",
                 f"selp.u32 %t0, {1 << bit}, 0, %p0;", "or.b32 %d, %d, %t0;"]
    case(family, name, [source, source], "u32", body,
         note="bit k = " + " ".join(comparisons))


def integer_cases():
    family = "integer"
    zero_divisor = "the ISA leaves division by zero unspecified: inputs with in1 = 0 are skipped"
    for width, (signed, unsigned) in WIDTH_TYPES.items():
        for t in (signed, unsigned):
            for operation in ("add", "sub", "mul.lo", "mul.hi", "min", "max"):
                binary(family, f"{operation}.{t}", t)
            for operation in ("div", "rem"):
                binary(family, f"{operation}.{t}", t, skip="zero_in1", note=zero_divisor)
            for operation in ("mad.lo", "mad.hi"):
                ternary(family, f"{operation}.{t}", (t, t, t), t)
            binary(family, f"shr.{t}", t, second="u32")
            unary(family, f"bfind.{t}", t, result="u32")
            ternary(family, f"bfe.{t}", (t, "u32", "u32"), t)
            ternary(family, f"sad.{t}", (t, t, t), t)
        for operation in ("abs", "neg"):
            unary(family, f"{operation}.{signed}", signed)
        binary(family, f"shl.b{width}", unsigned, second="u32")
        for operation in ("brev",):
            unary(family, f"{operation}.b{width}", unsigned)
        for operation in ("clz", "popc"):
            unary(family, f"{operation}.b{width}", unsigned, result="u32")
        # pos and len of bfi come from the low two bytes of the third input, so one case covers
        # both operands; the ISA clamps them to 0..255.
        case(family, f"bfi.b{width}", [unsigned, unsigned, "u32"], unsigned,
             ["and.b32 %t0, %c, 255;", "shr.u32 %t1, %c, 8;", "and.b32 %t1, %t1, 255;",
              f"bfi.b{width} %d, %a, %b, %t0, %t1;"])
        comparison_mask(family, f"setp.{signed}", "setp.{}." + signed,
                        ("eq", "ne", "lt", "le", "gt", "ge"), signed)
        comparison_mask(family, f"setp.{unsigned}", "setp.{}." + unsigned,
                        ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"), unsigned)
        case(family, f"selp.b{width}", [unsigned, unsigned, "u32"], unsigned,
             ["and.b32 %t0, %c, 1;", "setp.ne.u32 %p0, %t0, 0;",
              f"selp.b{width} %d, %a, %b, %p0;"])
    for operation in ("add.sat", "sub.sat"):
        binary(family, f"{operation}.s32", "s32")
    for t in ("s32", "u32"):
        wide = t[0] + "64"
        binary(family, f"mul.wide.{t}", t, result=wide)
        ternary(family, f"mad.wide.{t}", (t, t, wide), wide)
        for half in ("lo", "hi"):
            binary(family, f"mul24.{half}.{t}", t)
            ternary(family, f"mad24.{half}.{t}", (t, t, t), t)
    unary(family, "bfind.shiftamt.u32", "u32")
    unary(family, "bfind.shiftamt.s32", "s32", result="u32")
    for mode in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
        ternary(family, f"prmt.b32{mode}", ("u32", "u32", "u32"), "u32")
    for direction in ("l", "r"):
        for mode in ("wrap", "clamp"):
            ternary(family, f"shf.{direction}.{mode}.b32", ("u32", "u32", "u32"), "u32")
    for table in (0x80, 0xFE, 0x96, 0xE8, 0xCA, 0x1E, 0x6A):
        case(family, f"lop3.b32_0x{table:02x}", ["u32", "u32", "u32"], "u32",
             [f"lop3.b32 %d, %a, %b, %c, 0x{table:02x};"])
    split = ["mov.b64 {%t0, %t1}, %a;", "mov.b64 {%t2, %t3}, %b;"]
    join = ["mov.b64 %d, {%t0, %t1};"]
    case(family, "addc_chain_u64", ["u64", "u64"], "u64",
         split + ["add.cc.u32 %t0, %t0, %t2;", "addc.u32 %t1, %t1, %t3;"] + join)
    case(family, "subc_chain_u64", ["u64", "u64"], "u64",
         split + ["sub.cc.u32 %t0, %t0, %t2;", "subc.u32 %t1, %t1, %t3;"] + join)
    case(family, "add_cc_carry_out", ["u32", "u32"], "u32",
         ["add.cc.u32 %t0, %a, %b;", "addc.u32 %d, 0, 0;"])
    case(family, "sub_cc_borrow_out", ["u32", "u32"], "u32",
         ["sub.cc.u32 %t0, %a, %b;", "subc.u32 %d, 0, 0;"])
    case(family, "addc_cc_carry_through", ["u32", "u32", "u32"], "u32",
         ["add.cc.u32 %t0, %a, %b;", "addc.cc.u32 %t1, %c, %a;", "addc.u32 %t2, 0, 0;",
          "xor.b32 %d, %t1, %t2;"])
    case(family, "madc_chain_u64", ["u32", "u32", "u64"], "u64",
         ["mov.b64 {%t0, %t1}, %c;", "mad.lo.cc.u32 %t0, %a, %b, %t0;",
          "madc.hi.u32 %t1, %a, %b, %t1;"] + join)


def float_cases():
    family = "float"
    for t in ("f32", "f64"):
        for rounding in ROUNDINGS:
            for operation in ("add", "sub", "mul", "div"):
                binary(family, f"{operation}.{rounding}.{t}", t)
            ternary(family, f"fma.{rounding}.{t}", (t, t, t), t)
            unary(family, f"sqrt.{rounding}.{t}", t)
            unary(family, f"rcp.{rounding}.{t}", t)
        for operation in ("min", "max"):
            binary(family, f"{operation}.{t}", t)
        for operation in ("abs", "neg"):
            unary(family, f"{operation}.{t}", t)
        binary(family, f"copysign.{t}", t)
        body = ["mov.u32 %d, 0;"]
        properties = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
        for bit, property_name in enumerate(properties):
            body += [f"testp.{property_name}.{t} %p0, %a;", f"selp.u32 %t0, {1 << bit}, 0, %p0;",
                     "or.b32 %d, %d, %t0;"]
        case(family, f"testp.{t}", [t], "u32", body, note="bit k = " + " ".join(properties))
    comparisons = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                   "num", "nan")
    comparison_mask(family, "setp.f32", "setp.{}.f32", comparisons, "f32")
    comparison_mask(family, "setp.ftz.f32", "setp.{}.ftz.f32", comparisons, "f32")
    comparison_mask(family, "setp.f64", "setp.{}.f64", comparisons, "f64")
    # div, sqrt and rcp have no .sat form.
    for operation in ("add", "sub", "mul", "div", "sqrt", "rcp", "fma"):
        arity = {"sqrt": 1, "rcp": 1, "fma": 3}.get(operation, 2)
        saturating = operation in ("add", "sub", "mul", "fma")
        for modifiers in ((".rn.ftz", ".rn.sat", ".rn.ftz.sat") if saturating else (".rn.ftz",)):
            name = f"{operation}{modifiers}.f32"
            case(family, name, ["f32"] * arity, "f32",
                 [f"{name} %d, {', '.join(INPUT_REGISTERS[:arity])};"])
    for operation in ("min", "max"):
        for modifiers in (".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs"):
            binary(family, f"{operation}{modifiers}.f32", "f32")
    for operation in ("abs", "neg"):
        unary(family, f"{operation}.ftz.f32", "f32")
        unary(family, f"{operation}.f16", "f16")
        unary(family, f"{operation}.bf16", "bf16")


def conversion_cases():
    family = "conversion"
    unary(family, "cvt.f32.f16", "f16", result="f32")
    unary(family, "cvt.f32.bf16", "bf16", result="f32")
    unary(family, "cvt.f64.f32", "f32", result="f64")
    unary(family, "cvt.ftz.f64.f32", "f32", result="f64")
    for rounding in ROUNDINGS:
        unary(family, f"cvt.{rounding}.f16.f32", "f32", result="f16")
        unary(family, f"cvt.{rounding}.bf16.f32", "f32", result="bf16")
        unary(family, f"cvt.{rounding}.f32.f64", "f64", result="f32")
        unary(family, f"cvt.{rounding}.f16.f64", "f64", result="f16")
        for integer in ("s32", "u32", "s64", "u64"):
            unary(family, f"cvt.{rounding}.f32.{integer}", integer, result="f32")
            unary(family, f"cvt.{rounding}.f64.{integer}", integer, result="f64")
    for modifiers in (".rn.relu", ".rn.satfinite"):
        unary(family, f"cvt{modifiers}.f16.f32", "f32", result="f16")
        unary(family, f"cvt{modifiers}.bf16.f32", "f32", result="bf16")
    unary(family, "cvt.rn.ftz.f32.f64", "f64", result="f32")
    for rounding in INTEGER_ROUNDINGS:
        for source in ("f32", "f64"):
            for integer in ("s32", "u32", "s64", "u64"):
                unary(family, f"cvt.{rounding}.{integer}.{source}", source, result=integer)
            unary(family, f"cvt.{rounding}.{source}.{source}", source)
        unary(family, f"cvt.{rounding}.ftz.s32.f32", "f32", result="s32")
    # All 65536 inputs each: the two roundings that differ most.
    for rounding in ("rni", "rzi"):
        unary(family, f"cvt.{rounding}.s16.f16", "f16", result="s16")
        unary(family, f"cvt.{rounding}.u16.f16", "f16", result="u16")
    for rounding in ROUNDINGS:
        unary(family, f"cvt.{rounding}.f16.s16", "s16", result="f16")
        unary(family, f"cvt.{rounding}.f16.u16", "u16", result="f16")
    unary(family, "cvt.sat.f32.f32", "f32")
    unary(family, "cvt.rni.sat.f32.f32", "f32")
    unary(family, "cvt.rn.sat.f16.f32", "f32", result="f16")
    for destination, source in (("s16", "s32"), ("u16", "s32"), ("u16", "u32"), ("s32", "u32"),
                                ("u32", "s32"), ("s32", "s64"), ("u32", "s64"), ("u32", "u64"),
                                ("s64", "u64"), ("u64", "s64")):
        unary(family, f"cvt.sat.{destination}.{source}", source, result=destination)
    for destination, source in (("s64", "s32"), ("u64", "u32"), ("s32", "s64"), ("s16", "s32"),
                                ("s32", "s16"), ("u32", "u16")):
        unary(family, f"cvt.{destination}.{source}", source, result=destination)


def approximation_cases():
    family = "approx"
    # Bounds are the PTX ISA's, relative to the exact result; see conformance_runner.cpp for
    # how they are applied to two approximations. sin and cos are held to theirs only on
    # [-pi, pi]: the H200's own results are up to 2^-15 off the exact sine at |x| near 100 pi.
    bounds = {
        "sin": {"tolerance": "abs -20.5", "domain": "3.14159265"},
        "cos": {"tolerance": "abs -20.5", "domain": "3.14159265"},
        "ex2": {"tolerance": "ulp 2"},
        "lg2": {"tolerance": "abs -22.6 ulp 1"},
        "rsqrt": {"tolerance": "rel -22.9"},
        "rcp": {"tolerance": "ulp 1"},
        "sqrt": {"tolerance": "rel -23"},
        "tanh": {"tolerance": "rel -10.987"},
    }
    for function, descriptor in bounds.items():
        unary(family, f"{function}.approx.f32", "f32", **descriptor)
        if function != "tanh":
            unary(family, f"{function}.approx.ftz.f32", "f32", **descriptor)
    binary(family, "div.approx.f32", "f32", tolerance="ulp 2")
    binary(family, "div.full.f32", "f32", tolerance="ulp 2")
    unary(family, "ex2.approx.f16", "f16", tolerance="rel -9.9")
    unary(family, "tanh.approx.f16", "f16", tolerance="rel -10.7")


def half_lanes(count):
    """Packs f16/bf16 inputs into x2 registers %t0.. so that lane k of operand j is input
    (j + k) % count: the two lanes see the operands in different orders."""
    registers = INPUT_REGISTERS[:count]
    return [f"mov.b32 %t{j}, {{{registers[j]}, {registers[(j + 1) % count]}}};"
            for j in range(count)]


def half_case(family, instruction, element, count, **descriptor):
    """A case for a .f16/.bf16 instruction, and one for its .f16x2/.bf16x2 form."""
    scalar = f"{instruction}.{element}"
    sources = ", ".join(INPUT_REGISTERS[:count])
    case(family, scalar, [element] * count, element, [f"{scalar} %d, {sources};"], **descriptor)
    packed = f"{instruction}.{element}x2"
    case(family, packed, [element] * count, "u32",
         half_lanes(count) + [f"{packed} %d, {', '.join(f'%t{j}' for j in range(count))};"],
         note="lane k of operand j is input (j + k) % inputs", **descriptor)


def half_cases():
    family = "half"
    for element in ("f16", "bf16"):
        # bf16 takes no .ftz or .sat on add/sub/mul/fma; f16 takes both.
        flags = ("", ".ftz", ".sat", ".ftz.sat") if element == "f16" else ("",)
        for operation in ("add", "sub", "mul"):
            for modifiers in flags:
                half_case(family, f"{operation}.rn{modifiers}", element, 2)
        for modifiers in flags + (".relu",) + ((".ftz.relu",) if element == "f16" else ()):
            half_case(family, f"fma.rn{modifiers}", element, 3)
        half_case(family, "fma.rn.oob", element, 3)
        for operation in ("neg", "abs"):
            for modifiers in (("", ".ftz") if element == "f16" else ("",)):
                half_case(family, f"{operation}{modifiers}", element, 1)
        for operation in ("min", "max"):
            for modifiers in ("", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs") + (
                    (".ftz", ".ftz.NaN") if element == "f16" else ()):
                half_case(family, f"{operation}{modifiers}", element, 2)
    # set with 16-bit float operands: 1.0 or 0 in a float d, all ones or 0 in an integer one,
    # per half for packed operands.
    for name, output in (("set.lt.f16.f16", "f16"), ("set.gtu.ftz.u16.f16", "u16"), ("set.eq.bf16.bf16", "bf16")):
        source = name.split(".")[-1]
        case(family, name, [source, source], output, [f"{name} %d, %a, %b;"])
    for name in ("set.ltu.u32.f16x2", "set.ne.f16x2.f16x2", "set.ge.ftz.s32.f16x2", "set.gt.bf16x2.bf16x2",
                 "set.leu.u32.bf16x2"):
        case(family, name, [name.split(".")[-1][:-2]] * 2, "u32", half_lanes(2) + [f"{name} %d, %t0, %t1;"],
             note="lane k of operand j is input (j + k) % inputs")
    body = half_lanes(2) + ["mov.u32 %d, 0;"]
    comparisons = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
    for bit, comparison in enumerate(comparisons):
        body += [f"setp.{comparison}.f16x2 %p0|%p1, %t0, %t1;", f"selp.u32 %t2, {1 << (2 * bit)}, 0, %p0;",
                 "or.b32 %d, %d, %t2;", f"selp.u32 %t2, {2 << (2 * bit)}, 0, %p1;", "or.b32 %d, %d, %t2;"]
    case(family, "setp.f16x2", ["f16", "f16"], "u32", body,
         note="bits 2k and 2k+1 = low and high lanes of " + " ".join(comparisons))
    case(family, "tanh.approx.bf16", ["bf16"], "bf16", ["tanh.approx.bf16 %d, %a;"],
         tolerance="rel -8")
    case(family, "ex2.approx.ftz.bf16", ["bf16"], "bf16", ["ex2.approx.ftz.bf16 %d, %a;"],
         tolerance="rel -7")


def narrow_conversion_cases():
    family = "narrow"
    for destination in ("f16", "bf16"):
        for rounding in ("rn", "rz"):
            for modifiers in (".relu", ".satfinite", ".relu.satfinite"):
                unary(family, f"cvt.{rounding}{modifiers}.{destination}.f32", "f32",
                      result=destination)
            for modifiers in ("", ".relu", ".satfinite"):
                name = f"cvt.{rounding}{modifiers}.{destination}x2.f32"
                case(family, name, ["f32", "f32"], "u32", [f"{name} %d, %a, %b;"])
    for rounding in ROUNDINGS:
        unary(family, f"cvt.{rounding}.bf16.f64", "f64", result="bf16")
    unary(family, "cvt.f64.bf16", "bf16", result="f64")
    unary(family, "cvt.rn.bf16.f16", "f16", result="bf16")
    unary(family, "cvt.rn.f16.bf16", "bf16", result="f16")
    unary(family, "cvt.f32.bf16", "bf16", result="f32")
    for rounding in ("rni", "rzi"):
        unary(family, f"cvt.{rounding}.s32.bf16", "bf16", result="s32")
    for eight_bit in ("e4m3x2", "e5m2x2"):
        for modifiers in ("", ".relu"):
            name = f"cvt.rn.satfinite{modifiers}.{eight_bit}.f32"
            case(family, name, ["f32", "f32"], "u16", [f"{name} %d, %a, %b;"])
            name = f"cvt.rn.satfinite{modifiers}.{eight_bit}.f16x2"
            case(family, name, ["f16", "f16"], "u16",
                 half_lanes(2)[:1] + [f"{name} %d, %t0;"])
            # Every pair of 8-bit values is one of the 65536 16-bit inputs.
            name = f"cvt.rn{modifiers}.f16x2.{eight_bit}"
            case(family, name, ["f16"], "u32", [f"{name} %d, %a;"],
                 note="the f16 input is only a carrier for all 65536 pairs of 8-bit values")
    # .rn/.rz with .satfinite need sm_100.
    for rounding, modifiers in (("rna", ""), ("rna", ".satfinite"), ("rn", ""), ("rz", ""),
                                ("rn", ".relu"), ("rz", ".relu")):
        name = f"cvt.{rounding}{modifiers}.tf32.f32"
        case(family, name, ["f32"], "u32", [f"{name} %d, %a;"])
    # NaN inputs with random payloads: the edge values hold no NaN whose cut-off bits reach half
    # a tf32 unit, so they cannot tell whether .rna rounds a NaN's bits or cuts them.
    for modifiers in ("", ".satfinite"):
        name = f"cvt.rna{modifiers}.tf32.f32"
        case(family, name + "_nan", ["f32"], "u32",
             ["mov.b32 %t0, %a;", "or.b32 %t0, %t0, 0x7f800000;", "mov.b32 %a, %t0;", f"{name} %d, %a;"],
             note="the input's exponent is set to all ones: NaNs and infinities only")
    for destination in ("u16", "s16"):
        name = f"cvt.pack.sat.{destination}.s32"
        case(family, name, ["s32", "s32"], "u32", [f"{name} %d, %a, %b;"])
    for destination in ("u8", "s8", "u4", "s4", "u2", "s2"):
        name = f"cvt.pack.sat.{destination}.s32.b32"
        case(family, name, ["s32", "s32", "u32"], "u32", [f"{name} %d, %a, %b, %c;"])


def bit_cases():
    family = "integer"
    case(family, "fns.b32", ["u32", "u32", "s32"], "u32", ["fns.b32 %d, %a, %b, %c;"])
    for width, unsigned in ((16, "u16"), (32, "u32"), (64, "u64")):
        unary(family, f"not.b{width}", unsigned)
        unary(family, f"cnot.b{width}", unsigned)
    case(family, "not.pred", ["u32"], "u32",
         ["and.b32 %t0, %a, 1;", "setp.ne.u32 %p0, %t0, 0;", "not.pred %p1, %p0;", "selp.u32 %d, 1, 0, %p1;"],
         note="p = bit 0 of in0; d = not p")
    for mode in ("clamp", "wrap"):
        binary(family, f"bmsk.{mode}.b32", "u32")
        for t in ("s32", "u32"):
            binary(family, f"szext.{mode}.{t}", t, second="u32")
    # The accumulator and result are .u32 only when both sources are unsigned.
    for a in ("u32", "s32"):
        for b in ("u32", "s32"):
            accumulator = "u32" if a == b == "u32" else "s32"
            ternary(family, f"dp4a.{a}.{b}", (a, b, accumulator), accumulator)
            for half in ("lo", "hi"):
                ternary(family, f"dp2a.{half}.{a}.{b}", (a, b, accumulator), accumulator)
    # slct d, a, b, c: a where c >= 0, else b.
    for data in ("u16", "u32", "u64"):
        ternary(family, f"slct.b{data[1:]}.s32", (data, data, "s32"), data)
    for modifiers in ("", ".ftz"):
        ternary("float", f"slct{modifiers}.f32.f32", ("f32", "f32", "f32"), "f32")
        ternary("float", f"slct{modifiers}.u32.f32", ("u32", "u32", "f32"), "u32")


def video_cases():
    family = "video"

    def video(name, instruction, types, operands, **descriptor):
        case(family, name, list(types), "u32", [f"{instruction} {operands};"], **descriptor)

    for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
        video(f"{op}.u32.u32.u32", f"{op}.u32.u32.u32", ("u32", "u32"), "%d, %a, %b")
        video(f"{op}.s32.s32.s32.sat", f"{op}.s32.s32.s32.sat", ("s32", "s32"), "%d, %a, %b")
        video(f"{op}.s32.u32.s32", f"{op}.s32.u32.s32", ("u32", "s32"), "%d, %a, %b")
        video(f"{op}.u32.s32.u32.sat", f"{op}.u32.s32.u32.sat", ("s32", "u32"), "%d, %a, %b")
        video(f"{op}.s32.s32.u32_b1_h1", f"{op}.s32.s32.u32", ("s32", "u32"), "%d, %a.b1, %b.h1")
        for op2, sign in (("add", "u32"), ("min", "s32"), ("max", "u32")):
            video(f"{op}.{sign}.{op2}", f"{op}.{sign}.{sign}.{sign}.{op2}", (sign, sign, sign),
                  "%d, %a, %b, %c")
        video(f"{op}.s32.sat_merge_b2", f"{op}.s32.s32.s32.sat", ("s32", "s32", "u32"),
              "%d.b2, %a.h0, %b.b3, %c")
        video(f"{op}.u32.sat_merge_h1", f"{op}.u32.u32.u32.sat", ("u32", "u32", "u32"),
              "%d.h1, %a.b0, %b.h0, %c")
    # Saturation into a merged byte or half-word, and secondary operations, on whole-word
    # sources (their results reach past every field).
    for dsel in ("b0", "b1", "h0", "h1"):
        video(f"vadd.s32.sat_merge_{dsel}_words", "vadd.s32.s32.s32.sat", ("s32", "s32", "u32"), f"%d.{dsel}, %a, %b, %c")
    for dsel in ("b0", "b3", "h0", "h1"):
        video(f"vadd.u32.sat_merge_{dsel}_words", "vadd.u32.u32.u32.sat", ("u32", "u32", "u32"), f"%d.{dsel}, %a, %b, %c")
    video("vsub.u32.sat_merge_b1_words", "vsub.u32.u32.u32.sat", ("u32", "u32", "u32"), "%d.b1, %a, %b, %c")
    video("vmax.s32.sat_merge_h0_words", "vmax.s32.u32.s32.sat", ("u32", "s32", "u32"), "%d.h0, %a, %b, %c")
    for instruction in ("vadd.u32.u32.u32.sat", "vsub.u32.u32.u32.sat", "vadd.s32.u32.u32.sat", "vabsdiff.u32.u32.u32.sat"):
        video(instruction + "_unsigned", instruction, ("u32", "u32"), "%d, %a, %b")
    for instruction in ("vadd.u32.u32.u32.min", "vabsdiff.u32.u32.u32.min", "vadd.s32.s32.s32.max", "vsub.s32.u32.u32.max",
                        "vmax.u32.s32.s32.max", "vadd.u32.u32.u32.sat.max"):
        video(instruction + "_secondary", instruction, ("u32", "u32", "u32"), "%d, %a, %b, %c")
    for instruction in ("vmad.u32.u32.u32.shr7", "vmad.u32.u32.u32.sat.shr15", "vmad.u32.u32.u32.sat"):
        video(instruction + "_unsigned", instruction, ("u32", "u32", "u32"), "%d, %a, %b, %c")
    for op in ("vshl", "vshr"):
        video(f"{op}.u32.u32.u32.clamp", f"{op}.u32.u32.u32.clamp", ("u32", "u32"), "%d, %a, %b")
        video(f"{op}.s32.s32.u32.wrap", f"{op}.s32.s32.u32.wrap", ("s32", "u32"), "%d, %a, %b")
        video(f"{op}.s32.s32.u32.sat.clamp", f"{op}.s32.s32.u32.sat.clamp", ("s32", "u32"), "%d, %a, %b")
        video(f"{op}.u32.s32.u32.sat.wrap_h1_b0", f"{op}.u32.s32.u32.sat.wrap", ("s32", "u32"),
              "%d, %a.h1, %b.b0")
        video(f"{op}.u32.clamp.add", f"{op}.u32.u32.u32.clamp.add", ("u32", "u32", "u32"), "%d, %a, %b, %c")
        video(f"{op}.s32.wrap_merge_b1", f"{op}.s32.s32.u32.wrap", ("s32", "u32", "u32"),
              "%d.b1, %a.b3, %b, %c")
    for types, sources in (("u32.u32.u32", ("u32", "u32", "u32")), ("s32.s32.s32", ("s32", "s32", "s32")),
                           ("s32.u32.s32", ("u32", "s32", "s32")), ("u32.s32.u32", ("s32", "u32", "u32"))):
        video(f"vmad.{types}", f"vmad.{types}", sources, "%d, %a, %b, %c")
    video("vmad.u32.po", "vmad.u32.u32.u32.po", ("u32", "u32", "u32"), "%d, %a, %b, %c")
    video("vmad.s32.shr7", "vmad.s32.s32.s32.shr7", ("s32", "s32", "s32"), "%d, %a, %b, %c")
    video("vmad.s32.sat.shr15", "vmad.s32.s32.s32.sat.shr15", ("s32", "s32", "s32"), "%d, %a, %b, %c")
    video("vmad.u32.sat_h1_b2", "vmad.u32.u32.u32.sat", ("u32", "u32", "u32"), "%d, %a.h1, %b.b2, %c")
    video("vmad.s32.sat.po.shr7", "vmad.s32.s32.u32.sat.po.shr7", ("s32", "u32", "s32"), "%d, %a, %b, %c")
    # Negated sources (not with .po; ptxas takes -a, -b or both, or -c alone): -a or -b negates
    # the product, -c the addend.
    for name, instruction, sources, operands in (
            ("vmad.u32.neg_a", "vmad.u32.u32.u32", ("u32", "u32", "u32"), "%d, -%a, %b, %c"),
            ("vmad.u32.neg_c", "vmad.u32.u32.u32", ("u32", "u32", "u32"), "%d, %a, %b, -%c"),
            ("vmad.s32.neg_a_neg_b", "vmad.s32.s32.s32", ("s32", "s32", "s32"), "%d, -%a, -%b, %c"),
            ("vmad.s32.neg_b", "vmad.s32.s32.s32", ("s32", "s32", "s32"), "%d, %a, -%b, %c"),
            ("vmad.s32.u32.sat_neg_b_b0", "vmad.s32.u32.u32.sat", ("u32", "u32", "u32"), "%d, %a.h1, -%b.b0, %c"),
            ("vmad.s32.shr7_neg_c", "vmad.s32.s32.s32.shr7", ("s32", "s32", "s32"), "%d, %a, %b, -%c"),
            ("vmad.u32.sat.shr7_neg_c", "vmad.u32.u32.u32.sat.shr7", ("u32", "u32", "u32"), "%d, %a, %b.h1, -%c"),
            ("vmad.u32.sat.shr15_neg_a_b2", "vmad.u32.u32.u32.sat.shr15", ("u32", "u32", "u32"), "%d, -%a.b2, %b.h0, %c")):
        video(name, instruction, sources, operands)
    for types, sources in (("u32.u32", ("u32", "u32")), ("s32.s32", ("s32", "s32")), ("s32.u32", ("s32", "u32"))):
        body = ["mov.u32 %d, 0;"]
        for bit, comparison in enumerate(("eq", "ne", "lt", "le", "gt", "ge")):
            body += [f"vset.{types}.{comparison} %t0, %a, %b;", f"shl.b32 %t0, %t0, {bit};",
                     "or.b32 %d, %d, %t0;"]
        case(family, f"vset.{types}", list(sources), "u32", body, note="bit k = eq ne lt le gt ge")
    video("vset.s32.u32.lt_b3_h0", "vset.s32.u32.lt", ("s32", "u32"), "%d, %a.b3, %b.h0")
    video("vset.u32.u32.ne.add", "vset.u32.u32.ne.add", ("u32", "u32", "u32"), "%d, %a, %b, %c")
    video("vset.s32.s32.gt.max", "vset.s32.s32.gt.max", ("s32", "s32", "s32"), "%d, %a, %b, %c")
    video("vset.s32.s32.le_merge_b1", "vset.s32.s32.le", ("s32", "s32", "u32"), "%d.b1, %a.b0, %b.b2, %c")
    for lanes, selectors, mask in ((2, ("h01", "h20"), "h1"), (4, ("b0527", "b6143"), "b20")):
        for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"):
            name = f"{op}{lanes}"
            video(f"{name}.u32.u32.u32", f"{name}.u32.u32.u32", ("u32", "u32", "u32"), "%d, %a, %b, %c")
            video(f"{name}.s32.s32.s32.sat", f"{name}.s32.s32.s32.sat", ("u32", "u32", "u32"), "%d, %a, %b, %c")
            video(f"{name}.u32.s32.u32.sat", f"{name}.u32.s32.u32.sat", ("u32", "u32", "u32"), "%d, %a, %b, %c")
            video(f"{name}.s32.add", f"{name}.s32.s32.s32.add", ("u32", "u32", "u32"), "%d, %a, %b, %c")
            video(f"{name}.s32.u32.s32_mask_{mask}", f"{name}.s32.u32.s32", ("u32", "u32", "u32"),
                  f"%d.{mask}, %a.{selectors[0]}, %b.{selectors[1]}, %c")
            video(f"{name}.u32.add_mask_{mask}", f"{name}.u32.u32.u32.add", ("u32", "u32", "u32"),
                  f"%d.{mask}, %a.{selectors[1]}, %b, %c")
        name = f"vset{lanes}"
        video(f"{name}.u32.u32.lt", f"{name}.u32.u32.lt", ("u32", "u32", "u32"), "%d, %a, %b, %c")
        video(f"{name}.s32.s32.ge", f"{name}.s32.s32.ge", ("u32", "u32", "u32"), "%d, %a, %b, %c")
        video(f"{name}.s32.u32.ne.add", f"{name}.s32.u32.ne.add", ("u32", "u32", "u32"), "%d, %a, %b, %c")
        video(f"{name}.u32.s32.eq_mask_{mask}", f"{name}.u32.s32.eq", ("u32", "u32", "u32"),
              f"%d.{mask}, %a.{selectors[0]}, %b.{selectors[1]}, %c")


def control_cases():
    family = "control"
    targets = ", ".join(f"$case{k}" for k in range(5))
    body = ["and.b32 %t0, %a, 7;", f"$targets: .branchtargets {targets};"]
    body += ["setp.gt.u32 %p0, %t0, 4;", "@%p0 mov.u32 %t0, 4;", "brx.idx %t0, $targets;"]
    for k in range(5):
        body += [f"$case{k}:", f"xor.b32 %d, %a, {0x1111 * (k + 1)};", "bra.uni $joined;"]
    body += ["$joined:"]
    case(family, "brx.idx", ["u32"], "u32", body, note="index (in0 & 7) clamped to 4")
    case(family, "griddepcontrol", ["u32"], "u32",
         ["griddepcontrol.launch_dependents;", "griddepcontrol.wait;", "add.u32 %d, %a, 1;"],
         note="ordering only: d = in0 + 1")


# Matrix instructions are warp-collective: each lane's fragment is filled with the inputs of
# other lanes of its warp (lane L's element i of a matrix is input (L + 5i + 1) mod 32 of the
# warp), so that every product mixes tuples. Counts are multiples of 32 for three inputs.
def lane_load(parameter, element, shift, destination):
    register_type, load_type, size = TYPES[element]
    return [f"add.u32 %source, %lane, {shift};", "and.b32 %source, %source, 31;",
            "add.u32 %source, %source, %base;", f"ld.param.u64 %address, [{parameter}];",
            "cvta.to.global.u64 %address, %address;", f"mul.wide.u32 %offset, %source, {size};",
            "add.u64 %address, %address, %offset;", f"ld.global.{load_type} {destination}, [%address];"]


MATRIX_REGISTERS = [".reg .b32 %lane, %base, %source, %r<8>, %s<4>, %u<4>, %v<4>;", ".reg .b16 %h<2>;",
                    ".reg .b64 %w<8>;", ".reg .u64 %tile;", "mov.u32 %lane, %laneid;",
                    "sub.u32 %base, %index, %lane;"]


def fragment(parameter, element, registers, per_register, first_shift):
    """Loads `registers` fragment registers of `element`s, packing 16-bit ones in pairs."""
    body = []
    for register in range(len(registers)):
        shift = first_shift + 5 * register * per_register
        if per_register == 2:
            body += lane_load(parameter, element, shift, "%h0") + lane_load(parameter, element, shift + 5, "%h1")
            body.append(f"mov.b32 {registers[register]}, {{%h0, %h1}};")
        else:
            body += lane_load(parameter, element, shift, registers[register])
    return body


def mma_case(shape, types, inputs, a_count, b_count, c_count, mask=None, version="8.1", **descriptor):
    """`mask`, when given, is anded into every A and B register (to keep 8-bit floats finite)."""
    d_type, a_type, b_type, c_type = types.split(".")[-4:]
    wide = c_type == "f64"
    per_register = 2 if a_type in ("f16", "bf16") else 1
    a_registers = [f"%w{i}" if wide else f"%r{i}" for i in range(a_count)]
    # B has registers of its own: m16n8k16 .f64 A alone fills %w0..%w7.
    b_registers = [f"%z{i}" if wide else f"%s{i}" for i in range(b_count)]
    c_registers = [f"%{'x' if wide else 'u'}{i}" for i in range(c_count)]
    d_registers = [f"%{'y' if wide else 'v'}{i}" for i in range(c_count)]
    body = ["{", *MATRIX_REGISTERS]
    if wide:
        body.append(".reg .b64 %x<4>, %y<4>, %z<4>;")
    body += fragment("in0", inputs[0], a_registers, per_register, 1)
    body += fragment("in1", inputs[1], b_registers, per_register, 3)
    body += fragment("in2", inputs[2], c_registers, 2 if c_type == "f16" else 1, 7)
    if mask is not None:
        body += [f"and.b32 {register}, {register}, {mask:#x};" for register in a_registers + b_registers]
        descriptor["note"] = f"A and B registers anded with {mask:#x}; "
    body.append(f"mma.sync.aligned.{shape}.row.col.{types} {{{', '.join(d_registers)}}}, {{{', '.join(a_registers)}}}, "
                f"{{{', '.join(b_registers)}}}, {{{', '.join(c_registers)}}};")
    body.append("mov.b64 %d, %y0;" if wide else f"mov.b64 %d, {{%v0, %v{c_count - 1}}};")
    body.append("}")
    note = descriptor.pop("note", "") + "d = " + ("register 0 of D" if wide else f"D registers 0 and {c_count - 1}")
    name = f"mma.{shape}.{types}" + ("_finite" if mask is not None else "")
    case("matrix", name, inputs, "u64", body, version=version, note=note, **descriptor)


# wmma: the fragments' layout is the implementation's, so a case goes through memory: the warp
# fills its A, B and C tiles in shared memory (the byte at position P of a tile comes from the
# warp's input (P / size + 5 j + shift) mod 32, as the fill units are spread), loads them,
# multiplies and stores D; lane L reads two 8-byte words of D's tile, L/32 of the way in.
WMMA_SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
               "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4)}
# element -> (bits, input type that fills the tile, its store type)
WMMA_ELEMENTS = {"f16": (16, "f16", "b16"), "bf16": (16, "bf16", "b16"), "s8": (8, "u32", "b32"),
                 "u8": (8, "u32", "b32"), "tf32": (32, "f32", "b32"), "f32": (32, "f32", "b32"),
                 "s32": (32, "s32", "b32"), "f64": (64, "f64", "b64")}


def wmma_case(shape, types, layouts, padding, stride_operand=True):
    """types: .dtype.ctype (f16 A and B) or .dtype.atype.btype.ctype; layouts: A, B, C and D's
    .row/.col; padding: elements past each tile's row or column."""
    m, n, k = WMMA_SHAPES[shape]
    words = types.split(".")
    d_type, a_type, b_type, c_type = words if len(words) == 4 else (words[0], "f16", "f16", words[1])
    satfinite = ".satfinite" if a_type in ("s8", "u8") else ""
    matrices = {"a": (m, k, a_type, layouts[0]), "b": (k, n, b_type, layouts[1]),
                "c": (m, n, c_type, layouts[2]), "d": (m, n, d_type, layouts[3])}
    tiles, offset = {}, 0
    for name, (rows, columns, element, layout) in matrices.items():
        bits = WMMA_ELEMENTS[element][0]
        stride = (columns if layout == "row" else rows) + padding
        size = (rows if layout == "row" else columns) * stride * bits // 8
        registers = max(1, rows * columns // 32 * bits // (64 if bits == 64 else 32))
        if element == "f16" and name in "ab":
            registers = 8  # the ISA's .f16 A and B fragments hold more than the matrix needs
        wide = bits == 64
        tiles[name] = dict(offset=offset, size=size, stride=stride, layout=layout, element=element,
                           registers=[f"%{'q' if wide else 'f'}{name}{i}" for i in range(registers)])
        offset += (size + 127) // 128 * 128
    warp_bytes = offset
    body = ["{", *MATRIX_REGISTERS, f".shared .align 128 .b8 wtiles[{8 * warp_bytes}];",
            *[f".reg .{'b64' if tile['registers'][0][1] == 'q' else 'b32'} {', '.join(tile['registers'])};" for tile in tiles.values()],
            ".reg .b64 %fill;",
            "mov.u32 %source, %tid.x;", "shr.u32 %source, %source, 5;", f"mul.wide.u32 %tile, %source, {warp_bytes};",
            "mov.u64 %offset, wtiles;", "add.u64 %tile, %tile, %offset;"]
    for parameter, name, shift in (("in0", "a", 1), ("in1", "b", 3), ("in2", "c", 7), (None, "d", 0)):
        tile = tiles[name]
        _, fill_type, store_type = WMMA_ELEMENTS[tile["element"]]
        unit = int(store_type[1:]) // 8
        count = tile["size"] // unit // 32
        assert count * unit * 32 == tile["size"], (shape, types, name)
        value = {2: "%h0", 4: "%t2", 8: "%fill"}[unit] if parameter else "0"  # D's tile starts zeroed
        for j in range(count):
            if parameter:
                body += lane_load(parameter, fill_type, shift + 5 * j, value)
            body += [f"mul.wide.u32 %offset, %lane, {count * unit};", f"add.u64 %offset, %offset, {tile['offset'] + j * unit};",
                     "add.u64 %address, %tile, %offset;", f"st.shared.{store_type} [%address], {value};"]
    body += [f"add.u64 %w{4 + index}, %tile, {tiles[name]['offset']};" for index, name in enumerate("abcd")]
    body.append("bar.warp.sync -1;")

    def access(name, load):
        tile = tiles[name]
        registers = "{" + ", ".join(tile["registers"]) + "}"
        address = f"[%w{4 + 'abcd'.index(name)}]"
        stride = ""
        if stride_operand:
            body.append(f"mov.u32 %t3, {tile['stride']};")
            stride = ", %t3"
        operation = f"wmma.{'load' if load else 'store'}.{name}.sync.aligned.{tile['layout']}.{shape}.shared.{tile['element']}"
        body.append(f"{operation} {registers}, {address}{stride};" if load else f"{operation} {address}, {registers}{stride};")

    for name in "abc":
        access(name, True)
    type_words = types if len(words) == 4 else f"{d_type}.{c_type}"
    body.append(f"wmma.mma.sync.aligned.{layouts[0]}.{layouts[1]}.{shape}.{type_words}{satfinite} "
                + ", ".join("{" + ", ".join(tiles[name]["registers"]) + "}" for name in "dabc") + ";")
    access("d", False)
    per_lane = tiles["d"]["size"] // 32 // 8 * 8
    body += ["bar.warp.sync -1;", f"mul.wide.u32 %offset, %lane, {per_lane};", "add.u64 %address, %w7, %offset;",
             "ld.shared.b64 %w0, [%address];", f"ld.shared.b64 %w1, [%address+{per_lane - 8}];", "xor.b64 %d, %w0, %w1;", "}"]
    fills = [WMMA_ELEMENTS[tiles[name]["element"]][1] for name in "abc"]
    name = f"wmma.{shape}.{types}.{''.join(layout[0] for layout in layouts)}" + ("" if stride_operand else "_packed")
    case("matrix", name, fills, "u64", body,
         note=f"layouts of A B C D: {' '.join(layouts)}; tiles padded by {padding}; d = two words of D's tile, xored")


# ldmatrix/stmatrix: a warp's 512 bytes of shared memory; lane L gives row address
# (7L mod 32)*16, so that rows are not in lane order.
def matrix_memory_case(name, count, transposed):
    trans = ".trans" if transposed else ""
    body = ["{", *MATRIX_REGISTERS, ".shared .align 16 .b8 tiles[4096];",
            "mov.u32 %source, %tid.x;", "shr.u32 %source, %source, 5;", "mul.wide.u32 %tile, %source, 512;",
            "mov.u64 %offset, tiles;", "add.u64 %tile, %tile, %offset;"]
    body += fragment("in0", "u32", ["%r0", "%r1", "%r2", "%r3"], 1, 1)
    body += ["mul.lo.u32 %source, %lane, 16;", "cvt.u64.u32 %offset, %source;", "add.u64 %address, %tile, %offset;"]
    row_address = ["mul.lo.u32 %source, %lane, 7;", "and.b32 %source, %source, 31;", "mul.lo.u32 %source, %source, 16;",
                   "cvt.u64.u32 %offset, %source;", "add.u64 %offset, %tile, %offset;"]
    registers = ", ".join(f"%r{i}" for i in range(count))
    if name == "ldmatrix":
        body += ["st.shared.v4.b32 [%address], {%r0, %r1, %r2, %r3};", "bar.warp.sync -1;", *row_address,
                 f"ldmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16 {{{registers}}}, [%offset];",
                 f"mov.b64 %d, {{%r{max(count - 2, 0)}, %r{count - 1}}};"]
        note = f"d = registers {max(count - 2, 0)} and {count - 1}"
    else:
        body += ["mov.b64 %w0, 0;", "st.shared.v2.b64 [%address], {%w0, %w0};", "bar.warp.sync -1;", *row_address,
                 f"stmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16 [%offset], {{{registers}}};",
                 "bar.warp.sync -1;", "ld.shared.v2.b64 {%w0, %w1}, [%address];", "xor.b64 %d, %w0, %w1;"]
        note = "d = the two halves of the 16 bytes at lane*16 of the warp's tile, xored"
    body.append("}")
    case("matrix", f"{name}.x{count}{trans}", ["u32", "u32", "u32"], "u64", body, note=note)


def matrix_cases():
    for shape, k in (("m16n8k8", 8), ("m16n8k16", 16)):
        for half in ("f16", "bf16"):
            mma_case(shape, f"f32.{half}.{half}.f32", [half, half, "f32"], k // 4, k // 8, 4)
        mma_case(shape, "f16.f16.f16.f16", ["f16", "f16", "f16"], k // 4, k // 8, 2)
    for shape, k in (("m16n8k4", 4), ("m16n8k8", 8)):
        mma_case(shape, "f32.tf32.tf32.f32", ["f32", "f32", "f32"], k // 2, k // 4, 4)
    for shape, k in (("m16n8k16", 16), ("m16n8k32", 32)):
        mma_case(shape, "s32.s8.s8.s32", ["u32", "u32", "s32"], k // 8, k // 16, 4)
        mma_case(shape, "satfinite.s32.u8.s8.s32", ["u32", "u32", "s32"], k // 8, k // 16, 4)
    mma_case("m8n8k16", "s32.u8.u8.s32", ["u32", "u32", "s32"], 1, 1, 2)
    mma_case("m8n8k4", "f64.f64.f64.f64", ["f64", "f64", "f64"], 1, 1, 2)
    # 8-bit floats: raw words (NaNs and infinities included) and words whose bytes are kept
    # finite and within 2^±9 by clearing their exponents' top bit.
    finite = 0xBFBFBFBF
    for a, b, masks in (("e4m3", "e4m3", (None, finite)), ("e5m2", "e4m3", (None, finite)),
                        ("e4m3", "e5m2", (finite,)), ("e5m2", "e5m2", (finite,))):
        for mask in masks:
            mma_case("m16n8k32", f"f32.{a}.{b}.f32", ["u32", "u32", "f32"], 4, 2, 4, mask=mask, version="8.4")
    mma_case("m16n8k16", "f32.e4m3.e4m3.f32", ["u32", "u32", "f32"], 2, 1, 4, mask=finite, version="8.7")
    mma_case("m16n8k32", "f16.e4m3.e4m3.f16", ["u32", "u32", "f16"], 4, 2, 2, mask=finite, version="8.7")
    mma_case("m16n8k16", "f16.e5m2.e5m2.f16", ["u32", "u32", "f16"], 2, 1, 2, mask=finite, version="8.7")
    for shape, types, layouts, padding, stride_operand in (
            ("m16n16k16", "f32.f32", ("row", "col", "row", "row"), 8, True),
            ("m32n8k16", "f32.f32", ("row", "col", "col", "col"), 8, True),
            ("m32n8k16", "f16.f16", ("col", "col", "row", "col"), 0, True),
            ("m8n32k16", "f32.f32", ("row", "row", "row", "row"), 0, False),
            ("m16n16k16", "s32.s8.s8.s32", ("row", "col", "row", "row"), 16, True),
            ("m16n16k16", "s32.u8.u8.s32", ("col", "row", "col", "row"), 0, True),
            ("m16n16k16", "f32.bf16.bf16.f32", ("row", "col", "row", "row"), 8, True),
            ("m16n16k8", "f32.tf32.tf32.f32", ("row", "col", "row", "col"), 4, True),
            ("m8n8k4", "f64.f64.f64.f64", ("row", "col", "row", "row"), 0, True)):
        wmma_case(shape, types, layouts, padding, stride_operand)
    for shape, k in (("m16n8k4", 4), ("m16n8k8", 8), ("m16n8k16", 16)):
        mma_case(shape, "f64.f64.f64.f64", ["f64", "f64", "f64"], k // 2, k // 4, 4)
    for count in (1, 2, 4):
        for transposed in (False, True):
            matrix_memory_case("ldmatrix", count, transposed)
            matrix_memory_case("stmatrix", count, transposed)


def main():
    integer_cases()
    float_cases()
    conversion_cases()
    approximation_cases()
    half_cases()
    narrow_conversion_cases()
    bit_cases()
    video_cases()
    control_cases()
    matrix_cases()
    shutil.rmtree(CASES_DIR, ignore_errors=True)
    for key, (inputs, output, body, version, descriptor) in cases.items():
        path = CASES_DIR / f"{key}.ptx"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(key, inputs, output, body, version, descriptor))
    print(f"{len(cases)} cases written to {CASES_DIR}")


if __name__ == "__main__":
    main()
