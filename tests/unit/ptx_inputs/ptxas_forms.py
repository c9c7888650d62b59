#!/usr/bin/env python3
"""Asks NVIDIA's ptxas and xcuda about each form of ptxas_forms.txt (or the files given), one
instruction per kernel: prints the forms ptxas assembles (for sm_90a, else sm_100a) that xcuda
refuses, and those ptxas refuses. For adding forms to the list, which holds only what ptxas takes.

    tests/unit/ptx_inputs/ptxas_forms.py [--xcuda build/bin/xcuda] [FORMS.txt ...]
"""
import argparse
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .pred %p<8>; .reg .b16 %rs<8>; .reg .b16 %h<8>; .reg .b8 %b<8>; .reg .b32 %r<8>;
 .reg .b64 %rd<8>; .reg .b128 %q<8>; .reg .f32 %f<12>; .reg .f64 %fd<8>;
 ld.param.u64 %rd1, [p];
 ld.param.u64 %rd2, [p];
 {form}
 ret;
}}
"""


def accepts(command, text, directory):
    path = os.path.join(directory, "form.ptx")
    with open(path, "w") as file:
        file.write(text)
    return subprocess.run(command + [path, "-o", os.path.join(directory, "form.out")], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--xcuda", default=os.path.join(HERE, "../../../build/bin/xcuda"))
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    parser.add_argument("files", nargs="*", default=[os.path.join(HERE, "ptxas_forms.txt")])
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for name in arguments.files:
            for line in open(name):
                form = line.strip().removeprefix("# not yet: ")
                if not form or form.startswith("#"):
                    continue
                arch = next((arch for arch in ("sm_90a", "sm_100a")
                             if accepts([arguments.ptxas, "-arch=" + arch], KERNEL.format(arch=arch, form=form), directory)), None)
                if arch is None:
                    print("ptxas refuses:", form)
                elif not accepts([arguments.xcuda, "compile", "--target", "host", "-j", "1"], KERNEL.format(arch=arch, form=form), directory):
                    print("xcuda refuses:", form)


if __name__ == "__main__":
    main()
