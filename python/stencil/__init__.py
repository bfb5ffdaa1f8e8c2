"""Stencil from Python: the cleaned text of a page, of many pages, or of a whole crawl.

    >>> import stencil
    >>> stencil.clean("<html><body><p>Hello world.</p></body></html>")
    'Hello world.'

`clean` and `Cleaner` give what `stencil clean` prints, byte for byte (without the newline
the command adds at the end); `run` and `apply` are the command's jobs over WARC files.
See docs/python.md in the repository.
"""
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, NamedTuple, Optional, Sequence, Union

from ._stencil import Cleaner, StencilError, command as _command

__all__ = ["clean", "Cleaner", "run", "apply", "synth", "Job", "StencilError"]

_default: Optional[Cleaner] = None


def clean(html: Union[str, bytes], url: Optional[str] = None, format: str = "text"):
    """The cleaned text of one page, as `stencil clean` prints it, with the shipped models.

    `html` is the page's bytes (decoded as the command decodes them: HTTP-less, so `<meta>`
    charset, byte order mark, then sniffing; gzip is decompressed) or text already decoded.
    `url` helps (a forum thread's URL keeps its replies). `format`: "text", "markdown" or
    "json" (a dict with the metadata, both texts and the template fractions).
    """
    global _default
    if _default is None:
        _default = Cleaner()
    return _default.clean(html, url, format)


class Job(NamedTuple):
    """What a job wrote: the folder of its tables and its `run.json`."""

    out: Path
    summary: Dict[str, Any]


def _job(name: str, inputs: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
         out: Union[str, os.PathLike], workers: int, flags: Sequence[str]) -> Job:
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    args = [name, *map(os.fspath, inputs), "--out", os.fspath(out), "-w", str(workers)]
    _command(args + list(flags))
    out = Path(out)
    with open(out / "run.json", encoding="utf-8") as f:
        return Job(out, json.load(f))


def run(inputs, out, workers: int = 1, options: Sequence[str] = ()) -> Job:
    """`stencil run`: site-level templates, a classifier trained on them, every page cleaned.

    `inputs`: WARC files or folders; `out`: the folder of the tables; `options`: more of the
    command's flags (`["--method", "rtdm"]`). Raises StencilError with the command's message.
    """
    return _job("run", inputs, out, workers, options)


def apply(inputs, out, workers: int = 1, model=None, site_templates=None,
          options: Sequence[str] = ()) -> Job:
    """`stencil apply`: every page cleaned in one pass with a model (the shipped one unless
    `model` names a model.json) and, with `site_templates`, an earlier run's templates."""
    flags = list(options)
    if model is not None:
        flags += ["--model", os.fspath(model)]
    if site_templates is not None:
        flags += ["--site-templates", os.fspath(site_templates)]
    return _job("apply", inputs, out, workers, flags)


def synth(out, hosts: int = 20, pages: int = 30) -> Path:
    """`stencil synth`: a deterministic synthetic crawl (`hosts` sites of `pages` pages, each
    site with its own template) written to `out` as a Common-Crawl-style .warc.gz, to try the
    jobs on."""
    _command(["synth", "--hosts", str(hosts), "--pages", str(pages), "--out", os.fspath(out)])
    return Path(out)
