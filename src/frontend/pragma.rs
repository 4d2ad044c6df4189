//! `#pragma` comments: found with the lexer's comment tokens, parsed and validated against the
//! embedded spec (`pragma-spec/pragmas.yaml`).

use super::source::{SourceFile, Span};
use super::spec::{spec, AppliesTo, Argument};
use crate::diag::{Diagnostic, Result};
use crate::ir::Width;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

pub use crate::ir::pragma::{DimPragma, Directive, Pragma, ReductionVar, VectorProp};

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
            Directive::Distribute { .. } => "distribute",
        }
    }
}

/// The pragmas of a file, and the warnings found while looking for them.
#[derive(Debug, Default)]
pub struct Scan {
    pub pragmas: Vec<Pragma>,
    /// Comments that look like pragmas but are not (`#PRAGMA`, `# pragma`, `#pragmafor`).
    pub warnings: Vec<Diagnostic>,
}

/// Every `#pragma` comment of the file, parsed (see [`scan_pragmas`]; near-miss warnings are
/// dropped).
pub fn collect_pragmas(file: &SourceFile) -> Result<Vec<Pragma>> {
    scan_pragmas(file).map(|s| s.pragmas)
}

/// Every `#pragma` comment of the file, parsed, and a warning for each comment that looks like
/// a pragma but is not one. Comments that do not start with `#pragma` and a space are not
/// pragmas; a pragma that shares its line with code is an error (it could not say what it
/// binds).
pub fn scan_pragmas(file: &SourceFile) -> Result<Scan> {
    let mut out = Scan::default();
    for tok in lex(&file.text, Mode::Module) {
        let Ok((Tok::Comment(text), range)) = tok else {
            continue;
        };
        let span: Span = range.into();
        let body = text
            .strip_prefix("#pragma")
            .filter(|b| b.is_empty() || b.starts_with(char::is_whitespace));
        let Some(body) = body else {
            out.warnings.extend(near_miss(&text, span.start as usize));
            continue;
        };
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
        out.pragmas.push(Pragma {
            directive,
            span,
            line,
        });
    }
    Ok(out)
}

/// A warning when the comment `text` (at byte `at`) looks like a pragma but is not one:
/// `pragma` in another case, after spaces, or not followed by a space, and then a directive's
/// first word or a dimension pragma's `=>`. `#pragmatic` and `# pragma: no cover` stay quiet.
fn near_miss(text: &str, at: usize) -> Option<Diagnostic> {
    let after_hash = text.strip_prefix('#')?;
    let trimmed = after_hash.trim_start();
    let word = trimmed.get(..6)?;
    if !word.eq_ignore_ascii_case("pragma") {
        return None;
    }
    let rest = trimmed[6..].trim();
    let first: &str = rest
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let directive_word =
        |w: &str| all_directive_spellings().any(|s| s.split(' ').next().is_some_and(|d| d == w));
    let exact = directive_word(first);
    if !(exact || directive_word(&first.to_ascii_lowercase()) || rest.contains("=>")) {
        return None;
    }
    let rest = if exact || rest.contains("=>") {
        rest.to_string()
    } else {
        rest.to_ascii_lowercase()
    };
    let prefix_len = text.len() - trimmed.len() + 6;
    Some(
        Diagnostic::warning(
            Span::new(at, at + prefix_len),
            "this comment looks like a pragma but is not one: appyc ignores it",
        )
        .with_label("a pragma starts with `#pragma` and a space")
        .with_help(format!("write `#pragma {rest}`")),
    )
}

/// One `name` or `name(arg)` item of a pragma, with spans into the file.
#[derive(Debug)]
struct Item<'a> {
    name: &'a str,
    /// The text between the parentheses, without the spaces around it.
    arg: Option<(&'a str, Span)>,
    span: Span,
    /// Separated from the item before by `,` (not by spaces).
    after_comma: bool,
}

/// The parser of the grammar in pragma-spec/grammar.ebnf: a position in the pragma's text
/// after `#pragma`. Every character is consumed by a rule or reported, with the first
/// unexpected one under the caret.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    /// The file offset of `text`.
    base: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str, base: usize) -> Self {
        Cursor { text, pos: 0, base }
    }
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }
    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }
    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }
    /// Skips spaces and tabs; whether there were any.
    fn skip_ws(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
        self.pos > start
    }
    fn span(&self, from: usize, to: usize) -> Span {
        Span::new(self.base + from, self.base + to)
    }
    /// The character under the cursor (an empty span at the end of the line).
    fn here(&self) -> Span {
        let len = self.peek().map_or(0, char::len_utf8);
        self.span(self.pos, self.pos + len)
    }
    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the line".to_string(),
            Some(' ') => "a space".to_string(),
            Some('\t') => "a tab".to_string(),
            Some(c) => format!("`{c}`"),
        }
    }
    /// `expected X, found Y` at the cursor.
    fn expected(&self, what: &str) -> Diagnostic {
        Diagnostic::error(
            self.here(),
            format!("expected {what}, found {}", self.found()),
        )
    }
    /// `[A-Za-z_][A-Za-z0-9_]*`, or None (nothing consumed).
    fn name(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            return None;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.bump();
        }
        Some(&self.text[start..self.pos])
    }
    /// An argument word: `[A-Za-z0-9_+.*-]+` (an integer, a name or a reduction operator).
    fn word(&mut self) -> bool {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.' | '*'))
        {
            self.bump();
        }
        self.pos > start
    }

    /// `item = name [ "(" ws* argument ws* ")" ]`, the argument's shape given by `shape` for
    /// the name: a word, `op[:var]` (`reduce(sum:y)`), a comma-separated list of words
    /// (`shared(a, b)`) or `op:` and such a list (`reduction(+:s, t)`). `what` says what was
    /// expected when no name is here (`a clause after `,``).
    fn item(&mut self, what: &str, shape: impl Fn(&str) -> ArgShape) -> Result<Item<'a>> {
        let start = self.pos;
        let Some(name) = self.name() else {
            return Err(self.expected(what));
        };
        let mut arg = None;
        if self.peek() == Some('(') {
            self.bump();
            self.skip_ws();
            let arg_start = self.pos;
            if !self.word() {
                return Err(self.expected(&format!("an argument in `{name}(`")));
            }
            let mut arg_end = self.pos;
            self.skip_ws();
            let shape = shape(name);
            if shape == ArgShape::OpNames && self.peek() != Some(':') {
                return Err(self
                    .expected(&format!("`:` after the operator in `{name}(`"))
                    .with_help(format!("write `{name}(op:x)`, e.g. `{name}(+:s)`")));
            }
            let colon = matches!(shape, ArgShape::OpVar | ArgShape::OpNames | ArgShape::Any);
            if colon && self.peek() == Some(':') {
                self.bump();
                self.skip_ws();
                if !self.word() {
                    return Err(self.expected(&format!("a name after `:` in `{name}(`")));
                }
                arg_end = self.pos;
                self.skip_ws();
            }
            let list = matches!(shape, ArgShape::Names | ArgShape::OpNames | ArgShape::Any);
            while list && self.peek() == Some(',') {
                self.bump();
                self.skip_ws();
                if !self.word() {
                    return Err(self.expected(&format!("a name after `,` in `{name}(`")));
                }
                arg_end = self.pos;
                self.skip_ws();
            }
            if self.peek() != Some(')') {
                return Err(self
                    .expected(&format!("`)` to close `{name}(`"))
                    .with_label("the argument ends here"));
            }
            arg = Some((
                &self.text[arg_start..arg_end],
                self.span(arg_start, arg_end),
            ));
            self.bump();
        }
        Ok(Item {
            name,
            arg,
            span: self.span(start, self.pos),
            after_comma: false,
        })
    }
}

/// What may stand between an item's parentheses (see [`Cursor::item`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgShape {
    Word,
    OpVar,
    Names,
    /// `op:a, b` (`reduction`).
    OpNames,
    /// Whatever of the above is written: for a name the spec does not know, so that its error
    /// is `unknown clause` with a suggestion, not a syntax error inside its argument.
    Any,
}

/// The shape of a clause's or property's argument, from the spec.
fn arg_shape(c: &super::spec::ClauseSpec) -> ArgShape {
    if c.argument == Argument::Names {
        ArgShape::Names
    } else if c.argument == Argument::OpNames {
        ArgShape::OpNames
    } else if takes_op_var(c) {
        ArgShape::OpVar
    } else {
        ArgShape::Word
    }
}

/// `directive-pragma = item { ( ws+ | ws* "," ws* ) item } ws*`: a directive's words and its
/// clauses; an empty item (`,,`, a trailing `,`) is an error.
fn directive_items<'a>(cur: &mut Cursor<'a>) -> Result<Vec<Item<'a>>> {
    let mut items: Vec<Item<'a>> = vec![];
    cur.skip_ws();
    if cur.at_end() {
        return Ok(items);
    }
    let mut after_comma = false;
    loop {
        let what = if after_comma {
            "a clause after `,`"
        } else if items.is_empty() {
            "a directive"
        } else {
            "a clause"
        };
        let mut item = cur.item(what, |n| {
            spec()
                .clause_by_spelling(n)
                .map_or(ArgShape::Any, arg_shape)
        })?;
        item.after_comma = after_comma;
        items.push(item);
        let spaced = cur.skip_ws();
        if cur.at_end() {
            return Ok(items);
        }
        after_comma = cur.peek() == Some(',');
        if after_comma {
            cur.bump();
            cur.skip_ws();
        } else if !spaced {
            return Err(cur.expected("a space, `,` or the end of the line"));
        }
    }
}

fn parse_directive(body: &str, base: usize) -> Result<Directive> {
    let items = directive_items(&mut Cursor::new(body, base))?;
    let Some(first) = items.first() else {
        return Err(Diagnostic::error(
            Span::new(base - "#pragma".len(), base),
            "expected a directive after `#pragma`",
        )
        .with_help(format!("directives: {}", directive_names().join(", "))));
    };
    // Multi-word directives ("parallel for") are matched before single words ("parallel").
    let two = items
        .get(1)
        .filter(|second| first.arg.is_none() && !second.after_comma)
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
    if dspec.argument == Argument::Names {
        return distribute(dspec, head, &items[used..]);
    }
    let directive_arg = check_argument(
        dspec.argument,
        dspec.argument_rule.as_deref(),
        head,
        &format!("directive `{}`", dspec.name),
    )?;

    let mut clauses = Clauses::default();
    for item in &items[used..] {
        read_clause(&mut clauses, dspec, item)?;
    }
    clauses.check_names()?;
    let Clauses {
        simd: simd_clause,
        num_warps,
        tf32,
        shared,
        reduction,
    } = clauses;
    let width = |arg: Option<u32>| arg.map_or(Width::Mvl, Width::Fixed);
    Ok(match dspec.name.as_str() {
        "parallel for" => Directive::ParallelFor {
            simd: simd_clause.map(width),
            num_warps: num_warps.flatten(),
            shared: shared.unwrap_or_default(),
            reduction,
            tf32: tf32.is_some(),
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

/// `distribute(A, B) [axis(N)]`: the array names (at least one, each once) and the axis,
/// 0 unless given; only axis 0 is split for now.
fn distribute(
    dspec: &super::spec::DirectiveSpec,
    head: &Item,
    clauses: &[Item],
) -> Result<Directive> {
    let Some((text, span)) = head.arg else {
        return Err(Diagnostic::error(
            head.span,
            format!(
                "`{}` needs the arrays to split: `{}(A, B)`",
                dspec.name, dspec.name
            ),
        ));
    };
    let arrays = names_in(text, span.start as usize, &dspec.name)?;
    let mut axis: Option<u32> = None;
    for item in clauses {
        let Some(cspec) = spec().clause_by_spelling(item.name) else {
            return Err(unknown_clause(dspec, item));
        };
        if !dspec.clauses.contains(&cspec.name) {
            return Err(Diagnostic::error(
                item.span,
                format!("clause `{}` does not apply to `{}`", item.name, dspec.name),
            ));
        }
        if axis.is_some() {
            return Err(Diagnostic::error(
                item.span,
                format!("clause `{}` given twice", cspec.name),
            ));
        }
        let Some((text, at)) = item.arg else {
            return Err(Diagnostic::error(
                item.span,
                "clause `axis` needs an argument: `axis(0)`",
            ));
        };
        let n: u32 = text.parse().map_err(|_| {
            Diagnostic::error(
                at,
                format!("clause `axis` needs an integer constant, not `{text}`"),
            )
        })?;
        if n != 0 {
            return Err(Diagnostic::error(
                at,
                format!("`distribute` splits axis 0 (rows) only for now, not axis {n}"),
            )
            .with_help(
                "lay the arrays out so that the split axis comes first, or drop the clause",
            ));
        }
        axis = Some(n);
    }
    Ok(Directive::Distribute {
        arrays,
        axis: axis.unwrap_or(0),
    })
}

/// A directive's clauses as read so far (each `Some` once given).
#[derive(Default)]
struct Clauses {
    simd: Option<Option<u32>>,
    num_warps: Option<Option<u32>>,
    tf32: Option<Option<u32>>,
    shared: Option<Vec<(String, Span)>>,
    /// Every `reduction(op:x, ...)` clause's variables, in order (the clause may repeat).
    reduction: Vec<ReductionVar>,
}

impl Clauses {
    /// A name appears once among the reduction variables, and not also in `shared`.
    fn check_names(&self) -> Result<()> {
        for (k, r) in self.reduction.iter().enumerate() {
            if let Some(first) = self.reduction[..k].iter().find(|p| p.var == r.var) {
                return Err(Diagnostic::error(
                    r.span,
                    format!("`{}` is named in two reductions", r.var),
                )
                .with_label(format!(
                    "already in `reduction({}:...)`",
                    reduction_spelling(first.op)
                ))
                .with_help("a variable is reduced by one operator"));
            }
            if self.shared.iter().flatten().any(|(n, _)| *n == r.var) {
                return Err(Diagnostic::error(
                    r.span,
                    format!("`{}` is both `shared` and a `reduction` variable", r.var),
                )
                .with_help(format!(
                    "name it in one clause: `reduction({}:{})` already says how the workers share it",
                    reduction_spelling(r.op),
                    r.var
                )));
            }
        }
        Ok(())
    }
}

/// `unknown clause` with the closest spelling the directive takes.
fn unknown_clause(dspec: &super::spec::DirectiveSpec, item: &Item) -> Diagnostic {
    let spec = spec();
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
    d
}

/// Reads one clause of the directive `dspec` into `clauses`; a clause given twice is an error
/// (`reduction` may repeat: each names its own variables).
fn read_clause(
    clauses: &mut Clauses,
    dspec: &super::spec::DirectiveSpec,
    item: &Item,
) -> Result<()> {
    let Some(cspec) = spec().clause_by_spelling(item.name) else {
        return Err(unknown_clause(dspec, item));
    };
    if !dspec.clauses.contains(&cspec.name) {
        return Err(Diagnostic::error(
            item.span,
            format!("clause `{}` does not apply to `{}`", item.name, dspec.name),
        ));
    }
    let twice = || Diagnostic::error(item.span, format!("clause `{}` given twice", cspec.name));
    match cspec.argument {
        Argument::Names => {
            if clauses.shared.is_some() {
                return Err(twice());
            }
            clauses.shared = Some(parse_names(item, &cspec.name)?);
            return Ok(());
        }
        Argument::OpNames => {
            clauses
                .reduction
                .extend(parse_reduction(item, &cspec.name)?);
            return Ok(());
        }
        _ => {}
    }
    let arg = check_argument(
        cspec.argument,
        cspec.argument_rule.as_deref(),
        item,
        &format!("clause `{}`", cspec.name),
    )?;
    let slot = match cspec.name.as_str() {
        "simd" => &mut clauses.simd,
        "num_warps" => &mut clauses.num_warps,
        "tf32" => &mut clauses.tf32,
        other => unreachable!("spec clause `{other}` has no meaning in the compiler"),
    };
    if slot.is_some() {
        return Err(twice());
    }
    *slot = Some(arg);
    Ok(())
}

/// How a `reduction` clause spells the operator in messages (OpenMP's `+` for a sum).
pub fn reduction_spelling(op: crate::ir::ReduceOp) -> &'static str {
    match op {
        crate::ir::ReduceOp::Sum => "+",
        crate::ir::ReduceOp::Max => "max",
        crate::ir::ReduceOp::Min => "min",
    }
}

/// `reduction(op:a, b)`: the operator (`+`/`sum`, `max`, `min`) and distinct names, at least
/// one. `*`/`prod` is refused with the reason: no atomic multiply combines the workers' parts.
fn parse_reduction(item: &Item, clause: &str) -> Result<Vec<ReductionVar>> {
    let Some((text, span)) = item.arg else {
        return Err(Diagnostic::error(
            item.span,
            format!("clause `{clause}` needs an operator and variable names: `{clause}(+:x)`"),
        ));
    };
    // The grammar took `op`, `:` and at least one name.
    let colon = text.find(':').expect("the cursor read `op:`");
    let op_text = text[..colon].trim_end();
    let op_span = Span::new(span.start as usize, span.start as usize + op_text.len());
    let op = match op_text {
        "+" | "sum" => crate::ir::ReduceOp::Sum,
        "max" => crate::ir::ReduceOp::Max,
        "min" => crate::ir::ReduceOp::Min,
        "*" | "prod" => {
            return Err(Diagnostic::error(
                op_span,
                format!("`{clause}({op_text}:...)`: appyc has no product reduction across workers"),
            )
            .with_help(
                "Triton has no atomic multiply to combine the workers' partial products; \
                 multiply in a `sequential for` loop instead",
            ))
        }
        other => {
            return Err(
                Diagnostic::error(op_span, format!("unknown reduction operator `{other}`"))
                    .with_help(format!(
                        "`{clause}(op:x)` takes `+` (or `sum`), `max` or `min`"
                    )),
            )
        }
    };
    let names = names_in(&text[colon + 1..], span.start as usize + colon + 1, clause)?;
    Ok(names
        .into_iter()
        .map(|(var, span)| ReductionVar {
            op,
            var,
            span,
            start: None,
        })
        .collect())
}

/// `dimension-pragma = ws* dimension { ws+ dimension } ws*`.
fn parse_dimensions(body: &str, base: usize) -> Result<Vec<DimPragma>> {
    let mut cur = Cursor::new(body, base);
    let mut dims = vec![];
    cur.skip_ws();
    loop {
        dims.push(parse_dimension(&mut cur)?);
        let spaced = cur.skip_ws();
        if cur.at_end() {
            return Ok(dims);
        }
        if !spaced {
            return Err(cur.expected("a space or the end of the line"));
        }
    }
}

/// `dimension = slice "=>" property { "," property }`; the slice is the text up to `=>`, with
/// balanced brackets and no space outside them, parsed as Python.
fn parse_dimension(cur: &mut Cursor) -> Result<DimPragma> {
    let start = cur.pos;
    let (lo, hi) = dimension_slice(cur)?;
    cur.pos += 2;
    let items = property_items(cur)?;
    let mut dim = DimPragma {
        lo,
        hi,
        parallel: false,
        vector: None,
        reduce: None,
        span: cur.span(start, cur.pos),
    };
    let mut given: Vec<&str> = vec![];
    for item in &items {
        let pspec = property_spec(item)?;
        if given.contains(&pspec.name.as_str()) {
            return Err(Diagnostic::error(
                item.span,
                format!("property `{}` given twice", pspec.name),
            ));
        }
        given.push(&pspec.name);
        set_property(&mut dim, pspec, item)?;
    }
    Ok(dim)
}

/// The slice of a dimension, up to (not over) its `=>`, parsed.
fn dimension_slice(cur: &mut Cursor) -> Result<(Option<crate::ir::Expr>, Option<crate::ir::Expr>)> {
    let start = cur.pos;
    let mut depth = 0usize;
    loop {
        match cur.peek() {
            Some('=') if depth == 0 && cur.rest().starts_with("=>") => break,
            Some(c) if c.is_whitespace() && depth == 0 => {
                let slice = &cur.text[start..cur.pos];
                return Err(cur.expected(&format!("`=>` after the slice `{slice}`")));
            }
            None if depth > 0 => {
                return Err(cur.expected("a closing bracket in the slice"));
            }
            None => {
                let slice = &cur.text[start..cur.pos];
                return Err(if slice.is_empty() {
                    cur.expected("a dimension `lo:up=>properties`")
                } else {
                    cur.expected(&format!("`=>` after the slice `{slice}`"))
                });
            }
            Some('(' | '[') => depth += 1,
            Some(c @ (')' | ']')) => {
                if depth == 0 {
                    return Err(Diagnostic::error(
                        cur.here(),
                        format!("unexpected `{c}` in pragma"),
                    ));
                }
                depth -= 1;
            }
            Some(_) => {}
        }
        cur.bump();
    }
    let slice = &cur.text[start..cur.pos];
    if slice.is_empty() {
        return Err(cur.expected("a slice `lo:up` before `=>`"));
    }
    parse_slice(slice, cur.base + start)
}

/// The properties after `=>`, separated by `,`, up to a space or the end of the line.
fn property_items<'a>(cur: &mut Cursor<'a>) -> Result<Vec<Item<'a>>> {
    let is_reduce = |name: &str| {
        spec()
            .property_by_spelling(name)
            .map_or(ArgShape::Any, arg_shape)
    };
    let mut items = vec![cur.item("a property after `=>`", is_reduce)?];
    while cur.peek() == Some(',') {
        cur.bump();
        let mut item = cur.item("a property after `,`", is_reduce)?;
        item.after_comma = true;
        items.push(item);
    }
    if !(cur.at_end() || cur.peek().is_some_and(char::is_whitespace)) {
        return Err(cur.expected("`,`, a space or the end of the line"));
    }
    Ok(items)
}

/// The spec of a property, or an error with the closest spelling.
fn property_spec(item: &Item) -> Result<&'static super::spec::ClauseSpec> {
    let spec = spec();
    spec.property_by_spelling(item.name).ok_or_else(|| {
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
        d
    })
}

/// Sets the property `item` (of spec `pspec`) on `dim`; `parallel` excludes `simd`/`le` and
/// `reduce`, and `simd` and `le` exclude each other.
fn set_property(dim: &mut DimPragma, pspec: &super::spec::ClauseSpec, item: &Item) -> Result<()> {
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
            let n = check_argument(pspec.argument, pspec.argument_rule.as_deref(), item, &what)?;
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
            dim.reduce = Some(reduce_argument(item)?);
        }
        other => unreachable!("spec property `{other}` has no meaning in the compiler"),
    }
    Ok(())
}

/// `reduce`, `reduce(op)` or `reduce(op:var)`: the operator (sum, max, min) and the variable,
/// each if given.
fn reduce_argument(item: &Item) -> Result<(Option<crate::ir::ReduceOp>, Option<String>)> {
    let Some((text, aspan)) = item.arg else {
        return Ok((None, None));
    };
    let (op, var) = match text.split_once(':') {
        Some((op, var)) => (op.trim(), Some(var.trim().to_string())),
        None => (text.trim(), None),
    };
    let op = match op {
        "sum" | "+" => crate::ir::ReduceOp::Sum,
        "max" => crate::ir::ReduceOp::Max,
        "min" => crate::ir::ReduceOp::Min,
        other => {
            return Err(
                Diagnostic::error(aspan, format!("unknown reduction operator `{other}`"))
                    .with_help("reductions are sum, max and min"),
            )
        }
    };
    Ok((Some(op), var))
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
    let expr = super::depth::check_expr(expr, super::depth::MAX_DEPTH).map_err(|_| {
        Diagnostic::error(
            span,
            format!(
                "expression nested deeper than {} levels",
                super::depth::MAX_DEPTH
            ),
        )
    })?;
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
    names_in(text, span.start as usize, clause)
}

/// The comma-separated names of `text` (which starts at file offset `at`): Python names, each
/// once.
fn names_in(text: &str, at: usize, clause: &str) -> Result<Vec<(String, Span)>> {
    let mut names: Vec<(String, Span)> = vec![];
    let mut offset = 0;
    for part in text.split(',') {
        let lead = part.len() - part.trim_start().len();
        let name = part.trim();
        let start = at + offset + lead;
        let name_span = Span::new(start, start + name.len().max(1));
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

/// Whether the argument may be `op:var` (its rule in the spec says so).
fn takes_op_var(c: &super::spec::ClauseSpec) -> bool {
    c.argument_rule
        .as_deref()
        .is_some_and(|r| r.contains("op:var"))
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
    fn tf32_is_a_flag_of_parallel_for_only() {
        let Directive::ParallelFor { tf32, .. } = parse(" parallel for tf32").unwrap() else {
            panic!()
        };
        assert!(tf32);
        assert!(parse(" parallel for tf32(1)").is_err());
        assert!(parse(" sequential for tf32").is_err());
    }

    #[test]
    fn directives_and_clauses() {
        assert_eq!(
            parse(" parallel for").unwrap(),
            Directive::ParallelFor {
                simd: None,
                num_warps: None,
                shared: vec![],
                reduction: vec![],
                tf32: false,
            }
        );
        assert_eq!(
            parse(" parallel").unwrap(),
            Directive::ParallelFor {
                simd: None,
                num_warps: None,
                shared: vec![],
                reduction: vec![],
                tf32: false,
            }
        );
        assert_eq!(
            parse(" parallel for simd num_warps(8)").unwrap(),
            Directive::ParallelFor {
                simd: Some(Width::Mvl),
                num_warps: Some(8),
                shared: vec![],
                reduction: vec![],
                tf32: false,
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
        // The strict grammar stops at the `[`; a word that is no name is parse_names' to refuse.
        assert!(parse(" parallel for shared(a[0])")
            .unwrap_err()
            .message
            .contains("expected `)` to close `shared(`, found `[`"));
        assert!(parse(" parallel for shared(1x)")
            .unwrap_err()
            .message
            .contains("takes variable names"));
        assert!(parse(" parallel for shared(a,)")
            .unwrap_err()
            .message
            .contains("expected a name after `,` in `shared(`"));
        assert!(parse(" parallel for shared")
            .unwrap_err()
            .message
            .contains("needs variable names"));
        assert!(parse(" simd shared(a)").is_err());
    }

    /// The `(op, var)` pairs of a `parallel for`'s reduction clauses.
    fn reductions(body: &str) -> Vec<(crate::ir::ReduceOp, String)> {
        let Directive::ParallelFor { reduction, .. } =
            parse(body).unwrap_or_else(|e| panic!("{body}: {}", e.message))
        else {
            panic!("{body}: not a parallel for")
        };
        reduction.into_iter().map(|r| (r.op, r.var)).collect()
    }

    #[test]
    fn reduction_takes_every_operator_spelling() {
        use crate::ir::ReduceOp::{Max, Min, Sum};
        for (body, op) in [
            (" parallel for simd reduction(+:s)", Sum),
            (" parallel for reduction(sum:s)", Sum),
            (" parallel for reduction( + : s )", Sum),
            (" parallel for reduction(max:s)", Max),
            (" parallel for reduction(min:s)", Min),
            (" parallel reduction(min :s), simd", Min),
        ] {
            assert_eq!(reductions(body), [(op, "s".to_string())], "{body}");
        }
    }

    #[test]
    fn reduction_takes_several_variables_and_clauses() {
        use crate::ir::ReduceOp::{Max, Min, Sum};
        assert_eq!(
            reductions(
                " parallel for simd reduction(+:s, t) reduction(max:m) reduction(min: lo ,hi)"
            ),
            [
                (Sum, "s".to_string()),
                (Sum, "t".to_string()),
                (Max, "m".to_string()),
                (Min, "lo".to_string()),
                (Min, "hi".to_string()),
            ]
        );
        assert_eq!(
            reductions(" parallel for shared(step) reduction(+:s)"),
            [(Sum, "s".to_string())]
        );
        // The name's span points at the name.
        let Directive::ParallelFor { reduction, .. } =
            parse(" parallel for reduction(+:s, tt)").unwrap()
        else {
            panic!()
        };
        let text = "#pragma parallel for reduction(+:s, tt)";
        assert_eq!(
            &text[reduction[1].span.start as usize..reduction[1].span.end as usize],
            "tt"
        );
    }

    #[test]
    fn reduction_errors_say_what_is_wrong() {
        let cases: &[(&str, &str, usize)] = &[
            (
                " parallel for reduction(s)",
                "expected `:` after the operator in `reduction(`, found `)`",
                32,
            ),
            (
                " parallel for reduction(+ s)",
                "expected `:` after the operator in `reduction(`, found `s`",
                33,
            ),
            (
                " parallel for reduction(+:)",
                "expected a name after `:` in `reduction(`, found `)`",
                33,
            ),
            (
                " parallel for reduction(+: )",
                "expected a name after `:` in `reduction(`, found `)`",
                34,
            ),
            (
                " parallel for reduction(+:s,)",
                "expected a name after `,` in `reduction(`, found `)`",
                35,
            ),
            (
                " parallel for reduction(+:s,,t)",
                "expected a name after `,` in `reduction(`, found `,`",
                35,
            ),
            (
                " parallel for reduction()",
                "expected an argument in `reduction(`, found `)`",
                31,
            ),
            (
                " parallel for reduction",
                "clause `reduction` needs an operator and variable names: `reduction(+:x)`",
                21,
            ),
            (
                " parallel for reduction(avg:s)",
                "unknown reduction operator `avg`",
                31,
            ),
            (
                " parallel for reduction(-:s)",
                "unknown reduction operator `-`",
                31,
            ),
            (
                " parallel for reduction(*:s)",
                "`reduction(*:...)`: appyc has no product reduction across workers",
                31,
            ),
            (
                " parallel for reduction(prod:s)",
                "`reduction(prod:...)`: appyc has no product reduction across workers",
                31,
            ),
            (
                " parallel for reduction(+:s, s)",
                "`s` is named twice in `reduction`",
                36,
            ),
            (
                " parallel for reduction(+:s) reduction(max:s)",
                "`s` is named in two reductions",
                50,
            ),
            (
                " parallel for shared(s) reduction(+:s)",
                "`s` is both `shared` and a `reduction` variable",
                43,
            ),
            (
                " parallel for reduction(+:s[0])",
                "expected `)` to close `reduction(`, found `[`",
                34,
            ),
            (
                " parallel for reduction(+:1x)",
                "clause `reduction` takes variable names, not `1x`",
                33,
            ),
            (
                " simd reduction(+:s)",
                "clause `reduction` does not apply to `simd`",
                13,
            ),
            (
                " sequential for reduction(+:s)",
                "clause `reduction` does not apply to `sequential for`",
                23,
            ),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(body, message, col)| error_at(body) != (message.to_string(), *col))
            .map(|(body, _, _)| format!("{body:?} => {:?}", error_at(body)))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let e = parse(" parallel for reduction(*:s)").unwrap_err();
        assert!(e.help[0].contains("no atomic multiply"), "{:?}", e.help);
        let e = parse(" parallel for reduction(avg:s)").unwrap_err();
        assert_eq!(
            e.help,
            ["`reduction(op:x)` takes `+` (or `sum`), `max` or `min`"]
        );
    }

    #[test]
    fn a_misspelt_reduction_clause_gets_a_suggestion() {
        for body in [
            " parallel for reductoin(+:s)",
            " parallel for reducton(+:s)",
        ] {
            let e = parse(body).unwrap_err();
            assert!(
                e.message.starts_with("unknown clause"),
                "{body}: {}",
                e.message
            );
            assert_eq!(e.help, vec!["did you mean `reduction`?"], "{body}");
        }
        let e = parse(" parallel for reduce(+:s)").unwrap_err();
        assert_eq!(e.message, "unknown clause `reduce`");
        assert!(e.help[0].contains("reduction"), "{:?}", e.help);
        // An unknown property's argument is not parsed against a shape either.
        let e = parse_dimensions(" :N=>reduc(sum:y)", 7).unwrap_err();
        assert_eq!(e.help, vec!["did you mean `reduce`?"]);
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

    /// The error's message and its column in `#pragma<body>` (0-based, from `#`).
    fn error_at(body: &str) -> (String, usize) {
        let text = format!("#pragma{body}");
        let e = if body.contains("=>") {
            parse_dimensions(body, 7).map(|_| ()).unwrap_err()
        } else {
            parse_directive(body, 7).map(|_| ()).unwrap_err()
        };
        assert!(e.span.start as usize <= text.len(), "{body}");
        (e.message, e.span.start as usize)
    }

    #[test]
    fn strict_grammar_consumes_the_whole_line() {
        let cases: &[(&str, &str, usize)] = &[
            (
                " :M=>parallel,le(16 :N=>simd",
                "expected `)` to close `le(`, found `:`",
                27,
            ),
            (
                " :M=>parallel, :N=>simd",
                "expected a property after `,`, found a space",
                21,
            ),
            (
                " :M=>parallel,",
                "expected a property after `,`, found the end of the line",
                21,
            ),
            (
                " :M=>parallel,,simd",
                "expected a property after `,`, found `,`",
                21,
            ),
            (
                " :M=>,parallel",
                "expected a property after `=>`, found `,`",
                12,
            ),
            (
                " :M=>parallel,parallel",
                "property `parallel` given twice",
                21,
            ),
            (" :M=>simd,block", "property `simd` given twice", 17),
            (
                " :M=>reduce,reduction(sum)",
                "property `reduce` given twice",
                19,
            ),
            (
                " :M=>le(16)x",
                "expected `,`, a space or the end of the line, found `x`",
                18,
            ),
            (
                " :M =>parallel",
                "expected `=>` after the slice `:M`, found a space",
                10,
            ),
            (
                " :M=>parallel :N",
                "expected `=>` after the slice `:N`, found the end of the line",
                23,
            ),
            (
                " A[i:M=>parallel",
                "expected a closing bracket in the slice, found the end of the line",
                23,
            ),
            (" :M)=>parallel", "unexpected `)` in pragma", 10),
            (
                " =>parallel",
                "expected a slice `lo:up` before `=>`, found `=`",
                8,
            ),
            (" :M=>le()", "expected an argument in `le(`, found `)`", 15),
            (
                " :M=>reduce(sum:)",
                "expected a name after `:` in `reduce(`, found `)`",
                23,
            ),
            (
                " parallel for simd(",
                "expected an argument in `simd(`, found the end of the line",
                26,
            ),
            (
                " simd(4",
                "expected `)` to close `simd(`, found the end of the line",
                14,
            ),
            (" simd(4:x)", "expected `)` to close `simd(`, found `:`", 14),
            (
                " parallel for simd,",
                "expected a clause after `,`, found the end of the line",
                26,
            ),
            (
                " parallel for simd,,num_warps(4)",
                "expected a clause after `,`, found `,`",
                26,
            ),
            (" parallel for simd simd", "clause `simd` given twice", 26),
            (
                " parallel for simd block(4)",
                "clause `simd` given twice",
                26,
            ),
            (" parallel for )", "expected a clause, found `)`", 21),
            (
                " parallel for num_warps(4)x",
                "expected a space, `,` or the end of the line, found `x`",
                33,
            ),
            (" parallel,for", "unknown clause `for`", 17),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(body, message, col)| error_at(body) != (message.to_string(), *col))
            .map(|(body, _, _)| format!("{body:?} => {:?}", error_at(body)))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn strict_grammar_accepts_every_spelling() {
        for body in [
            " parallel for",
            " parallel",
            " parallel for simd",
            " parallel for simd(256) num_warps(8)",
            " parallel for simd, num_warps(8)",
            " parallel for simd( 64 )",
            " simd",
            " simd(32)",
            " block(64)",
            " sequential for num_warps(4)",
            " atomic",
            " persistent for",
            " persistent",
            "  parallel for  ",
            " parallel for simd shared(s)",
            " parallel for shared( s ,t,u )",
            " parallel for simd reduction(+:s)",
            " parallel for reduction(max:m, n) reduction(sum: s ), simd",
        ] {
            parse_directive(body, 7).unwrap_or_else(|e| panic!("{body}: {}", e.message));
        }
        for body in [
            " :M=>parallel :N=>simd",
            " 1:M-1=>parallel 1:N-1=>simd(64)",
            " :M=>parallel :N=>le(1024)",
            " :M=>parallel :N=>reduce(sum)",
            " :M=>parallel :N=>reduce(sum:y)",
            " :M=>parallel :N=>reduction(sum:y)",
            " :M=>parallel :N=>reduction(+:x)",
            " :M=>parallel :N=>reduce( max : y )",
            " :=>parallel :=>simd",
            " 1:-1=>parallel   1:-1=>simd ",
            " A[i]:A[i+1]=>simd(16)",
            " 0:n=>le(16),reduce",
        ] {
            parse_dimensions(body, 7).unwrap_or_else(|e| panic!("{body}: {}", e.message));
        }
    }

    #[test]
    fn near_misses_warn_with_the_spelling_to_use() {
        let f = SourceFile::new(
            "t.py",
            "#PRAGMA parallel for\n# pragma simd\n#pragmaparallel for\n#Pragma :M=>parallel\n\
             #  pragma ATOMIC\n# pragma: no cover\n#pragmatic\n# pragma once\n#pragma atomic\n",
        );
        let scan = scan_pragmas(&f).unwrap();
        assert_eq!(scan.pragmas.len(), 1);
        let helps: Vec<&str> = scan.warnings.iter().map(|w| w.help[0].as_str()).collect();
        assert_eq!(
            helps,
            [
                "write `#pragma parallel for`",
                "write `#pragma simd`",
                "write `#pragma parallel for`",
                "write `#pragma :M=>parallel`",
                "write `#pragma atomic`",
            ]
        );
        assert!(scan.warnings.iter().all(|w| w.is_warning()));
        let lines: Vec<usize> = scan
            .warnings
            .iter()
            .map(|w| f.line_of(w.span.start as usize))
            .collect();
        assert_eq!(lines, [1, 2, 3, 4, 5]);
        assert_eq!(f.slice(scan.warnings[4].span), "#  pragma");
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
