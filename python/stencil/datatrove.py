"""A datatrove block: `StencilExtractor`, in place of datatrove's `Trafilatura`.

    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from stencil.datatrove import StencilExtractor

    pipeline = [WarcReader("crawl/"), StencilExtractor(), JsonlWriter("out/")]

Importing this module imports datatrove; `import stencil` alone does not.
"""
from typing import Optional

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.extractors.base import BaseExtractor, ExtractorSandbox
from datatrove.utils.logging import logger
from datatrove.utils.typeshelper import StatHints

from . import Cleaner


class StencilExtractor(BaseExtractor):
    """Each document's text (its HTML) becomes Stencil's cleaned text, as `stencil clean`
    gives it; the document's `url` metadata is passed along (a forum thread's URL keeps its
    replies). A document whose text comes out empty is dropped, as datatrove's extractors do.

    Args:
        format: "text" or "markdown".
        site_templates: the output folder of an earlier `stencil run`, whose site templates
            give the pages of their hosts the site-level evidence (`apply --site-templates`).
        model: a model.json from `stencil run` or `stencil train`; the shipped model if None.
        options: more of `stencil clean`'s flags, e.g. ["--links"].
        timeout: seconds per document, after which it is skipped (datatrove's sandbox).
    """

    name = "⛏ Stencil"

    def __init__(self, format: str = "text", site_templates: Optional[str] = None,
                 model: Optional[str] = None, options=(), timeout: float = 1):
        super().__init__(timeout)
        if format not in ("text", "markdown"):
            raise ValueError(f'format is "text" or "markdown", not {format!r}')
        self.format = format
        self.site_templates = site_templates
        self.model = model
        self.options = list(options)
        self._cleaner = None

    def extract(self, text: str, url: Optional[str] = None) -> str:
        # Made where it is used: datatrove runs the extraction in a child process.
        if self._cleaner is None:
            self._cleaner = Cleaner(self.model, self.site_templates, self.options)
        return self._cleaner.clean(text, url or None, self.format)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        # BaseExtractor.run, but each document goes with its URL.
        with ExtractorSandbox(timeout=self.timeout, warmup_text=("", None)) as extractor:
            for doc in data:
                self.stat_update(StatHints.total)
                with self.track_time():
                    try:
                        doc.text = extractor.process_document(
                            (doc.text, doc.metadata.get("url")), self.extract)
                        self.stat_update("extracted")
                    except TimeoutError:
                        self.stat_update("timeout")
                        logger.warning("Timeout while cleaning record text. Skipping record.")
                        continue
                    except EOFError:
                        self.stat_update("broken_process")
                        logger.warning("Extraction process died; a new one takes the next document")
                        continue
                    except Exception as e:
                        self.stat_update("clean_error")
                        if not self._warned_error:
                            logger.warning(f'Error "{e}" while cleaning record text. Skipping record. '
                                           "This message appears once.")
                            self._warned_error = True
                        continue
                if doc.text:
                    self.stat_update(StatHints.forwarded)
                    self.update_doc_stats(doc)
                    yield doc
                else:
                    self.stat_update(StatHints.dropped)
