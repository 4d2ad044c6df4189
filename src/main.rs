//! The `appyc` command line.

use appyc::driver::{self, Emit, Options};
use appyc::frontend::source::SourceFile;
use clap::{Parser, ValueEnum};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
enum EmitArg {
    /// The Python module with Triton kernels and launchers.
    Python,
    /// The program after the high-level passes ("assembly APPy").
    Lowered,
}

/// Compile APPy-annotated NumPy programs to Triton.
#[derive(Parser)]
#[command(name = "appyc", version, about)]
struct Cli {
    /// Source files (`-` reads standard input).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Output file, or a directory when several inputs are given (`-` writes standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// What to write.
    #[arg(long, value_enum, default_value = "python")]
    emit: EmitArg,
    /// Fix the vector length MVL (a power of two) instead of autotuning it.
    #[arg(long, value_parser = parse_mvl)]
    mvl: Option<u32>,
    /// Do not vectorise slice statements inside parallel loops automatically.
    #[arg(long)]
    no_auto_simd: bool,
    /// Do not tune launch configurations on the GPU: each kernel runs its default (as with
    /// APPYC_AUTOTUNE=0 at run time).
    #[arg(long)]
    no_autotune: bool,
    /// Launch each region on its own instead of running eligible host loops as one persistent
    /// kernel (`#pragma persistent for` still asks for one).
    #[arg(long)]
    no_persistent: bool,
}

fn parse_mvl(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if n == 0 || !n.is_power_of_two() || n > 65536 {
        return Err(format!("{n} is not a power of two up to 65536"));
    }
    Ok(n)
}

enum Failure {
    /// Compile errors, already printed.
    Compile,
    /// Usage or I/O.
    Usage(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let opts = Options {
        emit: match cli.emit {
            EmitArg::Python => Emit::Python,
            EmitArg::Lowered => Emit::Lowered,
        },
        mvl: cli.mvl,
        auto_simd: !cli.no_auto_simd,
        autotune: !cli.no_autotune,
        persistent: !cli.no_persistent,
    };
    match run(&cli, &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Compile) => ExitCode::from(1),
        Err(Failure::Usage(msg)) => {
            eprintln!("appyc: error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli, opts: &Options) -> Result<(), Failure> {
    let several = cli.inputs.len() > 1;
    if several {
        match &cli.output {
            Some(dir) if dir.as_os_str() != "-" => {
                if !dir.is_dir() {
                    return Err(Failure::Usage(format!(
                        "with several inputs, -o must name an existing directory; `{}` is not one",
                        dir.display()
                    )));
                }
            }
            _ => return Err(Failure::Usage("several inputs need `-o DIR`".to_string())),
        }
    }
    let mut failed = false;
    for input in &cli.inputs {
        let (name, text) = read_input(input)?;
        let file = SourceFile::new(name, text);
        match driver::compile(&file, opts) {
            Ok(out) => {
                let dest = match (&cli.output, several) {
                    (Some(dir), true) => Some(dir.join(input.file_name().unwrap_or_default())),
                    (Some(o), false) if o.as_os_str() == "-" => None,
                    (Some(o), false) => Some(o.clone()),
                    (None, _) if input.as_os_str() == "-" => None,
                    (None, _) => Some(default_output(input)),
                };
                write_output(dest.as_deref(), &out)?;
            }
            Err(diag) => {
                eprint!("{}", diag.render(&file));
                failed = true;
            }
        }
    }
    if failed {
        Err(Failure::Compile)
    } else {
        Ok(())
    }
}

fn default_output(input: &Path) -> PathBuf {
    let stem = input.file_stem().unwrap_or_default().to_string_lossy();
    input.with_file_name(format!("{stem}_appyc.py"))
}

fn read_input(path: &Path) -> Result<(String, String), Failure> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = vec![];
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
        buf
    } else {
        std::fs::read(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?
    };
    let name = if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => {
            // Report like any other error: position, line and caret.
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let file = SourceFile::new(name, lossy.clone());
            let offset = String::from_utf8_lossy(&bytes[..at]).len();
            let d = appyc::diag::Diagnostic::error(
                appyc::frontend::source::Span::new(offset, offset + '\u{FFFD}'.len_utf8()),
                "source file is not valid UTF-8",
            );
            eprint!("{}", d.render(&file));
            Err(Failure::Compile)
        }
    }
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// failed run never leaves a truncated output.
fn write_output(dest: Option<&Path>, text: &str) -> Result<(), Failure> {
    let Some(dest) = dest else {
        std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Usage(format!("cannot write standard output: {e}")))?;
        return Ok(());
    };
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", dest.display())))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", dest.display())))?;
    // Temp files are created private; a generated module should be as readable as a source file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dest).map_or(0o644, |m| m.permissions().mode());
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode));
    }
    tmp.persist(dest)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {}", dest.display(), e.error)))?;
    Ok(())
}
