#!/usr/bin/env python3
"""Ratios from bench_crc32's google-benchmark JSON output (python3 stdlib only).

    build/bench/bench_crc32 --benchmark_min_time=0.1 --benchmark_format=json > crc.json
    scripts/bench_ratios.py crc.json          # or: ... | scripts/bench_ratios.py -

For every size and alignment it prints each contender's throughput and its ratio to
ISA-L (crc32_gzip_refl), zlib (crc32) and the best anchor at that size (the fastest of
ISA-L, zlib and libdeflate): above 1.0 is faster than the anchor. For the 12-byte case,
where the cost of a call matters more than bandwidth, it also prints the time per call
relative to zlib (below 1.0 is faster). Chained runs (crc32-chained/: each call starts
from the previous CRC, so the time is the latency) get blocks of their own.

Benchmark names are <family>/<contender>/<bytes>/align<offset> (crc32/avx2-vpclmul/1024/align0,
crc32-chained/embd/32/align16) or memcpy/<bytes>/align<offset>; ceiling/<width>/<bytes>/align0
(the carry-less multiply ceiling, bench/ceiling/clmul_ceiling.h) is listed as contender
ceiling:<width>.
Skipped benchmarks (error_occurred) are listed as such.
With --benchmark_repetitions the median aggregate is used when present, otherwise the
median of the repetitions.
"""
import argparse
import json
import re
import signal
import statistics
import sys

TIME_RATIO_SIZES = {12}
ANCHORS = ("isal", "zlib")
BEST_OF = ("isal", "zlib", "libdeflate")
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
NAME_RE = re.compile(r"^(?:crc32(?P<chained>-chained)?/(?P<impl>[^/]+)|ceiling/(?P<ceil>[^/]+)"
                     r"|(?P<memcpy>memcpy))/(?P<size>\d+)/align(?P<align>\d+)$")


def load(fp):
    doc = json.load(fp)
    runs = {}      # (chained, impl, size, align) -> list of (bytes_per_second, ns_per_call)
    medians = {}   # same key -> (bytes_per_second, ns_per_call) from a median aggregate
    skipped = {}   # same key -> error message
    unparsed = []
    order = []     # contenders in order of first appearance (registry, embd, anchors)
    for b in doc.get("benchmarks", []):
        name = b.get("run_name") or b["name"]
        m = NAME_RE.match(name)
        if not m:
            unparsed.append(b["name"])
            continue
        impl = m.group("impl") or ("ceiling:" + m.group("ceil") if m.group("ceil") else "memcpy")
        key = (bool(m.group("chained")), impl, int(m.group("size")), int(m.group("align")))
        if impl not in order:
            order.append(impl)
        if b.get("error_occurred"):
            skipped[key] = b.get("error_message", "skipped")
            continue
        ns = b["cpu_time"] * NS_PER_UNIT[b.get("time_unit", "ns")]
        val = (float(b["bytes_per_second"]), ns)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = val
        else:
            runs.setdefault(key, []).append(val)
    results = {}
    for key, vals in runs.items():
        if key in medians:
            results[key] = medians[key]
        else:
            results[key] = (statistics.median(v[0] for v in vals),
                            statistics.median(v[1] for v in vals))
    for key, val in medians.items():
        results.setdefault(key, val)
    return doc.get("context", {}), order, results, skipped, unparsed


def fmt_rate(bps):
    return f"{bps / 1e9:8.2f}"


def fmt_ratio(x):
    return f"{x:8.2f}" if x is not None else "       -"


def main(argv):
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="bench_crc32 --benchmark_format=json output ('-' for stdin)")
    args = ap.parse_args(argv)
    if args.json == "-":
        ctx, order, results, skipped, unparsed = load(sys.stdin)
    else:
        with open(args.json, encoding="utf-8") as fp:
            ctx, order, results, skipped, unparsed = load(fp)
    if not results and not skipped:
        print("bench_ratios: no crc32/memcpy benchmarks in the input", file=sys.stderr)
        return 1

    for k in ("host_name", "num_cpus", "mhz_per_cpu", "library_build_type", "embd_version",
              "embd_crc32_active", "crc32_not_runnable"):
        if k in ctx:
            print(f"# {k}: {ctx[k]}")
    missing = [a for a in ANCHORS if not any(k[1] == a for k in results)]
    if missing:
        print(f"# anchors missing from the input: {', '.join(missing)} (ratios shown as -)")

    cases = sorted({(k[0], k[2], k[3]) for k in list(results) + list(skipped)})
    width = max(len(i) for i in order)

    for chained, size, align in cases:
        small = size in TIME_RATIO_SIZES
        print()
        print(f"== {size} bytes, align {align}"
              + (", chained (each call on the previous CRC) ==" if chained else " =="))
        head = (f"{'contender':<{width}}  {'GB/s':>8}  {'ns/call':>9}  {'vs isal':>8}  "
                f"{'vs zlib':>8}  {'vs best':>8}")
        if small:
            head += f"  {'t/t_zlib':>8}"
        print(head)
        isal = results.get((chained, "isal", size, align))
        zlib = results.get((chained, "zlib", size, align))
        best = max((results[(chained, a, size, align)][0] for a in BEST_OF
                    if (chained, a, size, align) in results), default=None)
        for impl in order:
            key = (chained, impl, size, align)
            if key in skipped:
                print(f"{impl:<{width}}  skipped: {skipped[key]}")
                continue
            if key not in results:
                continue
            bps, ns = results[key]
            line = (f"{impl:<{width}}  {fmt_rate(bps)}  {ns:9.2f}  "
                    f"{fmt_ratio(bps / isal[0] if isal else None)}  "
                    f"{fmt_ratio(bps / zlib[0] if zlib else None)}  "
                    f"{fmt_ratio(bps / best if best else None)}")
            if small:
                line += f"  {fmt_ratio(ns / zlib[1] if zlib else None)}"
            print(line)
    if unparsed:
        print(f"\n# ignored {len(unparsed)} benchmark(s) with other names, e.g. {unparsed[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
