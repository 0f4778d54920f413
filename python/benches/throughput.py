"""Python throughput, in one run: the layer's overhead over the library's own call, the peer
(shapely 2's STRtree), and a Dask LocalCluster against the single process.

    .venv/bin/python python/benches/throughput.py [--segments N] [--rects M]

Needs the `rectcast` binary (RECTCAST_BIN, default target/release/rectcast) for the scene and
`pip install "python[bench]"` for the peer and Dask.
"""

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import rectcast

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("RECTCAST_BIN", ROOT / "target" / "release" / "rectcast"))


def best_and_median(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2]


def row(name, seconds, pairs):
    print(f"{name:58} {seconds * 1e3:10.1f} ms {pairs / seconds / 1e9:8.2f} Gpairs/s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, default=10_000_000)
    parser.add_argument("--rects", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--peer-segments", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([str(BIN), "gen", "--kind", "bullet-hell", "--segments", str(args.segments),
                        "--rects", str(args.rects), "--format", "npy", "--out-dir", folder],
                       check=True, capture_output=True)
        segments = np.load(Path(folder) / "segments.npy")
        rects = np.load(Path(folder) / "rects.npy")
    n, m = len(segments), len(rects)
    pairs = n * m
    engine = rectcast.Engine("cpu")
    print(f"bullet-hell scene from `rectcast gen`: {n} segments x {m} rects = {pairs:.3g} pairs")
    print(f"engine: {engine.chosen}")
    engine.first_hit(segments, rects)  # warm-up: buffers, threads

    def library_seconds(into):
        runs = sorted(engine._engine._library_first_hit_seconds(segments, rects, into)
                      for _ in range(args.repeat))
        return runs[args.repeat // 2]

    library = library_seconds(False)
    library_into = library_seconds(True)
    _, numpy_out = best_and_median(lambda: engine.first_hit(segments, rects), args.repeat)
    _, arrow_out = best_and_median(lambda: engine.first_hit(segments, rects, to="arrow"), args.repeat)
    print("\nfirst hit, median of", args.repeat)
    row("the library: Engine::first_hit (a fresh Vec<FirstHit>)", library, pairs)
    row("the library: Engine::first_hit_into (a buffer reused)", library_into, pairs)
    row("rectcast.Engine.first_hit -> numpy structured array", numpy_out, pairs)
    row("rectcast.Engine.first_hit -> pyarrow.RecordBatch", arrow_out, pairs)
    print(f"Python over Engine::first_hit: numpy {100 * (numpy_out / library - 1):.1f} %, "
          f"arrow {100 * (arrow_out / library - 1):.1f} %; "
          f"numpy over first_hit_into: {100 * (numpy_out / library_into - 1):.1f} %")

    # The peer: shapely 2, an STRtree over the boxes queried with every segment's line, which
    # finds the intersecting pairs (no parameters, no sides): rectcast's `hits`.
    import shapely

    k = min(args.peer_segments, n)
    part = segments[:k]
    peer_pairs = k * m
    lines = shapely.linestrings(part.reshape(k, 2, 2))
    boxes = shapely.box(rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3])
    tree = shapely.STRtree(boxes)
    found = tree.query(lines, predicate="intersects")
    _, shapely_time = best_and_median(lambda: shapely.STRtree(boxes).query(lines, predicate="intersects"), 3)
    _, hits_time = best_and_median(lambda: engine.hits(part, rects), 3)
    ours = engine.hits(part, rects)
    print(f"\nhitting pairs of {k} segments x {m} rects (the peer's question), median of 3")
    row("rectcast.Engine.hits -> numpy (with t, kind, sides)", hits_time, peer_pairs)
    row("shapely 2.x STRtree(boxes).query(lines, 'intersects')", shapely_time, peer_pairs)
    print(f"pairs found: rectcast {len(ours)}, shapely {found.shape[1]}; "
          f"rectcast is {shapely_time / hits_time:.0f}x faster")

    # Dask: a LocalCluster of 2 worker processes (1 thread each) against this process.
    import dask.dataframe as dd
    import distributed
    import pandas as pd

    frame = pd.DataFrame(segments, columns=list(rectcast.SEGMENT_COLUMNS))
    ddf = dd.from_pandas(frame, npartitions=16)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        ddf = ddf.persist()
        distributed.wait(ddf)
        rectcast.dask.first_hit(ddf, rects, backend="cpu").compute()  # warm-up
        _, dask_time = best_and_median(
            lambda: rectcast.dask.first_hit(ddf, rects, backend="cpu").compute(), 3)
    print("\nfirst hit through Dask (16 partitions, data already on the workers), median of 3")
    row("rectcast.dask.first_hit, LocalCluster 2 processes x 1 thread", dask_time, pairs)
    row("rectcast.Engine('cpu').first_hit, this process, all cores", numpy_out, pairs)


if __name__ == "__main__":
    import rectcast.dask  # noqa: F401  (imported by the workers too)

    main()
