import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Literal, NamedTuple, Optional, Sequence, Tuple, Union, overload

Html = Union[str, bytes, bytearray, memoryview]
Format = Literal["text", "markdown", "json"]
PathLike = Union[str, os.PathLike]

class StencilError(Exception): ...

@overload
def clean(html: Html, url: Optional[str] = ..., format: Literal["text", "markdown"] = ...) -> str: ...
@overload
def clean(html: Html, url: Optional[str] = ..., format: Literal["json"] = ...) -> Dict[str, Any]: ...

class Cleaner:
    def __init__(self, model: Optional[PathLike] = ..., site_templates: Optional[PathLike] = ...,
                 options: Optional[Sequence[str]] = ...) -> None: ...
    @property
    def site_hosts(self) -> int: ...
    def clean(self, html: Html, url: Optional[str] = ..., format: Format = ...) -> Union[str, Dict[str, Any]]: ...
    def clean_many(self, pages: Iterable[Union[Html, Tuple[Html, Optional[str]]]], format: Format = ...,
                   threads: Optional[int] = ..., errors: Literal["raise", "none"] = ...) -> List[Any]: ...

class Job(NamedTuple):
    out: Path
    summary: Dict[str, Any]

def run(inputs: Union[PathLike, Iterable[PathLike]], out: PathLike, workers: int = ...,
        options: Sequence[str] = ...) -> Job: ...
def apply(inputs: Union[PathLike, Iterable[PathLike]], out: PathLike, workers: int = ...,
          model: Optional[PathLike] = ..., site_templates: Optional[PathLike] = ...,
          options: Sequence[str] = ...) -> Job: ...
def synth(out: PathLike, hosts: int = ..., pages: int = ...) -> Path: ...
