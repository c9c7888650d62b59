#!/usr/bin/env python3
"""Asks NVIDIA's ptxas and xcuda what each form of ptxas_forms.txt and each conformance case needs
of a module's .version and .target (ptx/check/requirements.cpp), by assembling it under other
headers than its own.

    tests/unit/ptx_inputs/ptxas_requirements.py [--xcuda build/bin/xcuda] [VERSION TARGET ...]

Under `.version 6.0` and `.target sm_50` (the default) every requirement shows: for each line
where they differ, it prints the highest version and architecture each compiler asks for. Under
any other header it prints the forms xcuda refuses that ptxas takes, which must be none.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import tempfile

from ptxas_forms import KERNEL

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "conformance", "cases")


def items():
    """(name, module text) for every form and conformance case."""
    with open(os.path.join(HERE, "ptxas_forms.txt")) as forms:
        for line in forms:
            form = line.strip()
            if form and not form.startswith("#"):
                kernel = KERNEL if "%q" in form else KERNEL.replace(" .reg .b128 %q<8>;", "")
                yield form, kernel.format(arch="sm_90a", form=form)
    for directory in sorted(os.listdir(CASES)):
        for name in sorted(os.listdir(os.path.join(CASES, directory))):
            with open(os.path.join(CASES, directory, name)) as case:
                yield directory + "/" + name, case.read()


def needs(messages, line_pattern):
    """{line: (version, architecture)}, the highest of each the messages name."""
    found = {}
    for match in re.finditer(line_pattern, messages):
        line, message = int(match.group(1)), match.group(2)
        version = re.search(r"version (\d+)\.(\d) or later", message)
        target = re.search(r"target (?:sm_)?(\d+) or higher", message)
        old = found.get(line, (0, 0))
        found[line] = (max(old[0], int(version.group(1)) * 10 + int(version.group(2)) if version else 0),
                       max(old[1], int(target.group(1)) if target else 0))
    return {line: need for line, need in found.items() if need != (0, 0)}


def compare(arguments, item, version, target, directory):
    name, text = item
    text = re.sub(r"^\.version .*$", ".version " + version, text, count=1, flags=re.M)
    text = re.sub(r"^\.target .*$", ".target " + target, text, count=1, flags=re.M)
    path = os.path.join(directory, "%x.ptx" % abs(hash(name)))
    with open(path, "w") as file:
        file.write(text)
    xcuda = subprocess.run([arguments.xcuda, "compile", "--check", path], capture_output=True, text=True)
    architecture = "sm_100a" if re.match(r"sm_1\d\d", target) else "sm_90a"
    ptxas = subprocess.run([arguments.ptxas, "-arch", architecture, path, "-o", os.devnull], capture_output=True, text=True)
    os.remove(path)
    if version != "6.0" or target != "sm_50":
        return ["xcuda refuses what ptxas takes: " + name] if xcuda.returncode != 0 and ptxas.returncode == 0 else []
    theirs = needs(ptxas.stderr, r"line (\d+); error\s*: (.*)")
    ours = needs(xcuda.stderr, r":(\d+):\d+: (.*)")
    lines = text.split("\n")
    return ["%s: ptxas %s, xcuda %s" % (lines[line - 1].strip(), theirs.get(line), ours.get(line))
            for line in sorted(set(theirs) | set(ours)) if theirs.get(line) != ours.get(line)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--xcuda", default=os.path.join(HERE, "../../../build/bin/xcuda"))
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    parser.add_argument("headers", nargs="*", default=["6.0", "sm_50"], help="VERSION TARGET pairs")
    arguments = parser.parse_args()
    headers = list(zip(arguments.headers[::2], arguments.headers[1::2]))
    everything = list(items())
    with tempfile.TemporaryDirectory() as directory, concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for version, target in headers:
            differences = [line for found in pool.map(lambda item: compare(arguments, item, version, target, directory), everything)
                           for line in found]
            for line in differences:
                print(line)
            print(".version %s, .target %s: %d forms and cases, %d differences" % (version, target, len(everything), len(differences)))


if __name__ == "__main__":
    main()
