//! `stencil._stencil`: the extension module behind the `stencil` Python package. It converts
//! Python values and hands pages to `stencil::api`, which cleans them exactly as `stencil
//! clean` does; the Python side (`stencil/__init__.py`) adds the module-level functions.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use stencil::api::{self, Format, Page};

create_exception!(
    _stencil,
    StencilError,
    PyException,
    "A page or a job Stencil could not handle; the message is the command line's."
);

/// The same allocator as the `stencil` binary: DOMs are many small allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A page taken from Python: `bytes` (or any bytes-like object) as fetched, or `str`.
enum Owned {
    Bytes(Vec<u8>),
    Text(String),
}

impl Owned {
    fn of(html: &Bound<'_, PyAny>) -> PyResult<Owned> {
        if let Ok(text) = html.extract::<String>() {
            return Ok(Owned::Text(text));
        }
        html.extract::<Vec<u8>>()
            .map(Owned::Bytes)
            .map_err(|_| PyValueError::new_err("a page is str or bytes"))
    }

    fn page(&self) -> Page<'_> {
        match self {
            Owned::Bytes(bytes) => Page::Bytes(bytes),
            Owned::Text(text) => Page::Text(text),
        }
    }
}

fn format_of(format: &str) -> PyResult<Format> {
    match format {
        "text" => Ok(Format::Text),
        "markdown" => Ok(Format::Markdown),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!(
            "format is \"text\", \"markdown\" or \"json\", not {other:?}"
        ))),
    }
}

/// The Python value of a cleaned page: `str`, or for JSON a `dict`.
fn value(py: Python<'_>, printed: String, format: Format) -> PyResult<Py<PyAny>> {
    match format {
        Format::Json => Ok(py
            .import("json")?
            .call_method1("loads", (printed,))?
            .unbind()),
        _ => Ok(printed.into_pyobject(py)?.into_any().unbind()),
    }
}

/// Cleaner(model=None, site_templates=None, options=None)
///
/// Cleans pages as `stencil clean` does, with the models read once: `model` is a model.json
/// (the shipped model when None), `site_templates` the output folder of an earlier `stencil
/// run`, whose hosts' pages get the site-level evidence, and `options` more of `stencil
/// clean`'s flags (["--links"]). Safe to share between threads.
#[pyclass(module = "stencil", frozen)]
struct Cleaner {
    inner: api::Cleaner,
}

#[pymethods]
impl Cleaner {
    #[new]
    #[pyo3(signature = (model=None, site_templates=None, options=None))]
    fn new(
        model: Option<PathBuf>,
        site_templates: Option<PathBuf>,
        options: Option<Vec<String>>,
    ) -> PyResult<Cleaner> {
        let options = options.unwrap_or_default();
        api::Cleaner::new(model.as_deref(), site_templates.as_deref(), &options)
            .map(|inner| Cleaner { inner })
            .map_err(StencilError::new_err)
    }

    /// The number of hosts with site templates.
    #[getter]
    fn site_hosts(&self) -> usize {
        self.inner.site_hosts()
    }

    /// clean(html, url=None, format="text") -> str | dict
    ///
    /// What `stencil clean --url URL --format FORMAT` prints for the page, without its final
    /// newline. `html` is str, or bytes decoded as the command decodes a file (gzip too);
    /// `format` is "text", "markdown" or "json" (a dict). Raises StencilError with the
    /// command's message when the page cannot be cleaned.
    #[pyo3(signature = (html, url=None, format="text"))]
    fn clean(
        &self,
        py: Python<'_>,
        html: &Bound<'_, PyAny>,
        url: Option<String>,
        format: &str,
    ) -> PyResult<Py<PyAny>> {
        let format = format_of(format)?;
        let page = Owned::of(html)?;
        let url = url.unwrap_or_default();
        let printed = py
            .detach(|| self.inner.clean(page.page(), &url, format))
            .map_err(StencilError::new_err)?;
        value(py, printed, format)
    }

    /// clean_many(pages, format="text", threads=None, errors="raise") -> list
    ///
    /// Cleans many pages on `threads` threads (all cores when None) without holding the GIL;
    /// the results come in the pages' order. Each page is html or (html, url). With
    /// errors="none" a page that cannot be cleaned gives None instead of raising.
    #[pyo3(signature = (pages, format="text", threads=None, errors="raise"))]
    fn clean_many(
        &self,
        py: Python<'_>,
        pages: &Bound<'_, PyAny>,
        format: &str,
        threads: Option<usize>,
        errors: &str,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let format = format_of(format)?;
        let raise = match errors {
            "raise" => true,
            "none" => false,
            other => {
                return Err(PyValueError::new_err(format!(
                    "errors is \"raise\" or \"none\", not {other:?}"
                )))
            }
        };
        let mut owned = Vec::new();
        for item in pages.try_iter()? {
            let item = item?;
            let (html, url) = match item.extract::<(Bound<'_, PyAny>, Option<String>)>() {
                Ok(pair) => pair,
                Err(_) => (item, None),
            };
            owned.push((Owned::of(&html)?, url.unwrap_or_default()));
        }
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, owned.len().max(1));
        let done = py.detach(|| clean_all(&self.inner, &owned, format, threads));
        let mut out = Vec::with_capacity(done.len());
        for (index, result) in done.into_iter().enumerate() {
            match result {
                Ok(printed) => out.push(value(py, printed, format)?),
                Err(message) if raise => {
                    return Err(StencilError::new_err(format!("page {index}: {message}")))
                }
                Err(_) => out.push(py.None()),
            }
        }
        Ok(out)
    }
}

/// Cleans `pages` on `threads` threads, each taking the next page not yet taken; the results
/// come back in the pages' order.
fn clean_all(
    cleaner: &api::Cleaner,
    pages: &[(Owned, String)],
    format: Format,
    threads: usize,
) -> Vec<Result<String, String>> {
    let results: Vec<Mutex<Option<Result<String, String>>>> =
        pages.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some((page, url)) = pages.get(index) else {
                    break;
                };
                let result = cleaner.clean(page.page(), url, format);
                if let Ok(mut slot) = results[index].lock() {
                    *slot = Some(result);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err("the page's thread failed".to_string()))
        })
        .collect()
}

/// Runs one `stencil` command line (without the program's name) in this process, without the
/// GIL; a failure raises StencilError with the message the binary prints.
#[pyfunction]
fn command(py: Python<'_>, args: Vec<String>) -> PyResult<()> {
    stencil::set_up_process();
    let argv: Vec<String> = std::iter::once("stencil".to_string()).chain(args).collect();
    match py.detach(|| stencil::command(argv)) {
        Ok(Ok(code)) if code == std::process::ExitCode::SUCCESS => Ok(()),
        Ok(Ok(_)) => Err(StencilError::new_err("the job failed (see its messages)")),
        Ok(Err(message)) => Err(StencilError::new_err(message)),
        Err(usage) => Err(StencilError::new_err(usage.to_string())),
    }
}

#[pymodule]
fn _stencil(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Cleaner>()?;
    m.add("StencilError", m.py().get_type::<StencilError>())?;
    m.add_function(wrap_pyfunction!(command, m)?)?;
    Ok(())
}
