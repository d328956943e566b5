"""Shared helpers of the module's tests: the repository's data, and the command-line programs
(DNNPLAN_EXAMPLES_DIR, set by ctest when the examples are built) to compare the module with."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE = pathlib.Path(os.environ.get("DNNPLAN_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
DATA = SOURCE / "examples" / "data"
FIXTURES = SOURCE / "tests" / "fixtures"


def without_times(document):
    """The document without its measured times (counters.elapsed_s), which differ between runs."""
    if isinstance(document, dict):
        return {k: without_times(v) for k, v in document.items() if k != "elapsed_s"}
    if isinstance(document, list):
        return [without_times(v) for v in document]
    return document


@pytest.fixture
def cli():
    """cli(program, *arguments): the program's stdout parsed as JSON; skips without the examples."""
    folder = os.environ.get("DNNPLAN_EXAMPLES_DIR")
    if not folder:
        pytest.skip("the command-line programs are not built (DNNPLAN_EXAMPLES_DIR is empty)")

    def run(program, *arguments):
        out = subprocess.run([os.path.join(folder, program), *map(str, arguments)], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)
    return run
