//! `#pragma` comments: found with the lexer's comment tokens, parsed and validated against the
//! embedded spec (`pragma-spec/pragmas.yaml`).

use super::source::{SourceFile, Span};
use super::spec::{spec, AppliesTo, Argument};
use crate::diag::{Diagnostic, Result};
use crate::ir::Width;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

pub use crate::ir::pragma::{DimPragma, Directive, Pragma, VectorProp};

impl Directive {
    pub fn applies_to(&self) -> AppliesTo {
        match self {
            Directive::Atomic | Directive::Dimensions(_) => AppliesTo::Assignment,
            _ => AppliesTo::Loop,
        }
    }
    pub fn spelling(&self) -> &'static str {
        match self {
            Directive::Dimensions(_) => "lo:up=>...",
            Directive::ParallelFor { .. } => "parallel for",
            Directive::Simd(_) => "simd",
            Directive::SequentialFor { .. } => "sequential for",
            Directive::Atomic => "atomic",
            Directive::Persistent => "persistent for",
        }
    }
}

/// Every `#pragma` comment of the file, parsed. Comments that do not start with `#pragma` are
/// ignored; a pragma that shares its line with code is an error (it could not say what it binds).
pub fn collect_pragmas(file: &SourceFile) -> Result<Vec<Pragma>> {
    let mut out = vec![];
    for tok in lex(&file.text, Mode::Module) {
        let Ok((Tok::Comment(text), range)) = tok else {
            continue;
        };
        let span: Span = range.into();
        let Some(body) = text.strip_prefix("#pragma") else {
            continue;
        };
        if !(body.is_empty() || body.starts_with(char::is_whitespace)) {
            continue; // `#pragmatic` is just a comment
        }
        let line = file.line_of(span.start as usize);
        let before = &file.text[file.line_start(line)..span.start as usize];
        if !before.trim().is_empty() {
            return Err(
                Diagnostic::error(span, "a pragma must be on a line of its own")
                    .with_label("this pragma follows code on the same line")
                    .with_help("move it to the line above the loop or assignment it annotates"),
            );
        }
        let body_start = span.start as usize + "#pragma".len();
        let directive = if body.contains("=>") {
            Directive::Dimensions(parse_dimensions(body, body_start)?)
        } else {
            parse_directive(body, body_start)?
        };
        out.push(Pragma {
            directive,
            span,
            line,
        });
    }
    Ok(out)
}

/// One `name` or `name(arg)` item of a pragma, with spans into the file.
#[derive(Debug)]
struct Item<'a> {
    name: &'a str,
    arg: Option<(&'a str, Span)>,
    span: Span,
}

fn tokenize(body: &str, base: usize) -> Result<Vec<Item<'_>>> {
    let bytes = body.as_bytes();
    let mut items = vec![];
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            let ch = body[i..].chars().next().unwrap_or(' ');
            return Err(Diagnostic::error(
                Span::new(base + i, base + i + ch.len_utf8()),
                format!("unexpected `{ch}` in pragma"),
            ));
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let name = &body[start..i];
        let mut arg = None;
        if i < bytes.len() && bytes[i] == b'(' {
            let close = body[i..].find(')').map(|e| i + e).ok_or_else(|| {
                Diagnostic::error(Span::new(base + i, base + i + 1), "unclosed `(` in pragma")
            })?;
            arg = Some((
                body[i + 1..close].trim(),
                Span::new(base + i + 1, base + close),
            ));
            i = close + 1;
        }
        items.push(Item {
            name,
            arg,
            span: Span::new(base + start, base + i),
        });
    }
    Ok(items)
}

fn parse_directive(body: &str, base: usize) -> Result<Directive> {
    let items = tokenize(body, base)?;
    let Some(first) = items.first() else {
        return Err(Diagnostic::error(
            Span::new(base - "#pragma".len(), base),
            "expected a directive after `#pragma`",
        )
        .with_help(format!("directives: {}", directive_names().join(", "))));
    };
    let spec = spec();
    // Multi-word directives ("parallel for") are matched before single words ("parallel").
    let two = items
        .get(1)
        .filter(|_| first.arg.is_none())
        .map(|second| format!("{} {}", first.name, second.name));
    let (dspec, used) = match two
        .as_deref()
        .and_then(|t| find_directive(t).map(|d| (d, 2)))
        .or_else(|| find_directive(first.name).map(|d| (d, 1)))
    {
        Some(found) => found,
        None => {
            let written = two
                .as_deref()
                .filter(|t| t.split(' ').nth(1) == Some("for"))
                .unwrap_or(first.name);
            let span = if written.contains(' ') {
                first.span.to(items[1].span)
            } else {
                first.span
            };
            let mut d = Diagnostic::error(span, format!("unknown directive `{written}`"));
            if let Some(s) = closest(written, all_directive_spellings()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            } else {
                d = d.with_help(format!("directives: {}", directive_names().join(", ")));
            }
            return Err(d);
        }
    };
    let head = &items[used - 1];
    let directive_arg = check_argument(
        dspec.argument,
        dspec.argument_rule.as_deref(),
        head,
        &format!("directive `{}`", dspec.name),
    )?;

    let mut simd_clause = None;
    let mut num_warps = None;
    let mut shared: Option<Vec<(String, Span)>> = None;
    for item in &items[used..] {
        let Some(cspec) = spec.clause_by_spelling(item.name) else {
            let mut d = Diagnostic::error(item.span, format!("unknown clause `{}`", item.name));
            let allowed: Vec<&str> = spec
                .clauses
                .iter()
                .filter(|c| dspec.clauses.contains(&c.name))
                .flat_map(|c| c.spellings())
                .collect();
            if let Some(s) = closest(item.name, allowed.iter().copied()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            } else if allowed.is_empty() {
                d = d.with_help(format!("`{}` takes no clauses", dspec.name));
            } else {
                d = d.with_help(format!(
                    "`{}` takes: {}",
                    dspec.name,
                    dspec.clauses.join(", ")
                ));
            }
            return Err(d);
        };
        if !dspec.clauses.contains(&cspec.name) {
            return Err(Diagnostic::error(
                item.span,
                format!("clause `{}` does not apply to `{}`", item.name, dspec.name),
            ));
        }
        if cspec.argument == Argument::Names {
            if shared.is_some() {
                return Err(Diagnostic::error(
                    item.span,
                    format!("clause `{}` given twice", cspec.name),
                ));
            }
            shared = Some(parse_names(item, &cspec.name)?);
            continue;
        }
        let arg = check_argument(
            cspec.argument,
            cspec.argument_rule.as_deref(),
            item,
            &format!("clause `{}`", cspec.name),
        )?;
        let slot = match cspec.name.as_str() {
            "simd" => &mut simd_clause,
            "num_warps" => &mut num_warps,
            other => unreachable!("spec clause `{other}` has no meaning in the compiler"),
        };
        if slot.is_some() {
            return Err(Diagnostic::error(
                item.span,
                format!("clause `{}` given twice", cspec.name),
            ));
        }
        *slot = Some(arg);
    }
    let width = |arg: Option<u32>| arg.map_or(Width::Mvl, Width::Fixed);
    Ok(match dspec.name.as_str() {
        "parallel for" => Directive::ParallelFor {
            simd: simd_clause.map(width),
            num_warps: num_warps.flatten(),
            shared: shared.unwrap_or_default(),
        },
        "simd" => Directive::Simd(width(directive_arg)),
        "sequential for" => Directive::SequentialFor {
            num_warps: num_warps.flatten(),
        },
        "atomic" => Directive::Atomic,
        "persistent for" => Directive::Persistent,
        other => unreachable!("spec directive `{other}` has no meaning in the compiler"),
    })
}

/// `lo:up=>prop,prop lo:up=>prop ...`: items are separated by spaces outside brackets.
fn parse_dimensions(body: &str, base: usize) -> Result<Vec<DimPragma>> {
    let mut items: Vec<(usize, &str)> = vec![];
    let (mut depth, mut start) = (0i32, None);
    for (i, c) in body
        .char_indices()
        .chain(std::iter::once((body.len(), ' ')))
    {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                items.push((s, &body[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    items
        .into_iter()
        .map(|(at, text)| parse_dimension(text, base + at))
        .collect()
}

fn parse_dimension(text: &str, at: usize) -> Result<DimPragma> {
    let span = Span::new(at, at + text.len());
    let Some((slice, props)) = text.split_once("=>") else {
        return Err(Diagnostic::error(
            span,
            format!("`{text}` is not of the form `lo:up=>properties`"),
        ));
    };
    let (lo, hi) = parse_slice(slice, at)?;
    let mut dim = DimPragma {
        lo,
        hi,
        parallel: false,
        vector: None,
        reduce: None,
        span,
    };
    let props_at = at + slice.len() + 2;
    if props.trim().is_empty() {
        return Err(Diagnostic::error(span, "expected properties after `=>`")
            .with_help("properties: parallel, simd, simd(N), le(N), reduce(op), reduce(op:var)"));
    }
    let items = tokenize(props, props_at)?;
    let spec = spec();
    for item in &items {
        let Some(pspec) = spec.property_by_spelling(item.name) else {
            let mut d = Diagnostic::error(
                item.span,
                format!("unknown dimension property `{}`", item.name),
            );
            let all = spec
                .dimension_pragma
                .properties
                .iter()
                .flat_map(|p| p.spellings());
            if let Some(s) = closest(item.name, all) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d);
        };
        let what = format!("property `{}`", pspec.name);
        let conflict = |other: &str| {
            Diagnostic::error(
                item.span,
                format!(
                    "conflicting properties on one dimension: `{}` and `{other}`",
                    pspec.name
                ),
            )
        };
        match pspec.name.as_str() {
            "parallel" => {
                check_argument(pspec.argument, None, item, &what)?;
                if dim.vector.is_some() {
                    return Err(conflict("simd/le"));
                }
                if dim.reduce.is_some() {
                    return Err(conflict("reduce"));
                }
                dim.parallel = true;
            }
            "simd" | "le" => {
                let n =
                    check_argument(pspec.argument, pspec.argument_rule.as_deref(), item, &what)?;
                if dim.parallel {
                    return Err(conflict("parallel"));
                }
                if dim.vector.is_some() {
                    return Err(conflict(if pspec.name == "le" { "simd" } else { "le" }));
                }
                dim.vector = Some(match (pspec.name.as_str(), n) {
                    ("le", Some(n)) => VectorProp::Le(n),
                    (_, n) => VectorProp::Simd(n.map_or(Width::Mvl, Width::Fixed)),
                });
            }
            "reduce" => {
                if dim.parallel {
                    return Err(conflict("parallel"));
                }
                let (op, var) = match item.arg {
                    None => (None, None),
                    Some((text, aspan)) => {
                        let (op, var) = match text.split_once(':') {
                            Some((op, var)) => (op.trim(), Some(var.trim().to_string())),
                            None => (text.trim(), None),
                        };
                        let op = match op {
                            "sum" | "+" => crate::ir::ReduceOp::Sum,
                            "max" => crate::ir::ReduceOp::Max,
                            "min" => crate::ir::ReduceOp::Min,
                            other => {
                                return Err(Diagnostic::error(
                                    aspan,
                                    format!("unknown reduction operator `{other}`"),
                                )
                                .with_help("reductions are sum, max and min"))
                            }
                        };
                        (Some(op), var)
                    }
                };
                dim.reduce = Some((op, var));
            }
            other => unreachable!("spec property `{other}` has no meaning in the compiler"),
        }
    }
    Ok(dim)
}

/// Parses `lo:up` (either bound may be missing) with the Python parser.
fn parse_slice(
    text: &str,
    at: usize,
) -> Result<(Option<crate::ir::Expr>, Option<crate::ir::Expr>)> {
    use rustpython_parser::Parse;
    let span = Span::new(at, at + text.len());
    let wrapped = format!("_[{text}]");
    let bad = || {
        Diagnostic::error(span, format!("`{text}` is not a slice `lo:up`"))
            .with_help("write the dimension as it is sliced in the statement, e.g. `1:N-1` or `:M`")
    };
    let expr = rustpython_parser::ast::Expr::parse(&wrapped, "<pragma>").map_err(|_| bad())?;
    let rustpython_parser::ast::Expr::Subscript(sub) = &expr else {
        return Err(bad());
    };
    let rustpython_parser::ast::Expr::Slice(sl) = sub.slice.as_ref() else {
        return Err(bad());
    };
    if sl.step.is_some() {
        return Err(bad());
    }
    // Spans inside the wrapped text point back into the pragma comment.
    let shift = |e: crate::ir::Expr| {
        e.rewrite(&mut |mut x| {
            x.span = Span::new(
                at + (x.span.start as usize).saturating_sub(2),
                at + (x.span.end as usize).saturating_sub(2),
            );
            x
        })
    };
    let lower = |e: &Option<Box<rustpython_parser::ast::Expr>>| {
        e.as_deref().map(|e| shift(super::lower::lower_expr(e)))
    };
    Ok((lower(&sl.lower), lower(&sl.upper)))
}

/// `shared(a, b)`: distinct Python names, at least one.
fn parse_names(item: &Item, clause: &str) -> Result<Vec<(String, Span)>> {
    let Some((text, span)) = item.arg else {
        return Err(Diagnostic::error(
            item.span,
            format!("clause `{clause}` needs variable names: `{clause}(x)`"),
        ));
    };
    // `text` is trimmed: find where it starts inside the parentheses for the spans.
    let raw_start = span.start as usize;
    let mut names: Vec<(String, Span)> = vec![];
    let mut offset = 0;
    for part in text.split(',') {
        let lead = part.len() - part.trim_start().len();
        let name = part.trim();
        let at = raw_start + offset + lead;
        let name_span = Span::new(at, at + name.len().max(1));
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_name {
            return Err(Diagnostic::error(
                name_span,
                format!("clause `{clause}` takes variable names, not `{name}`"),
            ));
        }
        if names.iter().any(|(n, _)| n == name) {
            return Err(Diagnostic::error(
                name_span,
                format!("`{name}` is named twice in `{clause}`"),
            ));
        }
        names.push((name.to_string(), name_span));
        offset += part.len() + 1;
    }
    Ok(names)
}

fn check_argument(
    kind: Argument,
    rule: Option<&str>,
    item: &Item,
    what: &str,
) -> Result<Option<u32>> {
    match (kind, item.arg) {
        (Argument::None, Some((_, span))) => {
            Err(Diagnostic::error(span, format!("{what} takes no argument")))
        }
        (Argument::Required, None) => Err(Diagnostic::error(
            item.span,
            format!("{what} needs an argument: `{}(N)`", item.name),
        )),
        (_, None) => Ok(None),
        (_, Some((text, span))) => {
            let n: u32 = text.parse().map_err(|_| {
                Diagnostic::error(
                    span,
                    format!("{what} needs an integer constant, not `{text}`"),
                )
            })?;
            let limit = rule
                .and_then(|r| r.rsplit(' ').next())
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(u32::MAX);
            if !n.is_power_of_two() || n > limit {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "{what}: {n} is not allowed ({})",
                        rule.unwrap_or("power of two")
                    ),
                )
                .with_help("Triton vectors (`tl.arange`) have power-of-two lengths"));
            }
            Ok(Some(n))
        }
    }
}

fn find_directive(spelling: &str) -> Option<&'static super::spec::DirectiveSpec> {
    spec()
        .directives
        .iter()
        .find(|d| d.spellings().any(|s| s == spelling))
}

fn directive_names() -> Vec<&'static str> {
    spec().directives.iter().map(|d| d.name.as_str()).collect()
}

fn all_directive_spellings() -> impl Iterator<Item = &'static str> {
    spec().directives.iter().flat_map(|d| d.spellings())
}

/// The closest candidate within a small edit distance, for "did you mean" suggestions.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = word.len().div_ceil(3).clamp(1, 3);
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Directive> {
        parse_directive(text, 7)
    }

    #[test]
    fn directives_and_clauses() {
        assert_eq!(
            parse(" parallel for").unwrap(),
            Directive::ParallelFor {
                simd: None,
                num_warps: None,
                shared: vec![],
            }
        );
        assert_eq!(
            parse(" parallel").unwrap(),
            Directive::ParallelFor {
                simd: None,
                num_warps: None,
                shared: vec![],
            }
        );
        assert_eq!(
            parse(" parallel for simd num_warps(8)").unwrap(),
            Directive::ParallelFor {
                simd: Some(Width::Mvl),
                num_warps: Some(8),
                shared: vec![],
            }
        );
        assert_eq!(
            parse(" simd(256)").unwrap(),
            Directive::Simd(Width::Fixed(256))
        );
        assert_eq!(
            parse(" block(64)").unwrap(),
            Directive::Simd(Width::Fixed(64))
        );
        assert_eq!(
            parse(" sequential for").unwrap(),
            Directive::SequentialFor { num_warps: None }
        );
        assert_eq!(parse(" atomic").unwrap(), Directive::Atomic);
    }

    #[test]
    fn shared_takes_distinct_names() {
        let Directive::ParallelFor { shared, .. } =
            parse(" parallel for simd shared(sum, step)").unwrap()
        else {
            panic!()
        };
        let names: Vec<&str> = shared.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["sum", "step"]);
        assert!(parse(" parallel for shared(a, a)")
            .unwrap_err()
            .message
            .contains("named twice"));
        assert!(parse(" parallel for shared(a[0])")
            .unwrap_err()
            .message
            .contains("takes variable names"));
        assert!(parse(" parallel for shared")
            .unwrap_err()
            .message
            .contains("needs variable names"));
        assert!(parse(" simd shared(a)").is_err());
    }

    #[test]
    fn typos_get_suggestions() {
        let e = parse(" paralel for").unwrap_err();
        assert_eq!(e.message, "unknown directive `paralel for`");
        assert_eq!(e.help, vec!["did you mean `parallel for`?"]);
        let e = parse(" atomc").unwrap_err();
        assert_eq!(e.help, vec!["did you mean `atomic`?"]);
        let e = parse(" parallel for smd").unwrap_err();
        assert_eq!(e.message, "unknown clause `smd`");
        assert_eq!(e.help, vec!["did you mean `simd`?"]);
    }

    #[test]
    fn bad_arguments() {
        assert!(parse(" simd(100)")
            .unwrap_err()
            .message
            .contains("100 is not allowed"));
        assert!(parse(" simd(n)")
            .unwrap_err()
            .message
            .contains("integer constant"));
        assert!(parse(" atomic(2)")
            .unwrap_err()
            .message
            .contains("takes no argument"));
        assert!(parse(" parallel for num_warps")
            .unwrap_err()
            .message
            .contains("needs an argument"));
        assert!(parse(" atomic simd")
            .unwrap_err()
            .message
            .contains("does not apply"));
        assert!(parse(" ")
            .unwrap_err()
            .message
            .contains("expected a directive"));
    }

    #[test]
    fn dimension_pragmas() {
        let d = parse_dimensions(
            " :M=>parallel 1:N-1=>simd(64) :K=>reduction(sum:y) 0:n=>le(16),reduce",
            0,
        )
        .unwrap();
        assert_eq!(d.len(), 4);
        assert!(d[0].parallel && d[0].lo.is_none());
        assert_eq!(d[1].vector, Some(VectorProp::Simd(Width::Fixed(64))));
        assert_eq!(
            d[2].reduce,
            Some((Some(crate::ir::ReduceOp::Sum), Some("y".to_string())))
        );
        assert_eq!(d[3].vector, Some(VectorProp::Le(16)));
        assert_eq!(d[3].reduce, Some((None, None)));
        let e = parse_dimensions(" :N=>le(12)", 0).unwrap_err();
        assert!(e.message.contains("12 is not allowed"), "{}", e.message);
        let e = parse_dimensions(" :N=>parallel,simd", 0).unwrap_err();
        assert!(
            e.message.contains("conflicting properties"),
            "{}",
            e.message
        );
        let e = parse_dimensions(" :N=>paralel", 0).unwrap_err();
        assert_eq!(e.help, vec!["did you mean `parallel`?"]);
        let e = parse_dimensions(" :N=>reduce(avg)", 0).unwrap_err();
        assert!(
            e.message.contains("unknown reduction operator"),
            "{}",
            e.message
        );
        let e = parse_dimensions(" N=>simd", 0).unwrap_err();
        assert!(e.message.contains("is not a slice"), "{}", e.message);
    }

    #[test]
    fn pragmas_found_in_comments_only() {
        let f = SourceFile::new(
            "t.py",
            "def f(a):\n    # a comment\n    #pragma parallel for\n    for i in range(3):\n        a[i] = '#pragma atomic'\n",
        );
        let p = collect_pragmas(&f).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].line, 3);
        let f = SourceFile::new("t.py", "x = 1  #pragma atomic\n");
        assert!(collect_pragmas(&f)
            .unwrap_err()
            .message
            .contains("line of its own"));
    }
}
