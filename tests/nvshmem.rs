//! `nvshmem.*` calls on the command line: the spec's checks and the context rules, each a
//! `file:line:col: error` with the source line and a caret (exit 1).

use std::process::{Command, Output};

fn appyc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("appyc runs")
}

fn expect_error(input: &str, position: &str, message: &str) -> String {
    let r = appyc(&[input, "-o", "-"]);
    let stderr = String::from_utf8_lossy(&r.stderr).to_string();
    assert_eq!(
        r.status.code(),
        Some(1),
        "exit status for {input}: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("{input}:{position}: error: {message}")),
        "diagnostic for {input}:\n{stderr}"
    );
    assert!(stderr.contains('^'), "no caret:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn unknown_call_suggests_the_close_name() {
    let e = expect_error(
        "tests/bad/nvshmem_unknown_call.py",
        "3:9",
        "unknown call `nvshmem.Putmen`",
    );
    assert!(e.contains("help: did you mean `nvshmem.Putmem`?"), "{e}");
}

#[test]
fn flags_must_be_allocated_as_64_bit_integers() {
    // int32 flags pass the CPU stand-in (it reads 64-bit words as the GPU does) but are
    // misaligned words on the GPU: only the compiler can tell.
    let e = expect_error(
        "tests/bad/nvshmem_int32_flags.py",
        "8:31",
        "the flag array `flags` is allocated as `np.int32`: NVSHMEM signals are 64-bit integers",
    );
    assert!(e.contains("dtype=np.int64"), "{e}");
}

#[test]
fn flags_of_int_int64_or_their_names_compile() {
    let bad = std::fs::read_to_string("tests/bad/nvshmem_int32_flags.py").expect("the bad input");
    for (k, dtype) in ["int", "np.int_", "\"int64\"", "numpy.int64"]
        .iter()
        .enumerate()
    {
        let path = std::env::temp_dir().join(format!("appyc_flags_{}_{k}.py", std::process::id()));
        std::fs::write(&path, bad.replace("np.int32", dtype)).expect("a scratch input");
        let r = appyc(&[path.to_str().expect("utf-8"), "-o", "-"]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "dtype={dtype}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
}

#[test]
fn wrong_arity_names_the_missing_argument() {
    let e = expect_error(
        "tests/bad/nvshmem_arity.py",
        "3:9",
        "`nvshmem.SignalWait` is missing the argument `signal`",
    );
    assert!(e.contains("SignalWait(flag, signal)"), "{e}");
}

#[test]
fn a_wait_outside_a_time_loop_is_an_error() {
    let e = expect_error(
        "tests/bad/nvshmem_wait_outside_loop.py",
        "6:5",
        "`nvshmem.SignalWait` outside a persistent cooperative kernel",
    );
    assert!(e.contains("can deadlock"), "{e}");
}

#[test]
fn a_loop_with_calls_that_cannot_be_persistent_says_why() {
    let e = expect_error(
        "tests/bad/nvshmem_host_code_in_loop.py",
        "8:9",
        "this loop holds `nvshmem` calls, so it must run as one persistent cooperative kernel",
    );
    assert!(e.contains("needs the host"), "{e}");
}

#[test]
fn samples_lower_puts_and_waits_to_nvshmem() {
    let r = appyc(&["samples/nvshmem_jacobi2d_l8.py", "-o", "-"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    for needle in [
        "\"nvshmemx_putmem_signal_nbi_block\"",
        "\"nvshmemx_iput64_block\"",
        "\"nvshmem_signal_wait_until\"",
        "_APPYC_NVSHMEM_SIGNAL_ADD = 10",
        "_APPYC_NVSHMEM_CMP_GE = 5",
        // Waits are bounded: each records its flag's element, the loop variable and its line
        // if it gives up, and clears `_live`, which ends the phase loop.
        "_live = _appyc_nvshmem_wait(flags, t, _sync, t, 0, 27)",
        "_live = _appyc_nvshmem_wait(flags + 1 * flags_stride0, t, _sync, t, 1 * flags_stride0, 28)",
        "    while _live & (_phase < _phase_hi):\n",
        "_live = _appyc_nvshmem_barrier(_sync, _arrived, t, 28)",
        "mov.u64 $0, %globaltimer;",
        "os.environ.get(\"APPYC_NVSHMEM_TIMEOUT\", \"60\")",
        "sites=(\"samples/nvshmem_jacobi2d_l8.py\", \"t\", {25: \"nvshmem.Putmem(",
        "launch_cooperative_grid=True",
        "os.environ[\"NVSHMEM_DISABLE_NVLS\"] = \"1\"",
        "flags = _appyc_nvshmem_symmetric(torch.zeros(4, dtype=torch.int64, device=A.device))",
        "me = _appyc_nvshmem_my_pe()",
    ] {
        assert!(out.contains(needle), "no {needle} in the output");
    }
    // The reference module's import is gone; only triton, torch and the standard library stay.
    assert!(
        !out.contains("from appyc_aot import"),
        "reference import left"
    );
    // The put of the first row goes out from program 0, the second from program 1.
    assert!(out.contains("if _pid == 0 % _nprog:"));
    assert!(out.contains("if _pid == 1 % _nprog:"));
    // Puts by loads and stores where every PE is reachable (the launch decides, a constexpr of
    // the kernel), NVSHMEM's calls otherwise.
    assert!(out.contains(
        "_phase_lo, _phase_hi, _sync, MVL: tl.constexpr, GRID_SYNC: tl.constexpr, P2P: tl.constexpr"
    ));
    assert!(out.contains("SIGNAL=True, BLOCKING=True, P2P=P2P)"));
    assert!(out.contains("\"nvshmem_ptr\""));
    assert!(out.contains("red.relaxed.sys.global.add.u64"));
    assert!(out.contains("P2P=p2p"));
    // Halos that peers put are loaded plain, like data other programs wrote: the wait's
    // acquire orders them (`.cg` cost 11 % against plain loads in the P2P kernel on 2 x H100,
    // bench/nvshmem_bandwidth.md).
    assert!(
        !out.contains("cache_modifier=\".cg\""),
        "a .cg load in Listing 8"
    );
    // A hand-written kernel keeps the runtime's default register cap.
    assert!(!out.contains("maxnreg=_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D"));
}

#[test]
fn a_distributed_loop_launches_under_its_own_register_cap() {
    // `#pragma distribute`'s SPMD kernel over 2-D regions keeps fewer registers live than
    // Listing 8's, and under the cap of 80 ptxas issued its sweeps' loads all at once
    // (bench/nvshmem_bandwidth.md, call 7): its launch names the distributed cap; the
    // single-GPU launch beside it has none, nor has the 3-D distributed loop (slower at 72).
    let r = appyc(&["samples/distribute_jacobi2d.py", "-o", "-"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(out.contains("_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D = 72"));
    let launch = out
        .split("def _launch_jacobi_2d_distributed(")
        .nth(1)
        .expect("the distributed launcher");
    let launch = &launch[..launch.find("\ndef ").unwrap_or(launch.len())];
    assert!(
        launch.contains("maxnreg=_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D,\n    )"),
        "{launch}"
    );
    assert_eq!(
        out.matches("maxnreg=_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D,")
            .count(),
        1
    );
}

#[test]
fn process_grid_samples_put_columns_and_faces_as_strided_views() {
    let r = appyc(&["samples/nvshmem_jacobi2d_grid.py", "-o", "-"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    // The host helper that shapes the process grid stays a plain function the host code calls.
    assert!(out.contains("def process_grid_2d(npes):"));
    assert!(out.contains("    px, py = process_grid_2d(npes)"));
    // `A[1:M - 1, N - 1]` <- `A[1:M - 1, 1]`: one row of M-2 elements A_stride0 apart (an iput).
    assert!(out.contains(
        "_appyc_nvshmem_put(A + 1 * A_stride0 + (N - 1) * A_stride1, A + 1 * A_stride0 + 1 * A_stride1, \
         1, (M - 1) - (1), 0, A_stride0, 0, A_stride0, flags + 2 * flags_stride0, left,"
    ));
    // Four puts in a row go out from programs 0..3.
    assert!(out.contains("if _pid == 3 % _nprog:"));

    let r = appyc(&["samples/nvshmem_jacobi3d_grid.py", "-o", "-"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(out.contains("    px, py, pz = process_grid_3d(npes)"));
    // The axis-0 plane is whole (dense at run time); the axis-2 face is L-2 rows of M-2
    // elements A_stride1 apart.
    assert!(out.contains(
        "_appyc_nvshmem_put(A + (L - 1) * A_stride0, A + 1 * A_stride0, A_shape1, A_shape2, \
         A_stride1, A_stride2, A_stride1, A_stride2, flags, b0,"
    ));
    assert!(out.contains(
        "(L - 1) - (1), (M - 1) - (1), A_stride0, A_stride1, A_stride0, A_stride1, \
         flags + 4 * flags_stride0, b2,"
    ));
    assert!(out.contains("if _pid == 5 % _nprog:"));
}

#[test]
fn a_distributed_3d_loop_keeps_the_default_register_cap() {
    // heat_3d distributed took 1481 us an iteration at 80 and 1661 at 72 (384^3 per GPU).
    let r = appyc(&["samples/distribute_stencils.py", "-o", "-"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    let launch = out
        .split("def _launch_heat_3d_distributed(")
        .nth(1)
        .expect("the 3-D distributed launcher");
    let launch = &launch[..launch.find("\ndef ").unwrap_or(launch.len())];
    assert!(launch.contains("sites=("), "{launch}");
    assert!(!launch.contains("maxnreg="), "{launch}");
}
