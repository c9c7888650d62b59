#!/usr/bin/env python3
"""Which of the PTX instructions xcuda accepts the conformance suite exercises.

The checker's instruction table (ptx/check/instruction_set.cpp) names every instruction the
compiler takes; the conformance cases compare what some of them compute with an H200's results.
Without this list, an instruction can be accepted, lowered and never compared with the
hardware. For each instruction, section by section of the table, it prints the case opcodes
using it, or, for the instructions a case cannot test as a pure function of its inputs
(barriers, warp collectives, atomics, textures, asynchronous copies...), the test elsewhere
that exercises them. It fails if a case uses an opcode the table lacks, or if a test named
below no longer contains what shows it exercises the instruction.
    python3 tests/conformance/coverage.py
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "ptx/check/instruction_set.cpp"
CASES = ROOT / "tests/conformance/cases"

# Instructions whose results depend on other threads, memory, time or resources, not just on the
# inputs of one thread: where they are exercised instead, as (test, text in it that uses the
# instruction[, how far]), or None where no test under tests/unit or tests/cuda does.
ELSEWHERE = {
    "ldu": ("tests/unit/ptx_instruction_test.cpp", "ldu.global.v2.u32"),
    "prefetch": ("tests/unit/ptx_instruction_test.cpp", "prefetch.global.L2::evict_last"),
    "isspacep": ("tests/unit/ptx_instruction_test.cpp", "isspacep.shared::cluster"),
    "cp": ("tests/unit/ptx_parser_test.cpp", "cp.async.ca.shared.global", "compiled, not run"),
    "call": ("tests/unit/ptx_instruction_test.cpp", "call.uni"),
    "exit": ("tests/unit/ptx_instruction_test.cpp", "@%p1 exit;"),
    "trap": ("tests/cuda/kernel_faults.cu", "__trap()", "nvcc emits trap"),
    "brkpt": ("tests/unit/ptx_instruction_test.cpp", "@%p1 brkpt"),
    "nanosleep": ("tests/unit/ptx_instruction_test.cpp", "nanosleep.u32 %r4"),
    "bar": ("tests/unit/ptx_warp_test.cpp", "bar.sync"),
    "barrier": ("tests/unit/ptx_warp_test.cpp", "barrier.sync"),
    "membar": ("tests/cuda/cross_block_progress.cu", "__threadfence()", "nvcc emits membar.gl"),
    "fence": ("tests/unit/ptx_instruction_test.cpp", "fence.acq_rel.gpu"),
    "atom": ("tests/unit/ptx_instruction_test.cpp", "atom.global.cas"),
    "red": ("tests/unit/ptx_instruction_test.cpp", "red.global.max"),
    "mbarrier": ("tests/cuda/mbarrier.cu", "mbarrier.init"),
    "multimem": ("tests/unit/ptx_instruction_test.cpp", "multimem.ld_reduce.global.add.u32"),
    "shfl": ("tests/unit/ptx_warp_test.cpp", "shfl.sync"),
    "vote": ("tests/unit/ptx_warp_test.cpp", "vote.sync"),
    "activemask": ("tests/unit/ptx_warp_test.cpp", "activemask.b32"),
    "match": ("tests/unit/ptx_warp_test.cpp", "match.any.sync"),
    "redux": ("tests/unit/ptx_warp_test.cpp", "redux.sync"),
    "tex": ("tests/unit/api_texture_test.cpp", "tex.2d"),
    "tld4": ("tests/cuda/texture_sampling.cu", "tex2Dgather", "nvcc emits tld4"),
    "txq": ("tests/unit/api_texture_test.cpp", "txq.width"),
    "suld": ("tests/unit/api_texture_test.cpp", "suld.b.2d"),
    "sust": ("tests/unit/api_texture_test.cpp", "sust.b.2d"),
    "suq": ("tests/unit/api_texture_test.cpp", "suq.width"),
    "sured": ("tests/cuda/surface_reduction.cu", "sured.b.add.1d.trap.u32"),
    "istypep": ("tests/cuda/surface_reduction.cu", "istypep.texref"),
    "prefetchu": ("tests/cuda/sm90_instructions.cu", "prefetchu.L1"),
    "createpolicy": ("tests/cuda/sm90_instructions.cu", "createpolicy.fractional"),
    "applypriority": ("tests/cuda/sm90_instructions.cu", "applypriority.global"),
    "discard": ("tests/cuda/sm90_instructions.cu", "discard.global"),
    "mapa": ("tests/cuda/sm90_instructions.cu", "mapa.shared::cluster"),
    "getctarank": ("tests/cuda/sm90_instructions.cu", "getctarank.u64"),
    "setmaxnreg": ("tests/unit/ptx_parser_test.cpp", "setmaxnreg.inc.sync.aligned.u32"),
    "pmevent": ("tests/unit/ptx_parser_test.cpp", "pmevent.mask"),
    "elect": ("tests/cuda/sm90_instructions.cu", "elect.sync"),
    "movmatrix": ("tests/cuda/sm90_instructions.cu", "movmatrix.sync.aligned.m8n8.trans.b16"),
    "alloca": ("tests/cuda/dynamic_stack.cu", "alloca.u64 local, 100, 64"),
    "stacksave": ("tests/cuda/dynamic_stack.cu", "stacksave.u64"),
    "stackrestore": ("tests/cuda/dynamic_stack.cu", "stackrestore.u64"),
    "tensormap": ("tests/cuda/tensor_map_replace.cu", "tensormap.replace.tile.global_address"),
    "clusterlaunchcontrol": ("tests/cuda/cluster_launch_control.cu", "clusterlaunchcontrol_try_cancel"),
    "wgmma": ("tests/cuda/warpgroup_mma.cu", "wgmma.mma_async.sync.aligned.", "sm_90a"),
    "tcgen05": ("tests/unit/ptx_inputs/tcgen05_forms.txt", "tcgen05.mma.ws.sp", "parsed and checked; no target lowers it yet"),
}


def table_sections():
    """[(section, [opcode...])] in the table's order. A section starts at a comment of lowercase
    words (`// bits`, `// video: selectors ...`); the other comments (`// cp.async: ...`,
    `// operands differ by operation: checked by ...`) describe the entry below them."""
    text = TABLE.read_text().split("instruction_set[] = {", 1)[1].split("\n};", 1)[0]
    sections = []
    for line in text.splitlines():
        line = line.strip()
        header = re.fullmatch(r"// ([a-z][a-z ]*)(: (?!checked).*)?", line)
        if header:
            sections.append((header.group(1), []))
        elif entry := re.match(r'\{"(\w+)"', line):
            sections[-1][1].append(entry.group(1))
    return sections


def case_opcodes(path):
    """The full opcodes (`cvt.rn.f16.f32`) of the instructions in a case's kernel."""
    opcodes = set()
    for line in path.read_text().split(".entry", 1)[1].splitlines():
        statement = re.sub(r"^\s*([$\w]+:)?\s*(@!?%\w+\s+)?", "", line.split("//")[0])
        if opcode := re.match(r"[a-z][\w.:]*(?=[\s;])", statement):
            opcodes.add(opcode.group(0))
    return opcodes


def main():
    sections = table_sections()
    table = {opcode for _, opcodes in sections for opcode in opcodes}
    variants = set()
    for path in sorted(CASES.rglob("*.ptx")):
        variants |= case_opcodes(path)
    by_instruction = {}
    for variant in variants:
        by_instruction.setdefault(variant.split(".")[0], set()).add(variant)
    problems = [f"cases use {name}, which the checker's table lacks" for name in by_instruction if name not in table]
    problems += [f"ELSEWHERE names {name}, which the checker's table lacks" for name in ELSEWHERE if name not in table]
    for name, test in ELSEWHERE.items():
        if test and test[1] not in (ROOT / test[0]).read_text():
            problems.append(f"{test[0]} no longer contains {test[1]!r}, the evidence that it exercises {name}")

    covered = elsewhere = 0
    for section, opcodes in sections:
        print(section)
        for name in opcodes:
            if name in by_instruction:
                covered += 1
                status = f"{len(by_instruction[name])} variants:"
                for variant in sorted(by_instruction[name], key=lambda variant: (len(variant), variant)):
                    if len(status) + len(variant) > 88:
                        status += " ..."
                        break
                    status += " " + variant
            elif name in ELSEWHERE:
                elsewhere += 1
                test = ELSEWHERE[name]
                status = "tested elsewhere: " + (test[0] if test else "no test found")
                status += f" ({test[2]})" if test and len(test) > 2 else ""
            else:
                status = "NOT COVERED"
            print(f"  {name:<15} {status}")
    for problem in problems:
        print("error:", problem)
    print(f"{elsewhere} more tested elsewhere, {len(table) - covered - elsewhere} not covered")
    print(f"instructions covered: {covered} of {len(table)}")
    print(f"opcode variants exercised: {len(variants)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
