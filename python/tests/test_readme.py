"""The READMEs' Python snippets (python/README.md's and the repository's front page's), run as a reader would run them: each in a fresh interpreter in
an empty folder, with only what the README's prose says the reader has (for the Dask, Ray and
Spark snippets: rects, polygons and a "trajectories/" Parquet dataset, whose results are then
compared with the single-process call's). A snippet's printed table, written as comment lines
right after its print, must be what it prints."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = [ROOT / "python" / "README.md", ROOT / "README.md"]

#: What the prose before the Dask, Ray and Spark snippets gives the reader: rects, polygons and
#: a "trajectories/" Parquet dataset of segments with an id column, in three files.
DATASET = textwrap.dedent(
    """
    import numpy as np, pandas as pd, os
    rng = np.random.default_rng(0)
    os.makedirs("trajectories")
    for i in range(3):
        xy = rng.uniform(0, 100, (1000, 4)).astype(np.float32)
        part = pd.DataFrame(xy, columns=["x0", "y0", "x1", "y1"])
        part.insert(0, "id", np.arange(1000 * i, 1000 * (i + 1)))
        part.to_parquet(f"trajectories/{i}.parquet")
    c = rng.uniform(0, 100, (50, 2)).astype(np.float32)
    rects = np.hstack([c, c + 4])
    vertices = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float32)
    offsets = np.array([0, 4])
    """
)

#: After those snippets: the "first_hits/" they wrote, row by row against the single-process
#: call over the same segments (by id, or by segment where the segments count over the whole
#: dataset, as Dask's do). The first difference is printed with its row.
SAME_FIRST_HITS = textwrap.dedent(
    """
    import pandas as pd, rectcast
    segments = pd.read_parquet("trajectories/")
    want = rectcast.first_hit(segments, rects, to="pandas", ids="id")
    got = pd.read_parquet("first_hits/")
    key = "id" if "id" in got.columns else "segment"
    fields = ["rect", "kind", "t_enter", "t_exit", "entry", "exit"]
    names = {"kind": rectcast.KIND_NAMES, "entry": rectcast.SIDE_NAMES, "exit": rectcast.SIDE_NAMES}
    # Plain values, None for none: names for codes (Dask's rows carry the numpy codes), None
    # for a miss's -1, NaN and <NA>.
    def rows(frame, key):
        frame = frame.sort_values(key)
        cells = [frame[key].tolist()]
        for field in fields:
            column = frame[field]
            if field in names and pd.api.types.is_integer_dtype(column):
                column = column.map(lambda code: names[field][code] or None)
            elif field == "rect" and pd.api.types.is_integer_dtype(column):
                column = column.where(column >= 0)
            column = column.astype(object)
            cells.append(column.where(column.notna(), None).tolist())
        return list(zip(*cells))
    got_rows, want_rows = rows(got, key), rows(want, "id")
    assert len(got_rows) == len(want_rows), f"{len(got_rows)} rows, expected {len(want_rows)}"
    for g, w in zip(got_rows, want_rows):
        assert g == w, f"{key} {w[0]}: ({', '.join(fields)}) = {g[1:]}, expected {w[1:]}"
    """
)

#: By a piece of a snippet's text: what runs before it, and what checks it after.
PRELUDES = {
    "rectcast.dask.first_hit": DATASET,
    "ray.data.read_parquet": DATASET,
    "mapInArrow": DATASET,
}
EPILOGUES = {
    "rectcast.dask.first_hit": SAME_FIRST_HITS,
    "ray.data.read_parquet": SAME_FIRST_HITS,
    "mapInArrow": SAME_FIRST_HITS,
}


def snippets():
    return [
        code
        for readme in READMES
        for code in re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    ]


def expected_output(code):
    """The comment lines right after a print(...) line: the table it prints."""
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("print(") and i + 1 < len(lines) and lines[i + 1].startswith("#"):
            table = []
            for follow in lines[i + 1:]:
                if not follow.startswith("#"):
                    break
                table.append(follow[2:] if follow.startswith("# ") else follow[1:])
            return table
    return None


@pytest.mark.parametrize("code", snippets(), ids=lambda c: c.splitlines()[0][:40])
def test_the_readme_python_snippet_runs(code, tmp_path):
    prelude = next((p for marker, p in PRELUDES.items() if marker in code), "")
    epilogue = next((p for marker, p in EPILOGUES.items() if marker in code), "")
    # As in an activated virtual environment: `python3` is this interpreter, for the Spark
    # workers it starts.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", prelude + code + epilogue],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": path, "PYTHONWARNINGS": "error::rectcast.RoundingWarning"},
    )
    # Ray and Spark log much: the end of it says what failed.
    assert done.returncode == 0, f"the snippet failed:\n{code}\n{done.stderr[-8000:]}"
    table = expected_output(code)
    if table is not None:
        printed = [line.rstrip() for line in done.stdout.splitlines()]
        assert [line.rstrip() for line in table] == printed[-len(table):], done.stdout


def test_every_prelude_and_check_still_finds_its_snippet():
    found = snippets()
    assert len(found) >= 5, "the README's Python snippets were not found"
    for marker in list(PRELUDES) + list(EPILOGUES):
        assert any(marker in code for code in found), f"no snippet contains {marker!r} any more"
