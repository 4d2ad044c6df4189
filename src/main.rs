//! The `appyc` binary: the command line lives in the library (`appyc::cli`), which the Python
//! package's `appyc` script calls as well.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(appyc::cli::main(std::env::args_os()))
}
