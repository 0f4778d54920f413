"""What more than one test file builds on."""

import numpy as np
import pytest


@pytest.fixture
def far_scene():
    """The scene maker below, for the tests of geometry far from the origin."""
    return make_far_scene


def make_far_scene(seed, roads=400, parcels=150, at=(-8240000.0, 4970000.0)):
    """Roads and parcels on integer points in a 300-unit square, moved to web mercator's
    magnitudes (``at``, where float32's spacing is 0.5): parcels are squares, every third with
    a hole; half the roads run 0.2 beside a parcel's edge (rounded there to float32, they
    would touch it), the others walk between integer points, touching and running along
    edges exactly."""
    shapely = pytest.importorskip("shapely")
    gpd = pytest.importorskip("geopandas")
    rng = np.random.default_rng(seed)
    shapes = []
    for i in range(parcels):
        x, y = rng.integers(0, 300, 2)
        size = int(rng.integers(3, 12))
        shell = shapely.box(x, y, x + size, y + size)
        if i % 3 == 0 and size >= 5:
            shell = shapely.Polygon(shell.exterior, [shapely.box(x + 1, y + 1, x + size - 2, y + size - 2).exterior])
        shapes.append(shell)
    lines = []
    for i in range(roads):
        if i % 2:
            # Along a parcel's bottom or top, 0.2 outside it.
            x0, y0, x1, y1 = shapes[int(rng.integers(parcels))].bounds
            y = y0 - 0.2 if rng.integers(2) else y1 + 0.2
            points = [(x0 - rng.integers(1, 4), y), (x1 + rng.integers(1, 4), y)]
        else:
            start = rng.integers(0, 300, 2).astype(float)
            steps = rng.integers(-6, 7, (int(rng.integers(1, 4)), 2)).astype(float)
            points = np.cumsum(np.vstack([start, steps]), axis=0)
        lines.append(shapely.LineString(points))
    move = lambda geoms: shapely.transform(np.asarray(geoms), lambda c: c + np.asarray(at))  # noqa: E731
    return gpd.GeoSeries(move(lines), crs="EPSG:3857"), gpd.GeoSeries(move(shapes), crs="EPSG:3857")
