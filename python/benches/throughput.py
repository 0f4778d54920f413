"""Python throughput, in one run: the layer's overhead over the library's own call, the peer
(shapely 2's STRtree), a Dask LocalCluster against the single process, and a GIS job: a
GeoDataFrame of roads against one of parcels (holes among them), rectcast against shapely's
STRtree, the same pairs checked.

    .venv/bin/python python/benches/throughput.py [--segments N] [--rects M] [--gis-only]

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
    parser.add_argument("--roads", type=int, default=100_000)
    parser.add_argument("--parcels", type=int, default=10_000)
    parser.add_argument("--gis-only", action="store_true")
    args = parser.parse_args()
    if args.gis_only:
        return gis(args)
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
    gis(args)


def gis_scene(roads, parcels, seed=0, size=20_000):
    """Roads: line strings of four segments, a walk of steps up to 60 from a uniform start;
    parcels: convex hulls of six points in a 80-unit box, every fourth with a square hole about
    its centre. Integer coordinates, so that float32 and shapely's float64 hold them alike."""
    import geopandas as gpd
    import shapely

    rng = np.random.default_rng(seed)
    starts = rng.integers(0, size, (roads, 1, 2))
    walk = np.cumsum(np.concatenate([starts, rng.integers(-60, 61, (roads, 4, 2))], axis=1), axis=1)
    lines = shapely.linestrings(walk.astype(np.float64))
    corners = rng.integers(0, size, (parcels, 1, 2)) + rng.integers(0, 80, (parcels, 6, 2))
    hulls = shapely.convex_hull(shapely.multipoints(corners.astype(np.float64)))
    centres = np.round(shapely.get_coordinates(shapely.centroid(hulls)))
    holes = shapely.box(centres[:, 0] - 4, centres[:, 1] - 4, centres[:, 0] + 4, centres[:, 1] + 4)
    holed = (np.arange(parcels) % 4 == 0) & shapely.contains_properly(hulls, holes)
    hulls[holed] = shapely.difference(hulls[holed], holes[holed])
    polygonal = np.isin(shapely.get_type_id(hulls), (3,))
    return (gpd.GeoDataFrame({"road": np.arange(roads)}, geometry=lines),
            gpd.GeoDataFrame({"parcel": np.arange(parcels)[polygonal]}, geometry=hulls[polygonal]),
            int(holed.sum()))


def gis(args):
    """Which roads cross which parcels: rectcast from the GeoDataFrames (conversion included)
    against shapely 2's STRtree over the parcels queried with every road, the same pairs."""
    import shapely

    roads, parcels, holed = gis_scene(args.roads, args.parcels)
    engine = rectcast.Engine("cpu")
    lines = rectcast.from_shapely(roads)
    print(f"\nGIS: {len(roads)} roads ({len(lines)} segments) x {len(parcels)} parcels "
          f"({holed} with a hole), which pairs meet, median of 3")

    def ours():
        rows = engine.hits(roads, polygons=parcels)
        line = lines.line[rows["segment"]].astype(np.int64)
        return np.unique(line * len(parcels) + rows["polygon"].astype(np.int64))

    def peer():
        found = shapely.STRtree(parcels.geometry.values).query(roads.geometry.values, predicate="intersects")
        return np.unique(found[0].astype(np.int64) * len(parcels) + found[1])

    _, convert = best_and_median(lambda: (rectcast.from_shapely(roads), rectcast.from_shapely(parcels)), 3)
    _, ours_time = best_and_median(ours, 3)
    _, peer_time = best_and_median(peer, 3)
    got, want = ours(), peer()
    pairs = len(roads) * len(parcels)
    row("rectcast.hits(roads, polygons=parcels), pairs deduplicated", ours_time, pairs)
    row("  of which from_shapely, both GeoDataFrames", convert, pairs)
    row("shapely 2.x STRtree(parcels).query(roads, 'intersects')", peer_time, pairs)
    same = np.array_equal(got, want)
    print(f"pairs: rectcast {len(got)}, shapely {len(want)}, identical: {same}; "
          f"rectcast is {peer_time / ours_time:.1f}x faster")
    if not same:
        first = np.setxor1d(got, want)[0]
        print(f"first difference: road {first // len(parcels)} x parcel {first % len(parcels)}")
    gis_on_dask(roads, parcels, got)


def gis_on_dask(roads, parcels, want):
    """The same job with the roads as 4 GeoParquet files read by dask-geopandas, on a
    LocalCluster of 2 worker processes: what the cluster costs, reading included, the same
    pairs checked."""
    try:
        import dask_geopandas
        import distributed
    except ImportError:
        print("(no dask-geopandas: the Dask row is left out; pip install dask-geopandas)")
        return
    with tempfile.TemporaryDirectory() as folder, distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster):
        for i, part in enumerate(np.array_split(np.arange(len(roads)), 4)):
            roads.iloc[part].to_parquet(Path(folder) / f"part-{i}.parquet")
        lazy = dask_geopandas.read_parquet(folder)

        def on_dask():
            rows = rectcast.dask.hits(lazy, polygons=parcels, backend="cpu", threads=1).compute()
            return np.unique(rows["line"].to_numpy(np.int64) * len(parcels) + rows["polygon"].to_numpy(np.int64))

        on_dask()  # the workers load the library and the engine once
        _, seconds = best_and_median(on_dask, 3)
        got = on_dask()
    row("rectcast.dask.hits, 4 GeoParquet files, LocalCluster 2 x 1", seconds, len(roads) * len(parcels))
    print(f"pairs on Dask: {len(got)}, identical to the single process: {np.array_equal(got, want)}")


if __name__ == "__main__":
    import rectcast.dask  # noqa: F401  (imported by the workers too)

    main()
