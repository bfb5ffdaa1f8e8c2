"""Every Python snippet of docs/python.md runs, each in a scratch folder of its own."""
import os
import re
from pathlib import Path

import pytest

REPO = Path(os.environ.get("STENCIL_REPO", Path(__file__).resolve().parent.parent.parent))
DOC = REPO / "docs" / "python.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_its_snippets():
    assert len(SNIPPETS) == 4


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index, tmp_path, monkeypatch):
    code = SNIPPETS[index]
    if "datatrove" in code:
        try:
            import datatrove  # noqa: F401
        except ImportError:
            if os.environ.get("STENCIL_REQUIRE_DATATROVE") == "1":
                pytest.fail("datatrove is not installed (STENCIL_REQUIRE_DATATROVE=1)")
            pytest.skip("datatrove is not installed")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{DOC}, snippet {index + 1}", "exec"), {"__name__": "__main__"})
    if "JsonlWriter" in code:
        assert list((tmp_path / "jsonl").glob("*.jsonl.gz")), "the pipeline wrote its documents"
