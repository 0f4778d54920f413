"""``skip_invalid=True``: invalid segments and targets miss everything instead of failing the
call, as the library's ``Batch::skip_invalid`` and the CLI's ``--skip-invalid`` have them. The
library checks each one (``_rectcast.invalid_records``, ``invalid_polygons``).

- An invalid segment (a NaN, a value beyond ±2^62) or target (a rect whose min exceeds its
  max, a circle of negative radius, a polygon whose ring is not simple, as a bow-tie's) is left
  out of the call. The rows keep the inputs' numbers, and a skipped input has none, as in the
  CLI's output: no first hit of a skipped segment, no pairs and no count of a skipped
  target.

What was skipped is said once (:class:`SkippedWarning`, with the first few reasons) and, in
pandas and geopandas rows, kept in ``attrs["skipped"]``: each input's skipped indices.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from . import _rectcast


class SkippedWarning(UserWarning):
    """Invalid inputs were skipped (``skip_invalid=True``); the message says how many and why
    the first were."""


def invalid(keyword, arrays):
    """The invalid records or polygons of a target's (or the segments') arrays: each one's
    index and the library's reason."""
    if keyword == "polygons":
        vertices, offsets, polygon_offsets = arrays
        return _rectcast.invalid_polygons(vertices, offsets, polygon_offsets)
    return _rectcast.invalid_records(keyword, arrays)


def kept(keyword, arrays, bad):
    """``arrays`` (a target's, or ``"segments"``) without the items at ``bad`` (indices, in
    order), and the kept items' indices among all."""
    count = _count(keyword, arrays)
    keep = np.ones(count, dtype=bool)
    keep[bad] = False
    if keyword != "polygons":
        return np.ascontiguousarray(arrays[keep]), np.flatnonzero(keep)
    vertices, offsets, polygon_offsets = arrays
    if polygon_offsets is None:
        polygon_offsets = np.arange(len(offsets), dtype=np.int64)
    from . import _ranges

    first, last = polygon_offsets[:-1][keep], polygon_offsets[1:][keep]
    rings = _ranges(first, last)
    sizes = offsets[rings + 1] - offsets[rings]
    vertex_ids = _ranges(offsets[rings], offsets[rings + 1])
    new_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    new_polygons = np.concatenate([[0], np.cumsum(last - first)]).astype(np.int64)
    return (np.ascontiguousarray(vertices[vertex_ids]), new_offsets, new_polygons), np.flatnonzero(keep)


def _count(keyword, arrays):
    if keyword != "polygons":
        return len(arrays)
    vertices, offsets, polygon_offsets = arrays
    return len(offsets) - 1 if polygon_offsets is None else len(polygon_offsets) - 1


def renumbered(rows, field, kept, segments_kept):
    """Rows answered over the kept segments and targets, numbered as the inputs are: the
    ``segment`` and ``field`` (the target's index) columns back to the inputs' numbers
    (``kept``, ``segments_kept``: the kept ones' indices among all, ``None`` where none was
    left out). Skipped inputs have no rows, as in the CLI's output."""
    if kept is None and segments_kept is None:
        return rows
    out = rows.copy()
    if segments_kept is not None and "segment" in out.dtype.names:
        out["segment"] = segments_kept[out["segment"].astype(np.int64)]
    if kept is not None:
        index = out[field].astype(np.int64)
        found = index >= 0
        out[field][found] = kept[index[found]]
    return out


def user_level():
    """The ``stacklevel`` of the first caller outside the package: a warning names the user's
    line, whichever route (module function, engine, Dask task) the call took."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("rectcast"):
        frame, level = frame.f_back, level + 1
    return level


def say(skipped):
    """Warns once of what was skipped (``skipped``: {input: [(index, reason), ...]})."""
    found = {name: bad for name, bad in skipped.items() if bad}
    if not found:
        return
    parts = [f"{len(bad)} invalid {name}" for name, bad in found.items()]
    first = [reason for bad in found.values() for _, reason in bad[:2]][:3]
    warnings.warn(
        f"skip_invalid: skipped {' and '.join(parts)}: {'; '.join(first)}"
        f"{'; …' if sum(map(len, found.values())) > len(first) else ''}",
        SkippedWarning,
        stacklevel=user_level(),
    )
