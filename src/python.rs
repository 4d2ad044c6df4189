//! The Python binding (`--features python`): `appyc.compile(source, filename)` returns the
//! generated module's text, for build pipelines that drive the compiler from Python. Compile
//! errors raise `appyc.CompileError` carrying the rendered `file:line:col` diagnostic.

use crate::driver::{compile as compile_file, Emit, Options};
use crate::frontend::source::SourceFile;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pyo3::create_exception!(appyc, CompileError, PyValueError);

/// Compiles APPy-annotated NumPy source text to a Python module with Triton kernels.
#[pyfunction]
#[pyo3(signature = (source, filename = "<string>", emit = "python", mvl = None, auto_simd = true))]
fn compile(
    source: &str,
    filename: &str,
    emit: &str,
    mvl: Option<u32>,
    auto_simd: bool,
) -> PyResult<String> {
    let emit = match emit {
        "python" => Emit::Python,
        "lowered" => Emit::Lowered,
        other => {
            return Err(PyValueError::new_err(format!(
                "emit must be \"python\" or \"lowered\", not {other:?}"
            )))
        }
    };
    if let Some(m) = mvl {
        if m == 0 || !m.is_power_of_two() || m > 65536 {
            return Err(PyValueError::new_err(format!(
                "mvl must be a power of two up to 65536, not {m}"
            )));
        }
    }
    let file = SourceFile::new(filename, source);
    let opts = Options {
        emit,
        mvl,
        auto_simd,
        ..Options::default()
    };
    compile_file(&file, &opts).map_err(|d| CompileError::new_err(d.render(&file)))
}

#[pymodule]
fn appyc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add("CompileError", m.py().get_type::<CompileError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
