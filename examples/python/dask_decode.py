"""Decode a directory of /v1/embeddings response bodies on a Dask cluster into one .npy.

    python examples/python/dask_decode.py BODIES_DIR OUT.npy [--workers 2] [--dtype f32]

Each *.json file in BODIES_DIR (sorted by name) is one response body, as an ingestion job
saves them; the rows of all of them, in file order, go to OUT.npy (float32, count x dims).
The decode function is plain: the same one runs as a Ray `map_batches` or a Spark
`pandas_udf` function (README: "Python").

Runs offline: a LocalCluster of worker processes on this machine, no dashboard.
"""
import argparse
import os
import sys

import numpy as np

import embd


def decode_file(path, dtype="f32"):
    """One body file -> its (count, dims) float32 rows. embd releases the GIL while it
    decodes, so a worker's threads decode in parallel too."""
    with open(path, "rb") as f:
        return embd.decode_openai(f.read(), dtype=dtype)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bodies", help="directory of response bodies (*.json)")
    ap.add_argument("out", help="the .npy file to write")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--dtype", default="f32", help="the dtype the requests asked for (default f32)")
    args = ap.parse_args(argv)

    import dask.bag as db
    from dask.distributed import Client, LocalCluster

    paths = sorted(os.path.join(args.bodies, p) for p in os.listdir(args.bodies) if p.endswith(".json"))
    if not paths:
        print("dask_decode: no *.json in %s" % args.bodies, file=sys.stderr)
        return 1
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as cluster, Client(cluster) as client:
        bag = db.from_sequence(paths, npartitions=min(len(paths), 4 * args.workers))
        rows = bag.map(decode_file, dtype=args.dtype).compute(scheduler=client)
        workers = len(client.scheduler_info()["workers"])
    out = np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)
    np.save(args.out, out)
    print("dask_decode: %d bodies, %d x %d vectors on %d workers -> %s"
          % (len(paths), out.shape[0], out.shape[1], workers, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
