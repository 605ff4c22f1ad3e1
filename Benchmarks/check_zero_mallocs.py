#!/usr/bin/env python3
"""Fails unless every render-block benchmark in a stored baseline saw zero mallocs in every
block (the histogram's maximum, p100). The benchmark tool's own threshold check looks at p90
only, and one allocating block in a hundred would slip past it.

Usage: check_zero_mallocs.py BASELINE_RESULTS_JSON"""
import json
import sys


def main(path):
    results = json.load(open(path))["results"]
    checked, failures = 0, []
    # The list alternates a benchmark's identifier and its per-metric results.
    for identifier, metrics in zip(results[0::2], results[1::2]):
        for result in metrics:
            if "mallocCountTotal" not in result["metric"]:
                continue
            checked += 1
            histogram = result["statistics"]["histogram"]
            if histogram["maxValue"] != 0:
                failures.append(f"{identifier['name']}: up to {histogram['maxValue']} mallocs in one block")
    if checked == 0:
        sys.exit(f"{path}: no mallocCountTotal results to check")
    for failure in failures:
        print(f"ALLOCATES on the render path: {failure}")
    print(f"zero mallocs per block: {checked - len(failures)} of {checked} render benchmarks")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main(sys.argv[1])
