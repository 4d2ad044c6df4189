//! Python printer of statements: a kernel as assembly APPy (`--emit lowered`: strip-mined
//! loops, vidx), over the expression printer `ir::python`.

use super::writer::Writer;
use crate::ir::python::{expr, width};
use crate::ir::*;

/// Prints statements as assembly APPy (the `--emit lowered` form).
pub fn stmts(w: &mut Writer, body: &[Stmt]) {
    for s in body {
        stmt(w, s);
    }
    if body.is_empty() {
        w.line("pass");
    }
}

fn stmt(w: &mut Writer, s: &Stmt) {
    match &s.kind {
        StmtKind::Assign {
            target,
            value,
            atomic,
        } => {
            if *atomic {
                w.line("#pragma atomic");
            }
            w.line(format!("{} = {}", expr(target), expr(value)));
        }
        StmtKind::AugAssign { target, op, value } => {
            w.line(format!("{} {}= {}", expr(target), op.python(), expr(value)))
        }
        StmtKind::For {
            var,
            range,
            body,
            kind,
            vector,
            ..
        } => {
            match kind {
                LoopKind::Parallel { simd: None } => w.line("#pragma parallel for"),
                LoopKind::Parallel { simd: Some(_) } => w.line("#pragma parallel for simd"),
                LoopKind::Sequential => w.line("#pragma sequential for"),
                LoopKind::Simd(_) => w.line("#pragma simd"),
                _ => {}
            }
            w.line(format!(
                "for {var} in range({}, {}, {}):",
                expr(&range.start),
                expr(&range.stop),
                expr(&range.step)
            ));
            w.indented(|w| {
                if let (Some(v), LoopKind::StripMined { width: wd, .. }) = (vector, kind) {
                    w.line(format!(
                        "{v} = appy.vidx({var}, {}, {})",
                        width(*wd),
                        expr(&range.stop)
                    ));
                }
                stmts(w, body);
            });
        }
        StmtKind::If { test, body, orelse } => {
            w.line(format!("if {}:", expr(test)));
            w.indented(|w| stmts(w, body));
            if !orelse.is_empty() {
                w.line("else:");
                w.indented(|w| stmts(w, orelse));
            }
        }
        StmtKind::HostBlock { what, body } => {
            w.line(format!("# {what}"));
            stmts(w, body);
        }
        StmtKind::While { test, body } => {
            w.line(format!("while {}:", expr(test)));
            w.indented(|w| stmts(w, body));
        }
        StmtKind::Expr(e) => w.line(expr(e)),
        StmtKind::Pass => w.line("pass"),
        StmtKind::Barrier => w.line("appy.syncthreads()"),
        StmtKind::Other(what) => w.line(format!("# {what}")),
    }
}

/// A kernel as one assembly-APPy loop nest.
pub fn kernel(w: &mut Writer, k: &Kernel) {
    w.line(format!("# {}", k.name));
    let depth = k.dims.len();
    if depth == 0 {
        w.line("#pragma sequential for");
    }
    for d in &k.dims {
        let stmt = Stmt::new(
            StmtKind::For {
                var: d.var.clone(),
                range: d.range.clone(),
                body: vec![],
                kind: LoopKind::Parallel { simd: d.simd },
                vector: None,
                num_warps: None,
            },
            d.span,
        );
        // Print only the header of each nest level.
        let mut tmp = Writer::new(0);
        super::python::stmt(&mut tmp, &stmt);
        let text = tmp.finish();
        for l in text.lines().filter(|l| !l.trim_start().starts_with("pass")) {
            w.line(l);
        }
        w.indent();
        if let Some(wd) = d.simd {
            w.line(format!(
                "{0} = appy.vidx({0}, {1}, {2})",
                d.var,
                width(wd),
                expr(&d.range.stop)
            ));
        }
    }
    if depth == 0 {
        // The sequential loop is the body's only statement, minus its pragma line.
        let mut tmp = Writer::new(0);
        stmts(&mut tmp, &k.body);
        for l in tmp.finish().lines() {
            w.line(l);
        }
    } else {
        stmts(w, &k.body);
    }
    for _ in 0..depth {
        w.dedent();
    }
}
