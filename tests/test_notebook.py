"""examples/getting_started.ipynb runs from top to bottom in a fresh kernel (nbclient), and is
committed without outputs (what it shows is what the code shows today, never a stale run)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "getting_started.ipynb"


def test_notebook_is_committed_clean():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "the notebook has no code"
    assert all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
def test_notebook_runs(tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    # a cell that raises stops the run with CellExecutionError naming the cell
    NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert "legal:" in text and "refused:" in text and "replayed:" in text
    assert "greedy" in text and "random" in text
    pages = [o for o in outputs if "text/html" in o.get("data", {})]
    assert len(pictures) >= 4  # the game, the env, the trace's positions, the bar chart
    assert any("<iframe" in o["data"]["text/html"] for o in pages)  # the trace's replay page
