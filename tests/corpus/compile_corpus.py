#!/usr/bin/env python3
"""Compiles the PTX that NVIDIA's own libraries carry, for the host, and reports how much of it
xcuda understands.

The CUDA toolkit's libraries (libcublas, libcufft, libnccl, ...) embed thousands of PTX modules
in zstd-compressed fatbins: a large body of real-world PTX written by NVIDIA's compilers. This
script extracts them with `xcuda dump`, compiles each with `xcuda compile --target host`, and
prints how many modules were found, compiled and failed, per library, with the failures grouped
by their first diagnostic.

    tests/corpus/compile_corpus.py --xcuda build/bin/xcuda                 # every library
    tests/corpus/compile_corpus.py --xcuda build/bin/xcuda --sample 20 libcurand libcublas
    tests/corpus/compile_corpus.py --xcuda build/bin/xcuda --list tests/corpus/sample.txt
    tests/corpus/compile_corpus.py --xcuda build/bin/xcuda --check        # front end only, fast

With --list, only the modules named in the file are compiled (what the ptx.corpus_sample test
does), and a named module that the libraries do not hold is a failure. The exit status is 0 when
every selected module compiled without a diagnostic.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import time

DEFAULT_LIBRARIES = [
    "libcurand", "libcublas", "libcublasLt", "libcufft", "libcusparse", "libcusolver", "libnccl",
    "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", "libcudnn_ops",
    "libcudnn_cnn", "libcudnn_adv", "libcudnn_graph", "libcudnn_heuristic",
]

# "FILE:LINE:COLUMN: message", as xcuda compile prints every diagnostic.
DIAGNOSTIC = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$")


def find_library(library_directory, name):
    """The real file behind libNAME.so (the highest-versioned one), or None."""
    candidates = sorted(entry for entry in os.listdir(library_directory)
                        if entry == name + ".so" or entry.startswith(name + ".so."))
    files = [entry for entry in candidates
             if not os.path.islink(os.path.join(library_directory, entry))]
    chosen = (files or candidates)
    return os.path.join(library_directory, chosen[-1]) if chosen else None


def extract(xcuda, library_path, directory):
    """The PTX files xcuda dump writes for one library, sorted by name; extraction is done once
    per scratch directory (a marker file records that it finished)."""
    marker = os.path.join(directory, ".extracted")
    if not os.path.exists(marker):
        os.makedirs(directory, exist_ok=True)
        completed = subprocess.run([xcuda, "dump", library_path, "-o", directory],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if completed.returncode != 0:
            sys.stderr.write("xcuda dump %s failed (%d): %s\n"
                             % (library_path, completed.returncode, completed.stderr.strip()))
            return []
        open(marker, "w").close()
    return sorted(entry for entry in os.listdir(directory) if entry.endswith(".ptx"))


def evenly_spaced(items, count):
    """A deterministic sample of `count` items spread over the whole (sorted) list."""
    if count <= 0 or count >= len(items):
        return items
    return [items[index * len(items) // count] for index in range(count)]


Result = collections.namedtuple("Result", "library path ok seconds first_diagnostic diagnostics")


def compile_module(xcuda, library, path, timeout, check_only):
    output = path[:-len(".ptx")] + ".o"
    command = [xcuda, "compile"] + (["--check", path] if check_only else ["--target", "host", path, "-o", output])
    start = time.monotonic()
    try:
        completed = subprocess.run(command,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return Result(library, path, False, timeout, "timed out after %d s" % timeout, 0)
    seconds = time.monotonic() - start
    if os.path.exists(output):
        os.remove(output)
    lines = completed.stderr.splitlines()
    diagnostics = [line for line in lines if DIAGNOSTIC.match(line)]
    ok = completed.returncode == 0 and not diagnostics
    first = None
    if not ok:
        if diagnostics:
            first = DIAGNOSTIC.match(diagnostics[0])
            first = first.group("message")
        elif completed.returncode < 0:
            first = "killed by signal %d" % -completed.returncode
        else:
            first = (lines[0] if lines else "exit status %d without a diagnostic"
                     % completed.returncode)
    return Result(library, path, ok, seconds, first, len(diagnostics))


def read_list(path):
    """Lines "LIBRARY MODULE.ptx"; '#' starts a comment."""
    wanted = collections.defaultdict(list)
    with open(path) as listing:
        for line in listing:
            words = line.split("#", 1)[0].split()
            if len(words) == 2:
                wanted[words[0]].append(words[1])
            elif words:
                sys.exit("%s: expected 'LIBRARY MODULE.ptx', found %r" % (path, line.strip()))
    return wanted


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("libraries", nargs="*", help="library names such as libcublas "
                        "(default: every toolkit library known to carry PTX)")
    parser.add_argument("--xcuda", required=True, help="the xcuda command-line tool")
    parser.add_argument("--cuda", default="/usr/local/cuda", help="the CUDA toolkit")
    parser.add_argument("--scratch", default="/tmp/xcuda-corpus",
                        help="where extracted PTX is kept between runs")
    parser.add_argument("--jobs", type=int, default=2, help="modules compiled at once")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per module")
    parser.add_argument("--sample", type=int, default=0,
                        help="compile only this many modules per library, evenly spaced")
    parser.add_argument("--list", help="compile only the modules this file names")
    parser.add_argument("--check", action="store_true", help="only parse, check and lower each "
                        "module to LLVM IR (xcuda compile --check): the front end's coverage, "
                        "without the time code generation takes")
    parser.add_argument("--top", type=int, default=20, help="failure classes to show")
    parser.add_argument("--failures", help="write every failing module and its first "
                        "diagnostic to this file")
    arguments = parser.parse_args()

    library_directory = os.path.join(arguments.cuda, "lib64")
    wanted = read_list(arguments.list) if arguments.list else None
    libraries = arguments.libraries or (sorted(wanted) if wanted else DEFAULT_LIBRARIES)

    work, missing = [], []
    found = collections.Counter()
    for library in libraries:
        library_path = find_library(library_directory, library)
        if library_path is None:
            missing.append("%s: not in %s" % (library, library_directory))
            continue
        directory = os.path.join(arguments.scratch, library)
        modules = extract(arguments.xcuda, library_path, directory)
        found[library] = len(modules)
        if wanted is not None:
            present = set(modules)
            missing += ["%s: no module %s" % (library, name)
                        for name in wanted[library] if name not in present]
            modules = [name for name in wanted[library] if name in present]
        else:
            modules = evenly_spaced(modules, arguments.sample)
        work += [(library, os.path.join(directory, name)) for name in modules]

    print("compiling %d modules with %d jobs" % (len(work), arguments.jobs), flush=True)
    results = []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
        futures = [pool.submit(compile_module, arguments.xcuda, library, path, arguments.timeout,
                               arguments.check)
                   for library, path in work]
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results.append(result)
            if not result.ok:
                print("FAIL %s (%.1f s): %s" % (result.path, result.seconds,
                                                result.first_diagnostic), flush=True)
    elapsed = time.monotonic() - start

    print("\n%-36s %8s %8s %8s %8s %10s" % ("library", "found", "tried", "compiled", "failed",
                                              "seconds"))
    for library in libraries:
        mine = [result for result in results if result.library == library]
        if library not in found:
            continue
        print("%-36s %8d %8d %8d %8d %10.1f" % (
            library, found[library], len(mine), sum(r.ok for r in mine),
            sum(not r.ok for r in mine), sum(r.seconds for r in mine)))
    failures = [result for result in results if not result.ok]
    print("%-36s %8d %8d %8d %8d %10.1f" % ("total", sum(found.values()), len(results),
                                            len(results) - len(failures), len(failures), elapsed))

    if failures:
        classes = collections.Counter(result.first_diagnostic for result in failures)
        print("\nfailures by first diagnostic (top %d of %d classes):"
              % (min(arguments.top, len(classes)), len(classes)))
        for message, count in classes.most_common(arguments.top):
            example = next(r.path for r in failures if r.first_diagnostic == message)
            print("%6d  %s\n        e.g. %s" % (count, message, example))
    if arguments.failures:
        with open(arguments.failures, "w") as report:
            for result in sorted(failures):
                report.write("%s\t%s\n" % (result.path, result.first_diagnostic))
    for problem in missing:
        print("missing: " + problem)
    return 1 if failures or missing or not results else 0


if __name__ == "__main__":
    sys.exit(main())
