"""The README's Python snippets, run as a reader would run them: each in a fresh interpreter in
an empty folder, with only what the README's prose says the reader has (for the Dask snippet:
rects, polygons and a "trajectories/" Parquet dataset). A snippet's printed table, written as
comment lines right after its print, must be what it prints."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"

#: Snippets not run here, and why. Each is named by a piece of its text.
NOT_RUN = {
    "ray.data.read_parquet": "needs Ray and Spark (with a JVM), not installed by scripts/test.sh",
}

#: What the prose around a snippet gives the reader, by a piece of the snippet's text.
PRELUDES = {
    "rectcast.dask.first_hit": textwrap.dedent(
        """
        import numpy as np, pandas as pd, os
        rng = np.random.default_rng(0)
        os.makedirs("trajectories")
        for i in range(3):
            xy = rng.uniform(0, 100, (1000, 4)).astype(np.float32)
            pd.DataFrame(xy, columns=["x0", "y0", "x1", "y1"]).to_parquet(f"trajectories/{i}.parquet")
        c = rng.uniform(0, 100, (50, 2)).astype(np.float32)
        rects = np.hstack([c, c + 4])
        vertices = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float32)
        offsets = np.array([0, 4])
        """
    ),
}


def snippets():
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


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
    for marker, why in NOT_RUN.items():
        if marker in code:
            pytest.skip(f"not run: {why}")
    prelude = next((p for marker, p in PRELUDES.items() if marker in code), "")
    done = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "error::rectcast.RoundingWarning"},
    )
    assert done.returncode == 0, f"the snippet failed:\n{code}\n{done.stderr}"
    table = expected_output(code)
    if table is not None:
        printed = [line.rstrip() for line in done.stdout.splitlines()]
        assert [line.rstrip() for line in table] == printed[-len(table):], done.stdout


def test_every_snippet_either_runs_or_says_why_not():
    found = snippets()
    assert len(found) >= 4, "the README's Python snippets were not found"
    for marker in list(NOT_RUN) + list(PRELUDES):
        assert any(marker in code for code in found), f"no snippet contains {marker!r} any more"
