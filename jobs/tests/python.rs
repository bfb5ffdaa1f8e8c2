//! The Python package (`python/`), from the test command: runs its tests
//! (`python/tests/test_stencil.py`, pytest) with the Python that `STENCIL_PYTHON` names, one
//! where `pip install ./python` has installed the package, against this checkout's `stencil`
//! binary. Without `STENCIL_PYTHON` the test is skipped with a notice; `.ci/run` builds that
//! environment and sets `STENCIL_REQUIRE_PYTHON=1`, which makes its absence a failure.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let Some(python) = std::env::var_os("STENCIL_PYTHON") else {
        if std::env::var("STENCIL_REQUIRE_PYTHON").as_deref() == Ok("1") {
            panic!("STENCIL_REQUIRE_PYTHON=1 but STENCIL_PYTHON is not set");
        }
        eprintln!(
            "NOTICE: skipping, STENCIL_PYTHON is not set (a Python with `pip install ./python`)"
        );
        return;
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let tests = repo.join("python").join("tests");
    let scratch = std::env::temp_dir().join(format!("stencil-python-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    // Run from a scratch folder, so that `import stencil` finds the installed package (with its
    // extension module), not the source folder.
    let done = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"])
        .arg(&tests)
        .current_dir(&scratch)
        .env("STENCIL_BIN", env!("CARGO_BIN_EXE_stencil"))
        .env("STENCIL_REPO", &repo)
        .status()
        .expect("runs STENCIL_PYTHON");
    std::fs::remove_dir_all(&scratch).ok();
    assert!(done.success(), "the Python package's tests failed: {done}");
}
