//! The fixed parts of the output, rendered from `templates/` with askama.

use askama::Template;

#[derive(Template)]
#[template(path = "prelude.py.jinja", escape = "none")]
pub struct Prelude<'a> {
    pub version: &'a str,
    pub source: &'a str,
    pub default_mvl: u32,
}

pub struct Trip {
    pub name: String,
    /// The prelude helper that counts the iterations.
    pub helper: &'static str,
    pub start: String,
    pub stop: String,
    pub step: String,
}

#[derive(Template)]
#[template(path = "launcher.py.jinja", escape = "none")]
pub struct Launcher<'a> {
    pub launcher: &'a str,
    pub kernel: &'a str,
    pub source: &'a str,
    pub line: usize,
    pub host_args: &'a [String],
    /// Checks and temporary allocations before the launch.
    pub prologue: Vec<String>,
    pub trips: Vec<Trip>,
    /// `n_i <= 0 or n_j <= 0`: an empty iteration space launches nothing.
    pub empty_test: String,
    pub grid: Vec<String>,
    pub call_args: Vec<String>,
    pub options: Vec<String>,
}
