//! The `appyc` command line. `src/main.rs` calls [`main`]; so does the Python package's `appyc`
//! script (through the binding), so both are one program.
//!
//! A run is planned, compiled and only then written: every input is expanded into jobs (one
//! source, one destination), every job is compiled, and nothing is written unless all of them
//! compiled. `--check` and `--diff` compare the compiled text with the destinations instead.

use crate::config::{self, Root, Settings};
use crate::driver::{self, Emit, Options};
use crate::frontend::pragma::scan_pragmas;
use crate::frontend::source::SourceFile;
use clap::{Parser, ValueEnum};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
    /// Source files and directories (`-` reads standard input). A directory compiles every
    /// `.py` file under it that contains a pragma. Default: `source` in [tool.appyc].
    inputs: Vec<PathBuf>,
    /// Output file, or directory for several inputs or directories (`-` writes standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Output file names, `{stem}` being the source's (default `{stem}.py` in an output
    /// directory, `{stem}_appyc.py` next to the source).
    #[arg(long, value_name = "PATTERN")]
    naming: Option<String>,
    /// What to write.
    #[arg(long, value_enum)]
    emit: Option<EmitArg>,
    /// Fix the vector length MVL (a power of two) instead of autotuning it.
    #[arg(long, value_parser = parse_mvl)]
    mvl: Option<u32>,
    /// Do not vectorise slice statements inside parallel loops automatically.
    #[arg(long, overrides_with = "auto_simd")]
    no_auto_simd: bool,
    /// Vectorise slice statements automatically (the default; overrides the configuration).
    #[arg(long, overrides_with = "no_auto_simd")]
    auto_simd: bool,
    /// Do not tune launch configurations on the GPU: each kernel runs its default (as with
    /// APPYC_AUTOTUNE=0 at run time).
    #[arg(long)]
    no_autotune: bool,
    /// Launch each region on its own instead of running eligible host loops as one persistent
    /// kernel (`#pragma persistent for` still asks for one).
    #[arg(long)]
    no_persistent: bool,
    /// Warnings are errors: print them, exit 1 and write nothing.
    #[arg(long)]
    deny_warnings: bool,
    /// Write nothing; exit 1 and name every output that is stale or missing.
    #[arg(long)]
    check: bool,
    /// Write nothing; print a unified diff of every output that would change.
    #[arg(long)]
    diff: bool,
    /// Exit 1 when an output was written (created or changed), naming it; for pre-commit,
    /// which notices changed files but not new ones.
    #[arg(long)]
    exit_non_zero_on_write: bool,
    /// Name skipped files (no pragma) and every file written or up to date.
    #[arg(short, long)]
    verbose: bool,
    /// Read [tool.appyc] from this file instead of the nearest pyproject.toml.
    #[arg(long, value_name = "PYPROJECT", conflicts_with = "no_config")]
    config: Option<PathBuf>,
    /// Ignore pyproject.toml.
    #[arg(long)]
    no_config: bool,
    /// Print the pragma reference (docs/pragmas.md), generated from the embedded spec.
    #[arg(long, hide = true, exclusive = true)]
    print_reference: bool,
}

fn parse_mvl(s: &str) -> Result<u32, String> {
    let n: i64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    config::check_mvl(n)
}

enum Failure {
    /// Compile errors or stale outputs, already printed.
    Reported,
    /// Usage or I/O: printed after `appyc: error: `.
    Usage(String),
    /// Configuration: a rendered `file:line:col: error:` diagnostic; exit 2 like usage.
    Config(String),
}

type Run<T> = Result<T, Failure>;

fn usage<T>(msg: impl Into<String>) -> Run<T> {
    Err(Failure::Usage(msg.into()))
}

/// Runs the command line on `args` (the program name first); returns the exit status:
/// 0 ok, 1 compile errors or stale outputs under `--check`, 2 usage, configuration or I/O.
pub fn main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match run(&cli) {
        Ok(()) => 0,
        Err(Failure::Reported) => 1,
        Err(Failure::Usage(msg)) => {
            eprintln!("appyc: error: {msg}");
            2
        }
        Err(Failure::Config(rendered)) => {
            eprint!("{rendered}");
            2
        }
    }
}

/// The command line's settings; `None` where a flag was not given, so the configuration's
/// value stands.
fn cli_settings(cli: &Cli) -> Settings {
    Settings {
        source: (!cli.inputs.is_empty()).then(|| cli.inputs.clone()),
        output: cli.output.clone(),
        naming: cli.naming.clone(),
        emit: cli.emit.map(|e| match e {
            EmitArg::Python => Emit::Python,
            EmitArg::Lowered => Emit::Lowered,
        }),
        mvl: cli.mvl,
        auto_simd: if cli.no_auto_simd {
            Some(false)
        } else if cli.auto_simd {
            Some(true)
        } else {
            None
        },
        deny_warnings: cli.deny_warnings.then_some(true),
        autotune: cli.no_autotune.then_some(false),
        persistent: cli.no_persistent.then_some(false),
    }
}

/// The driver's options from the merged settings: the one place a setting reaches the
/// compiler.
fn driver_options(s: &Settings) -> Options {
    Options {
        emit: s.emit.unwrap_or(Emit::Python),
        mvl: s.mvl,
        auto_simd: s.auto_simd.unwrap_or(true),
        autotune: s.autotune.unwrap_or(true),
        persistent: s.persistent.unwrap_or(true),
        deny_warnings: s.deny_warnings.unwrap_or(false),
    }
}

fn run(cli: &Cli) -> Run<()> {
    if cli.print_reference {
        print!("{}", crate::reference::markdown());
        return Ok(());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::Usage(format!("no working directory: {e}")))?;
    let from_cli = cli_settings(cli);
    if let Some(n) = &from_cli.naming {
        config::check_naming(n).map_err(Failure::Usage)?;
    }
    // The root is searched from the inputs, not the working directory, so a file is named and
    // configured the same way from anywhere.
    let start = search_start(&cwd, from_cli.source.as_deref().unwrap_or(&[]));
    let root = config::find_root(&start);
    let pyproject = match (&cli.config, cli.no_config) {
        (_, true) => None,
        (Some(p), _) => Some(cwd.join(p)),
        (None, _) => root.as_ref().and_then(|r| r.pyproject.clone()),
    };
    let from_config = match &pyproject {
        Some(p) => config::load(p).map_err(|e| match e {
            config::LoadError::Unreadable(msg) => Failure::Usage(msg),
            config::LoadError::Invalid(rendered) => Failure::Config(rendered),
        })?,
        None => Settings::default(),
    };
    let settings = from_cli.over(from_config);
    if settings.source.is_none() {
        return usage("no inputs: name files or directories, or set `source` in [tool.appyc] of pyproject.toml");
    }
    let opts = driver_options(&settings);
    let (jobs, skipped_warnings) = plan(&settings, &cwd, root.as_ref(), cli.verbose)?;

    // Compile everything before writing anything: one failure leaves every output untouched.
    let mut outputs = Vec::with_capacity(jobs.len());
    let mut failed = false;
    let mut warned = skipped_warnings;
    for job in &jobs {
        match compile_job(job, &opts, cli.verbose) {
            Ok((text, warnings)) => {
                warned += warnings;
                outputs.push(text)
            }
            Err(Failure::Reported) => {
                failed = true;
                outputs.push(String::new());
            }
            Err(e) => return Err(e),
        }
    }
    if opts.deny_warnings && warned > 0 {
        eprintln!(
            "appyc: error: {warned} warning{} denied (--deny-warnings); nothing written",
            if warned == 1 { "" } else { "s" }
        );
        failed = true;
    }
    if failed {
        return Err(Failure::Reported);
    }

    if cli.check || cli.diff {
        return compare(cli, &jobs, &outputs);
    }
    let mut written = 0;
    for (job, text) in jobs.iter().zip(&outputs) {
        match &job.dest {
            Dest::Stdout => std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| Failure::Usage(format!("cannot write standard output: {e}")))?,
            Dest::File(path) => {
                // Only a regular file is read back: reading a pipe would wait for a writer.
                let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
                if regular && std::fs::read(path).ok().as_deref() == Some(text.as_bytes()) {
                    // Unchanged files keep their time stamps (make, pre-commit).
                    if cli.verbose {
                        eprintln!("appyc: {} is up to date", job.dest_shown);
                    }
                    continue;
                }
                write_output(path, text)?;
                written += 1;
                if cli.verbose || cli.exit_non_zero_on_write {
                    eprintln!("appyc: wrote {}", job.dest_shown);
                }
            }
        }
    }
    if cli.exit_non_zero_on_write && written > 0 {
        return Err(Failure::Reported);
    }
    Ok(())
}

/// `--check`/`--diff`: compares without writing. Names are root-relative, so the report does
/// not depend on where appyc runs either.
fn compare(cli: &Cli, jobs: &[Job], outputs: &[String]) -> Run<()> {
    let mut stale = 0;
    let mut out = String::new();
    for (job, text) in jobs.iter().zip(outputs) {
        let Dest::File(path) = &job.dest else {
            return usage("--check and --diff compare with output files, not standard output");
        };
        let on_disk = match std::fs::read(path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return usage(format!("cannot read `{}`: {e}", path.display())),
        };
        if on_disk.as_deref() == Some(text.as_str()) {
            if cli.verbose {
                eprintln!("appyc: {} is up to date", job.dest_shown);
            }
            continue;
        }
        stale += 1;
        if cli.check {
            let what = if on_disk.is_some() {
                "stale"
            } else {
                "missing"
            };
            eprintln!(
                "appyc: {} is {what} (compiled from {})",
                job.dest_shown, job.src_rel
            );
        }
        if cli.diff {
            let old = on_disk.as_deref().unwrap_or("");
            let from = if on_disk.is_some() {
                format!("a/{}", job.dest_shown)
            } else {
                "/dev/null".to_string()
            };
            let diff = similar::TextDiff::from_lines(old, text.as_str());
            out.push_str(
                &diff
                    .unified_diff()
                    .header(&from, &format!("b/{}", job.dest_shown))
                    .to_string(),
            );
        }
    }
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Failure::Usage(format!("cannot write standard output: {e}")))?;
    if cli.check && stale > 0 {
        eprintln!(
            "appyc: {stale} of {} output{} would change",
            jobs.len(),
            if jobs.len() == 1 { "" } else { "s" }
        );
        return Err(Failure::Reported);
    }
    Ok(())
}

/// Where the root search starts: the deepest directory holding every input.
fn search_start(cwd: &Path, inputs: &[PathBuf]) -> PathBuf {
    let mut common: Option<PathBuf> = None;
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        let abs = absolute(cwd, input);
        let dir = if abs.is_dir() {
            abs
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or(abs)
        };
        common = Some(match common {
            None => dir,
            Some(c) => c
                .ancestors()
                .find(|a| dir.starts_with(a))
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        });
    }
    common.unwrap_or_else(|| absolute(cwd, Path::new(".")))
}

/// An absolute path with symbolic links in its directories resolved (the file name itself is
/// kept), so `src/k.py`, `./src/k.py` and `/abs/src/k.py` compare equal.
fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let joined = cwd.join(p);
    if let Ok(c) = joined.canonicalize() {
        if c.is_dir() {
            return c;
        }
    }
    match (joined.parent(), joined.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .unwrap_or(joined.clone()),
        _ => joined,
    }
}

enum Dest {
    Stdout,
    File(PathBuf),
}

/// One source to compile and where its output goes.
struct Job {
    /// None: standard input.
    src: Option<PathBuf>,
    /// The source as diagnostics name it: as given on the command line (or in the config).
    src_shown: String,
    /// The source as `--check` names it: root-relative when under the root.
    src_rel: String,
    /// The source as the generated module names it: relative to the root, whatever the
    /// working directory and however the path was spelled.
    embedded: String,
    dest: Dest,
    /// The destination as `--check`, `--diff` and `-v` name it (root-relative when under it).
    dest_shown: String,
}

/// The jobs, and how many warnings were printed for files skipped for having no pragma (a
/// comment that looks like one but is not: `#PRAGMA parallel for`).
fn plan(s: &Settings, cwd: &Path, root: Option<&Root>, verbose: bool) -> Run<(Vec<Job>, usize)> {
    let inputs = s.source.clone().unwrap_or_default();
    let stdin = inputs.iter().any(|p| p.as_os_str() == "-");
    if stdin && inputs.len() > 1 {
        return usage("`-` (standard input) must be the only input");
    }
    let output = s.output.as_deref();
    let to_stdout = output.is_some_and(|o| o.as_os_str() == "-");
    let any_dir = inputs.iter().any(|p| cwd.join(p).is_dir());
    let dir_mode = match output {
        Some(o) if !to_stdout => {
            inputs.len() > 1
                || any_dir
                || cwd.join(o).is_dir()
                || o.as_os_str().to_string_lossy().ends_with('/')
        }
        _ => false,
    };
    if to_stdout && (inputs.len() > 1 || any_dir) {
        return usage("several inputs or a directory need `-o DIR`, not `-o -`");
    }
    let naming = s.naming.clone().unwrap_or_else(|| {
        if dir_mode {
            "{stem}.py"
        } else {
            "{stem}_appyc.py"
        }
        .to_string()
    });
    let shown = |abs: &Path, given: &Path| match root {
        Some(r) => match abs.strip_prefix(&r.dir) {
            Ok(rel) => slash(rel),
            Err(_) => given.display().to_string(),
        },
        None => given.display().to_string(),
    };
    let out_dir = output.map(|o| absolute(cwd, o));

    let mut jobs = vec![];
    let mut skipped_warnings = 0;
    for input in &inputs {
        if input.as_os_str() == "-" {
            let dest = match output {
                Some(o) if !to_stdout => Dest::File(cwd.join(o)),
                _ => Dest::Stdout,
            };
            let dest_shown = output.map_or("-".to_string(), |o| o.display().to_string());
            jobs.push(Job {
                src: None,
                src_shown: "<stdin>".into(),
                src_rel: "<stdin>".into(),
                embedded: "<stdin>".into(),
                dest,
                dest_shown,
            });
            continue;
        }
        let abs = absolute(cwd, input);
        if abs.is_dir() {
            let mut files = vec![];
            walk(&abs, out_dir.as_deref(), &mut files)
                .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", input.display())))?;
            for rel in files {
                let src_abs = abs.join(&rel);
                let given = input.join(&rel);
                if !has_pragma(&src_abs, &given, &mut skipped_warnings) {
                    if verbose {
                        eprintln!("appyc: skipped {} (no pragma)", given.display());
                    }
                    continue;
                }
                let name = file_name(&naming, &src_abs);
                let dest = match &out_dir {
                    Some(d) if dir_mode => d.join(rel.parent().unwrap_or(Path::new(""))).join(name),
                    _ => src_abs.with_file_name(name),
                };
                let embedded = embedded_name(root, &src_abs);
                let dest_given = match output {
                    Some(o) if dir_mode => o
                        .join(rel.parent().unwrap_or(Path::new("")))
                        .join(file_name(&naming, &src_abs)),
                    _ => given.with_file_name(file_name(&naming, &src_abs)),
                };
                jobs.push(Job {
                    dest_shown: shown(&dest, &dest_given),
                    src: Some(src_abs.clone()),
                    src_rel: shown(&src_abs, &given),
                    src_shown: given.display().to_string(),
                    embedded,
                    dest: Dest::File(dest),
                });
            }
            continue;
        }
        let name = file_name(&naming, &abs);
        let dest = match output {
            Some(_) if to_stdout => Dest::Stdout,
            Some(_) if dir_mode => Dest::File(out_dir.clone().unwrap_or_default().join(name)),
            Some(o) => Dest::File(cwd.join(o)),
            None => Dest::File(abs.with_file_name(name)),
        };
        let dest_shown = match &dest {
            Dest::Stdout => "-".to_string(),
            Dest::File(d) => shown(&absolute(cwd, d), d),
        };
        let embedded = embedded_name(root, &abs);
        jobs.push(Job {
            src_rel: shown(&abs, input),
            src: Some(abs),
            src_shown: input.display().to_string(),
            embedded,
            dest,
            dest_shown,
        });
    }
    if jobs.is_empty() && verbose {
        eprintln!("appyc: no file with a pragma");
    }
    // Two sources must not write one file, and no output may replace a source.
    let mut seen: Vec<(PathBuf, &str)> = vec![];
    for job in &jobs {
        let Dest::File(d) = &job.dest else { continue };
        let d = absolute(cwd, d);
        if let Some((_, other)) = seen.iter().find(|(p, _)| *p == d) {
            return usage(format!(
                "`{other}` and `{}` would both write `{}`",
                job.src_shown, job.dest_shown
            ));
        }
        if jobs.iter().any(|j| j.src.as_deref() == Some(d.as_path())) {
            return usage(format!(
                "the output `{}` of `{}` is itself a source",
                job.dest_shown, job.src_shown
            ));
        }
        seen.push((d, &job.src_shown));
    }
    Ok((jobs, skipped_warnings))
}

/// The name a generated module gives its source: relative to the root, or outside any project
/// the file name alone (the same whether the file came alone or in a tree).
fn embedded_name(root: Option<&Root>, abs: &Path) -> String {
    match root.and_then(|r| abs.strip_prefix(&r.dir).ok()) {
        Some(rel) => slash(rel),
        None => abs
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
    }
}

fn slash(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn file_name(pattern: &str, src: &Path) -> String {
    let stem = src.file_stem().unwrap_or_default().to_string_lossy();
    pattern.replace("{stem}", &stem)
}

/// The `.py` files under `dir`, relative to it, sorted; hidden directories, `__pycache__`,
/// symbolic links to directories and the output directory (when it is inside) are skipped.
fn walk(dir: &Path, skip: Option<&Path>, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    fn go(
        base: &Path,
        rel: &Path,
        skip: Option<&Path>,
        out: &mut Vec<PathBuf>,
    ) -> std::io::Result<()> {
        let here = base.join(rel);
        if skip.is_some_and(|s| s == here) && !rel.as_os_str().is_empty() {
            return Ok(());
        }
        let mut entries: Vec<_> = std::fs::read_dir(&here)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            let ty = e.file_type()?;
            let path = rel.join(&name);
            if ty.is_dir() {
                if !name_s.starts_with('.') && name_s != "__pycache__" {
                    go(base, &path, skip, out)?;
                }
            } else if name_s.ends_with(".py") && e.path().is_file() {
                out.push(path);
            }
        }
        Ok(())
    }
    go(dir, Path::new(""), skip, out)
}

/// Whether the file has a `#pragma` comment (by the lexer, so strings do not count). A file
/// that cannot be read or decoded is compiled anyway, to report why. A file skipped for having
/// none gets the warnings about comments that look like pragmas printed here (counted in
/// `warned`), since it is not compiled.
fn has_pragma(path: &Path, shown: &Path, warned: &mut usize) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return true;
    };
    match String::from_utf8(bytes) {
        Ok(text) => {
            let file = SourceFile::new(shown.display().to_string(), text);
            match scan_pragmas(&file) {
                Ok(scan) if scan.pragmas.is_empty() => {
                    for w in &scan.warnings {
                        eprint!("{}", w.render(&file));
                    }
                    *warned += scan.warnings.len();
                    false
                }
                _ => true,
            }
        }
        Err(e) => e.as_bytes().windows(7).any(|w| w == b"#pragma"),
    }
}

/// Compiles one job: its output and how many warnings it printed. Diagnostics, warnings too,
/// are printed against the source as the user named it; notes only under `-v`.
fn compile_job(job: &Job, opts: &Options, verbose: bool) -> Run<(String, usize)> {
    let text = read_input(job.src.as_deref(), &job.src_shown)?;
    let file = SourceFile::new(job.embedded.clone(), text);
    let shown = || SourceFile::new(job.src_shown.clone(), file.text.clone());
    match driver::compile(&file, opts) {
        Ok(out) => {
            let notes = if verbose { &out.notes[..] } else { &[] };
            if !out.warnings.is_empty() || !notes.is_empty() {
                let shown = shown();
                for w in out.warnings.iter().chain(notes) {
                    eprint!("{}", w.render(&shown));
                }
            }
            Ok((out.text, out.warnings.len()))
        }
        Err(diag) => {
            eprint!("{}", diag.render(&shown()));
            Err(Failure::Reported)
        }
    }
}

fn read_input(path: Option<&Path>, name: &str) -> Run<String> {
    let bytes = match path {
        None => {
            let mut buf = vec![];
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
            buf
        }
        Some(p) => {
            std::fs::read(p).map_err(|e| Failure::Usage(format!("cannot read `{name}`: {e}")))?
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            // Report like any other error: position, line and caret.
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let file = SourceFile::new(name, lossy);
            let offset = String::from_utf8_lossy(&bytes[..at]).len();
            let d = crate::diag::Diagnostic::error(
                crate::frontend::source::Span::new(offset, offset + '\u{FFFD}'.len_utf8()),
                "source file is not valid UTF-8",
            );
            eprint!("{}", d.render(&file));
            Err(Failure::Reported)
        }
    }
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// failed run never leaves a truncated output.
fn write_output(dest: &Path, text: &str) -> Run<()> {
    let cannot = |e: &dyn std::fmt::Display| {
        Failure::Usage(format!("cannot write `{}`: {e}", dest.display()))
    };
    // A device or pipe (`-o /dev/null`, a FIFO) is written in place: a rename would replace it
    // with a regular file, and there is no partial file to guard against.
    if std::fs::metadata(dest).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::write(dest, text).map_err(|e| cannot(&e));
    }
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| cannot(&e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| cannot(&e))?;
    tmp.write_all(text.as_bytes()).map_err(|e| cannot(&e))?;
    // Temp files are created private; a generated module should be as readable as a source file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dest).map_or(0o644, |m| m.permissions().mode());
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode));
    }
    tmp.persist(dest).map_err(|e| cannot(&e.error))?;
    Ok(())
}
