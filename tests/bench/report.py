#!/usr/bin/env python3
"""Combines the three variants' outputs (RESULT/JIT/LATENCY lines) into the suite's table.

Usage: report.py XCUDA_OUTPUT POCL_OUTPUT OPENMP_OUTPUT
Exits 1 if any variant produced a wrong answer or reported nothing for a kernel.
"""
import math
import sys

VARIANTS = ("xcuda", "PoCL", "OpenMP")


def read(path):
    """Returns (results, jit, latency): results maps kernel -> (status, first_ms, median_ms)."""
    results, jit, latency = {}, {}, {}
    with open(path) as output:
        for line in output:
            words = line.split()
            if len(words) >= 3 and words[0] == "RESULT":
                first, median = (float(words[3]), float(words[4])) if words[2] == "ok" else (None, None)
                results[words[1]] = (words[2], first, median)
            elif len(words) >= 3 and words[0] == "JIT":
                jit[words[1]] = " ".join(words[2:])
            elif len(words) == 3 and words[0] == "LATENCY":
                latency[words[1]] = float(words[2])
    return results, jit, latency


def cell(result):
    if result is None:
        return "missing"
    status, _, median = result
    return f"{median:.3f}" if status == "ok" else status


def geomean(values):
    return math.exp(sum(math.log(value) for value in values) / len(values)) if values else float("nan")


def main(paths):
    outputs = [read(path) for path in paths]
    results = [output[0] for output in outputs]
    kernels = list(dict.fromkeys(kernel for variant in results for kernel in variant))
    header = ["kernel", "xcuda ms", "PoCL ms", "OpenMP ms", "vs PoCL", "vs OpenMP", "xcuda 1st ms", "PoCL 1st ms"]
    rows, speedups, failed = [], {"PoCL": [], "OpenMP": []}, False
    for kernel in kernels:
        row_results = [variant.get(kernel) for variant in results]
        failed |= any(result is None or result[0] == "wrong" for result in row_results)
        row = [kernel] + [cell(result) for result in row_results]
        xcuda = row_results[0]
        for name, other in zip(("PoCL", "OpenMP"), row_results[1:]):
            if xcuda and other and xcuda[0] == "ok" and other[0] == "ok" and xcuda[2] > 0:
                speedups[name].append(other[2] / xcuda[2])
                row.append(f"{speedups[name][-1]:.2f}x")
            else:
                row.append("-")
        row += [f"{result[1]:.1f}" if result and result[0] == "ok" else "-" for result in row_results[:2]]
        rows.append(row)

    widths = [max(len(str(row[column])) for row in [header] + rows) for column in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(value).rjust(width) if column else str(value).ljust(width)
                        for column, (value, width) in enumerate(zip(row, widths))))
    print("(times: median of the repeated runs; speedup = other time / xcuda time; 1st = first launch,"
          " compile included)")
    print()
    for variant, output in zip(VARIANTS, outputs):
        for what, value in output[1].items():
            print(f"JIT {variant} {what}: {value}" + (" ms" if not value.startswith("failed") else ""))
    for what in ("empty_launch", "small_launch_stream"):
        print(f"launch latency {what} (us per launch): "
              + ", ".join(f"{variant} {output[2][what]:.2f}" if what in output[2] else f"{variant} missing"
                          for variant, output in zip(VARIANTS, outputs)))
    for name in ("PoCL", "OpenMP"):
        print(f"geomean vs {name} covers {len(speedups[name])} of {len(kernels)} kernels"
              " (rows where both ran and were right)")
    print(f"geomean speedup vs PoCL: {geomean(speedups['PoCL']):.2f}")
    print(f"geomean speedup vs OpenMP: {geomean(speedups['OpenMP']):.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:4]))
