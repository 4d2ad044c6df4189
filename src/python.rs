//! The Python binding (`--features python`), the native part of the `appyc-aot` package
//! (`import appyc_aot`; python/appyc_aot/ adds `@jit`): `compile(source, filename)` returns
//! the generated module's text, and compile errors raise `CompileError` carrying the rendered
//! `file:line:col` diagnostic. `main(argv)` is the command line, for the package's `appyc`
//! script. The import name is not `appyc`: that is the original APPy's package on PyPI.

use crate::driver::{compile as compile_file, Emit, Options};
use crate::frontend::source::SourceFile;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pyo3::create_exception!(appyc_aot, CompileError, PyValueError);
pyo3::create_exception!(appyc_aot, CompileWarning, pyo3::exceptions::PyUserWarning);

/// Compiles APPy-annotated NumPy source text to a Python module with Triton kernels.
#[pyfunction]
#[pyo3(signature = (source, filename = "<string>", emit = "python", mvl = None, auto_simd = true, deny_warnings = false))]
fn compile(
    py: Python<'_>,
    source: &str,
    filename: &str,
    emit: &str,
    mvl: Option<u32>,
    auto_simd: bool,
    deny_warnings: bool,
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
        crate::config::check_mvl(m as i64)
            .map_err(|e| PyValueError::new_err(format!("mvl: {e}")))?;
    }
    let file = SourceFile::new(filename, source);
    let opts = Options {
        emit,
        mvl,
        auto_simd,
        deny_warnings,
        ..Options::default()
    };
    let out = compile_file(&file, &opts).map_err(|d| CompileError::new_err(d.render(&file)))?;
    let rendered: Vec<String> = out.warnings.iter().map(|w| w.render(&file)).collect();
    if out.denied(&opts) {
        return Err(CompileError::new_err(format!(
            "{}{} warning(s) denied (deny_warnings=True)",
            rendered.concat(),
            rendered.len()
        )));
    }
    let category = py.get_type::<CompileWarning>();
    for w in rendered {
        let msg = std::ffi::CString::new(w.trim_end().replace('\0', " "))
            .expect("no NUL left in the message");
        PyErr::warn(py, &category, &msg, 1)?;
    }
    Ok(out.text)
}

/// Runs the command line on `argv` (program name first); returns its exit status.
#[pyfunction]
fn main(argv: Vec<String>) -> u8 {
    let code = crate::cli::main(argv);
    // Rust's buffered standard output is not flushed when the Python process exits.
    use std::io::Write;
    let _ = std::io::stdout().flush();
    code
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add("CompileError", m.py().get_type::<CompileError>())?;
    m.add("CompileWarning", m.py().get_type::<CompileWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
