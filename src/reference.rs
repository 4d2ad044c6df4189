//! The pragma reference (docs/pragmas.md), generated from the embedded spec so that the
//! documentation cannot drift from what the compiler accepts. `appyc --print-reference` prints
//! it; tests/reference.rs compares it with the checked-in file.

use crate::frontend::spec::{spec, AppliesTo, Argument, ClauseSpec, DirectiveSpec, GRAMMAR};
use std::fmt::Write;

/// `name`, `name(N)` or `name[(N)]`.
fn with_argument(name: &str, argument: Argument) -> String {
    match argument {
        Argument::None => name.to_string(),
        Argument::Optional => format!("{name}[(N)]"),
        Argument::Required => format!("{name}(N)"),
        Argument::Names => format!("{name}(x, ...)"),
        Argument::OpNames => format!("{name}(op:x, ...)"),
    }
}

/// One paragraph: folded YAML keeps a trailing newline, and line breaks inside are spaces.
fn paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn example(out: &mut String, code: &str) {
    let _ = writeln!(out, "```python\n{}\n```\n", code.trim_end());
}

/// The list under a heading: `extra`, the other spellings, and the argument's rule (`N`, or
/// the whole argument when it is not a number).
fn facts(out: &mut String, aliases: &[String], rule: Option<(&str, Argument)>, extra: &[String]) {
    let mut lines: Vec<String> = extra.to_vec();
    if !aliases.is_empty() {
        let spelled: Vec<String> = aliases.iter().map(|a| format!("`{a}`")).collect();
        lines.push(format!("Also spelled: {}.", spelled.join(", ")));
    }
    match rule {
        Some((rule, Argument::Names | Argument::OpNames)) => {
            lines.push(format!("Argument: {rule}."))
        }
        Some((rule, _)) => lines.push(format!("`N`: {rule}.")),
        None => {}
    }
    for l in lines {
        let _ = writeln!(out, "- {l}");
    }
    out.push('\n');
}

fn directive(out: &mut String, d: &DirectiveSpec, clauses: &[ClauseSpec]) {
    let mut grammar = format!("#pragma {}", with_argument(&d.name, d.argument));
    for c in &d.clauses {
        if let Some(c) = clauses.iter().find(|cs| &cs.name == c) {
            let _ = write!(grammar, " [{}]", with_argument(&c.name, c.argument));
        }
    }
    let on = match d.applies_to {
        AppliesTo::Loop => "the `for ... in range(...)` loop on the next line",
        AppliesTo::Assignment => "the assignment on the next line",
    };
    let _ = writeln!(out, "### `{}`\n\n```\n{grammar}\n```\n", d.name);
    let mut extra = vec![format!("Applies to {on}.")];
    if !d.clauses.is_empty() {
        let names: Vec<String> = d
            .clauses
            .iter()
            .map(|c| format!("[`{c}`](#clause-{c})"))
            .collect();
        extra.push(format!("Clauses: {}.", names.join(", ")));
    }
    facts(
        out,
        &d.aliases,
        d.argument_rule.as_deref().map(|r| (r, d.argument)),
        &extra,
    );
    let _ = writeln!(out, "{}\n", paragraph(&d.meaning));
    example(out, &d.example);
}

fn clause(out: &mut String, c: &ClauseSpec, directives: &[DirectiveSpec]) {
    let _ = writeln!(
        out,
        "### <a id=\"clause-{0}\"></a>clause `{0}`\n\n```\n{1}\n```\n",
        c.name,
        with_argument(&c.name, c.argument)
    );
    let on: Vec<String> = directives
        .iter()
        .filter(|d| d.clauses.contains(&c.name))
        .map(|d| format!("`{}`", d.name))
        .collect();
    let extra = vec![format!("On: {}.", on.join(", "))];
    facts(
        out,
        &c.aliases,
        c.argument_rule.as_deref().map(|r| (r, c.argument)),
        &extra,
    );
    let _ = writeln!(out, "{}\n", paragraph(&c.meaning));
    example(out, &c.example);
}

fn property(out: &mut String, p: &ClauseSpec) {
    let arg = match (p.name.as_str(), p.argument) {
        // reduce's argument is an operator, not a number.
        ("reduce", Argument::Optional) => "reduce[(op[:var])]".to_string(),
        (name, a) => with_argument(name, a),
    };
    let _ = writeln!(out, "### property `{}`\n\n```\nlo:up=>{arg}\n```\n", p.name);
    let rule = if p.name == "reduce" {
        None
    } else {
        p.argument_rule.as_deref()
    };
    let mut extra = vec![];
    if p.name == "reduce" {
        if let Some(r) = &p.argument_rule {
            extra.push(format!("Argument: {r}."));
        }
    }
    facts(out, &p.aliases, rule.map(|r| (r, p.argument)), &extra);
    let _ = writeln!(out, "{}\n", paragraph(&p.meaning));
    example(out, &p.example);
}

/// The whole reference, in spec order.
pub fn markdown() -> String {
    let s = spec();
    let mut out = String::new();
    out.push_str(
        "<!-- Generated from pragma-spec/pragmas.yaml by `appyc --print-reference`; do not edit.\n     \
         Regenerate: APPYC_BLESS=1 cargo test --release --test reference -->\n\n",
    );
    out.push_str("# The APPy pragma language (as appyc accepts it)\n\n");
    out.push_str(
        "A pragma is a comment `#pragma ...` on its own line; it annotates the statement on the \
         next line. Directives and clauses not listed here are compile errors (with a suggestion \
         when a listed name is close). In the grammar lines, `[x]` is optional and `N` an integer \
         literal. Every example below is compiled and run against NumPy by the differential \
         tests (tests/difftest/test_reference.py), wrapped into a function whose parameters are \
         the names it reads.\n\n",
    );
    out.push_str("## Directives\n\n");
    for d in &s.directives {
        directive(&mut out, d, &s.clauses);
    }
    out.push_str("## Clauses\n\n");
    for c in &s.clauses {
        clause(&mut out, c, &s.directives);
    }
    let dp = &s.dimension_pragma;
    out.push_str("## Dimension pragmas\n\n```\n#pragma lo:up=>property[,property...] lo:up=>property[,property...] ...\n```\n\n");
    let on = match dp.applies_to {
        AppliesTo::Loop => "a loop",
        AppliesTo::Assignment => "a tensor assignment in sliced index notation",
    };
    let _ = writeln!(
        out,
        "Applies to {on} on the next line. Each `lo:up` names one dimension of the statement by a \
         slice that appears in it; a slice that differs from it by a constant (`2:N` against \
         `1:N-1`) is the same dimension, shifted. The order of the slices is the loop order, \
         outermost first; dimensions the pragma does not name follow with default properties.\n"
    );
    let _ = writeln!(out, "Defaults: {}\n", paragraph(&dp.defaults));
    example(&mut out, &dp.example);
    for p in &dp.properties {
        property(&mut out, p);
    }
    out.push_str(
        "## Grammar\n\nThe shape of every pragma line (pragma-spec/grammar.ebnf). appyc reads the \
         whole line: anything no rule takes (an unclosed `(`, an empty item, a trailing `,`) is \
         an error with a caret under the first unexpected character, and a clause or property \
         given twice is an error.\n\n",
    );
    let _ = writeln!(out, "```ebnf\n{}\n```\n", GRAMMAR.trim_end());
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_in_the_reference_with_its_example() {
        let text = markdown();
        let s = spec();
        for d in &s.directives {
            assert!(text.contains(&format!("### `{}`", d.name)), "{}", d.name);
            assert!(text.contains(d.example.trim_end()), "{}", d.name);
        }
        for c in &s.clauses {
            assert!(text.contains(&format!("clause `{}`", c.name)), "{}", c.name);
            assert!(text.contains(c.example.trim_end()), "{}", c.name);
        }
        for p in &s.dimension_pragma.properties {
            assert!(
                text.contains(&format!("property `{}`", p.name)),
                "{}",
                p.name
            );
            assert!(text.contains(p.example.trim_end()), "{}", p.name);
        }
        assert!(text.contains("#pragma parallel for [simd[(N)]] [num_warps(N)]"));
        assert!(text.contains("lo:up=>le(N)"));
        assert!(text.contains("dimension pragma = dimension"));
    }
}
