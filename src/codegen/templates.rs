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
    pub tuning: bool,
    pub persistent: bool,
    /// A temporally blocked stencil loop (`codegen::blocked`).
    pub blocked: bool,
    /// A temporally blocked 2-D stencil loop (`codegen::triton::gluon2d`).
    pub blocked_2d: bool,
    /// A temporally blocked 3-D stencil loop (`codegen::triton::gluon3d`).
    pub blocked_3d: bool,
    /// A Gluon kernel: the module imports Gluon.
    pub gluon: bool,
    pub trip: bool,
    pub device: bool,
    pub shape: bool,
    pub maximum: bool,
    pub minimum: bool,
    pub fill_dtype: bool,
    /// A folded host statement's operand that may be an array (`passes::fold_host_update`).
    pub fold_operand: bool,
    /// An array element meets a float (`codegen/triton/expr.rs`, `Widen::NumpyFloat`).
    pub np_float: bool,
    pub masked_max: bool,
    pub masked_min: bool,
    pub lowest_like: bool,
    pub highest_like: bool,
    pub shared_scalar: bool,
    /// A persistent loop reduces a shared scalar (its buffer's slots).
    pub shared_slots: bool,
    /// A persistent loop keeps an integer register that starts from a host value of a type the
    /// compiler does not know (`_appyc_int_start`, `_appyc_int_like`).
    pub int_start: bool,
    pub dot: bool,
    pub split_rows: bool,
    /// A row block's `ROW_BLOCK` (`passes::row_block`).
    pub row_block: bool,
    /// A loop bound is a value loaded from an array (see `loads_bound_a_loop`).
    pub loaded_bound: bool,
    pub nvshmem: bool,
    /// A launcher is replayed (`_appyc_replayed`).
    pub replayed: bool,
}

impl PreludeUses {
    /// Reads the uses off the generated text (kernels, launchers and host code).
    pub fn of(code: &str) -> Self {
        let calls = |name: &str| code.contains(&format!("{name}("));
        let nvshmem = code.contains("_appyc_nvshmem_");
        PreludeUses {
            nvshmem,
            libdevice: code.contains("libdevice."),
            tuning: calls("_AppycTuning"),
            persistent: calls("_appyc_persistent") || nvshmem,
            blocked: calls("_appyc_blocked"),
            blocked_2d: calls("_appyc_blocked_2d"),
            blocked_3d: calls("_appyc_blocked_3d"),
            gluon: code.contains("@gluon.jit"),
            trip: calls("_appyc_trip"),
            device: calls("_appyc_device"),
            shape: calls("_appyc_shape"),
            maximum: calls("_appyc_maximum"),
            minimum: calls("_appyc_minimum"),
            fill_dtype: calls("_appyc_fill_dtype"),
            fold_operand: calls("_appyc_fold_operand"),
            np_float: calls("_appyc_np_float"),
            masked_max: calls("_appyc_masked_max"),
            masked_min: calls("_appyc_masked_min"),
            lowest_like: calls("_appyc_lowest_like"),
            highest_like: calls("_appyc_highest_like"),
            shared_scalar: calls("_appyc_shared_scalar") || calls("_appyc_shared_slots"),
            shared_slots: calls("_appyc_shared_slots"),
            int_start: calls("_appyc_int_start"),
            dot: calls("_appyc_dot_ok"),
            split_rows: calls("_appyc_row_split"),
            row_block: calls("_appyc_rows_a_program"),
            loaded_bound: loads_bound_a_loop(code),
            replayed: code.contains("@_appyc_replayed\n"),
        }
    }
}

/// `name = count`: the iterations of one loop.
pub struct Trip {
    pub name: String,
    pub count: String,
}

/// The tuning table of a kernel and how its launcher consults it.
pub struct Tuning {
    /// The module-level `_AppycTuning` object.
    pub table: String,
    /// A hash of the kernel's text: a changed kernel is tuned anew.
    pub hash: String,
    /// `(MVL, num_warps)` without tuning.
    pub default: String,
    /// The configurations tried, `()` for none (a fixed MVL).
    pub candidates: String,
    /// The key expression: size classes of extents, then dtypes.
    pub key: String,
    /// The arrays the kernel writes, restored after every trial.
    pub written: String,
    /// The launcher's own arguments, each followed by `, `, for the trial launches.
    pub args: String,
    /// The names a configuration unpacks into.
    pub unpack: String,
}

#[derive(Template)]
#[template(path = "launcher.py.jinja", escape = "none")]
pub struct Launcher<'a> {
    pub launcher: &'a str,
    pub kernel: &'a str,
    pub doc: String,
    pub params: Vec<String>,
    /// Checks and temporary allocations before the launch.
    pub prologue: Vec<String>,
    pub trips: Vec<Trip>,
    /// `n_i <= 0 or n_j <= 0` (a while loop's: `not (test)`): an empty iteration space
    /// launches nothing. Empty: no test.
    pub empty_test: String,
    /// Lines that launch another kernel and return when it applies (the tiled form).
    pub fast_path: Vec<String>,
    pub tuning: Option<Tuning>,
    /// The launch itself.
    pub launch: Vec<String>,
    /// What the launcher returns: the values of the shared scalars the region writes.
    pub result: Option<SharedResult>,
    /// Wrapped in `_appyc_replayed`: everything it decides follows from its arguments' types,
    /// shapes, strides and values (no temporaries, no result, no environment read).
    pub replayed: bool,
}

/// The values a launcher returns, after the launch and when nothing is launched.
pub struct SharedResult {
    /// `_s_shared.item(), ...`
    pub value: String,
    /// The arguments themselves (an empty loop changes nothing), or `()`: no row of values,
    /// where the call site binds them only when an iteration ran.
    pub unchanged: String,
}

/// Whether a loop's `range(...)` takes a run-time value (a scalar argument or a value loaded
/// from an array): Triton 3.6's interpreter holds such a scalar as a 1-element array and turns
/// it into an int through `int(array)`, which NumPy >= 2.4 refuses, so the prelude carries a
/// fix for the interpreter.
fn loads_bound_a_loop(code: &str) -> bool {
    code.lines()
        .filter_map(|l| l.trim_start().strip_prefix("for "))
        .filter_map(|l| l.split_once(" in range(").map(|(_, args)| args))
        .any(|args| {
            args.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| {
                    word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && word != "MVL"
                })
        })
}
