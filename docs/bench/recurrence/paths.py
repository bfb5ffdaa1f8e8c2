"""Where the recurrence scripts read and write (docs/evaluation.md, "Text that recurs on other
pages of the host"); each can be set in the environment."""
import os
import sys

# The evaluation crawl, its manifest and gold (`STENCIL_EVAL_DIR` of the end-to-end test).
EVAL = os.environ.get("STENCIL_EVAL_DIR", "/tmp/eval2")
# Held-out cleaned texts (`stencil train-content --predictions`).
PRED_DIR = os.environ.get("RECUR_PRED", "/tmp/held-out")
# Derived files: blocks.jsonl, results.json (never commit them: they quote the data sets).
OUT_DIR = os.environ.get("RECUR_OUT", "/tmp/recur")
os.makedirs(OUT_DIR, exist_ok=True)
# ../shared/tools beside the repository (textf1.py).
TOOLS = os.environ.get(
    "STENCIL_SHARED_TOOLS",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared/tools"),
)
sys.path.insert(0, TOOLS)
