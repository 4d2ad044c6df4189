//! The fixed parts of the output, rendered from `templates/` with askama.

use askama::Template;

#[derive(Template)]
#[template(path = "prelude.py.jinja", escape = "none")]
pub struct Prelude<'a> {
    pub version: &'a str,
    pub source: &'a str,
    pub default_mvl: u32,
    pub uses: PreludeUses,
}

/// Which runtime helpers the generated code calls: the prelude carries only those.
#[derive(Debug, Default)]
pub struct PreludeUses {
    pub libdevice: bool,
    pub mvl: bool,
    pub autotune: bool,
    pub tuned_mvl: bool,
    pub fixed_mvl: bool,
    pub device: bool,
    pub shape: bool,
    pub maximum: bool,
    pub minimum: bool,
    pub fill_dtype: bool,
    pub masked_max: bool,
    pub masked_min: bool,
}

impl PreludeUses {
    /// Reads the uses off the generated text (kernels, launchers and host code).
    pub fn of(code: &str) -> Self {
        let calls = |name: &str| code.contains(&format!("{name}("));
        let tuned_mvl = calls("_appyc_tuned_mvl");
        let fixed_mvl = calls("_appyc_fixed_mvl");
        PreludeUses {
            libdevice: code.contains("libdevice."),
            mvl: tuned_mvl || fixed_mvl,
            autotune: calls("_appyc_autotune"),
            tuned_mvl,
            fixed_mvl,
            device: calls("_appyc_device"),
            shape: calls("_appyc_shape"),
            maximum: calls("_appyc_maximum"),
            minimum: calls("_appyc_minimum"),
            fill_dtype: calls("_appyc_fill_dtype"),
            masked_max: calls("_appyc_masked_max"),
            masked_min: calls("_appyc_masked_min"),
        }
    }
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
