#!/usr/bin/env python3
"""Ratios from bench_base64's google-benchmark JSON output (python3 stdlib only).

    build/bench/bench_base64 --benchmark_min_time=0.2 --benchmark_repetitions=5 \\
        --benchmark_format=json > b64.json
    scripts/bench_base64_ratios.py b64.json      # or: ... | scripts/bench_base64_ratios.py -

For every size (in base64 characters) and direction it prints each contender's
throughput (decoded bytes per second, so decode and encode compare) and its ratio to
OpenSSL (EVP_DecodeBlock / EVP_EncodeBlock): above 1.0 is faster. The encode-out16 rows
(output 16 bytes past a 64-byte boundary) are compared with OpenSSL's encode row of the
same size. memcpy of the same
bytes is listed as the ceiling. With --benchmark_repetitions the median aggregate is
used when present, otherwise the median of the repetitions. Skipped benchmarks
(implementations this CPU cannot run) are listed as such.
"""
import argparse
import json
import re
import statistics
import sys

NAME_RE = re.compile(r"^(?:base64-(?P<dir>decode|encode|encode-out16)/(?P<impl>[^/]+)|(?P<memcpy>memcpy))/(?P<size>\d+)$")
ANCHOR = "openssl"


def load(fp):
    doc = json.load(fp)
    runs, medians, skipped, order = {}, {}, {}, []
    for b in doc.get("benchmarks", []):
        m = NAME_RE.match(b.get("run_name") or b["name"])
        if not m:
            continue
        d = m.group("dir") or "memcpy"
        impl = m.group("impl") or "memcpy"
        key = (d, impl, int(m.group("size")))
        if (d, impl) not in order:
            order.append((d, impl))
        if b.get("error_occurred"):
            skipped[key] = b.get("error_message", "skipped")
            continue
        v = float(b["bytes_per_second"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = v
        else:
            runs.setdefault(key, []).append(v)
    res = {k: medians.get(k, statistics.median(v)) for k, v in runs.items()}
    for k, v in medians.items():  # --benchmark_report_aggregates_only: no single runs
        res.setdefault(k, v)
    return res, skipped, order


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="bench_base64 --benchmark_format=json output, or - for stdin")
    a = ap.parse_args()
    fp = sys.stdin if a.json == "-" else open(a.json)
    res, skipped, order = load(fp)
    sizes = sorted({k[2] for k in list(res) + list(skipped)})
    for size in sizes:
        print(f"== {size} characters ({size // 4 * 3} bytes)")
        for d in ("decode", "encode", "encode-out16"):
            if not any(dd == d and (d, impl, size) in list(res) + list(skipped) for dd, impl in order):
                continue
            anchor = res.get((d.split("-")[0], ANCHOR, size))
            print(f"  {d}")
            for dd, impl in order:
                if dd != d:
                    continue
                key = (d, impl, size)
                if key in skipped:
                    print(f"    {impl:<16} skipped: {skipped[key]}")
                    continue
                if key not in res:
                    continue
                v = res[key]
                ratio = f"{v / anchor:6.2f}x openssl" if anchor else "   (no openssl)"
                print(f"    {impl:<16} {v / 1e9:8.2f} GB/s  {ratio}")
        mc = res.get(("memcpy", "memcpy", size))
        if mc:
            print(f"  memcpy             {mc / 1e9:8.2f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
