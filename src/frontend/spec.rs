//! The embedded pragma specification (`pragma-spec/pragmas.yaml`).

use serde::Deserialize;
use std::sync::OnceLock;

const SPEC_YAML: &str = include_str!("../../pragma-spec/pragmas.yaml");

/// The syntax of a pragma line in EBNF (`pragma-spec/grammar.ebnf`), which the parser in
/// `pragma.rs` implements; the reference prints it.
pub const GRAMMAR: &str = include_str!("../../pragma-spec/grammar.ebnf");

#[derive(Debug, Deserialize)]
pub struct Spec {
    pub directives: Vec<DirectiveSpec>,
    pub clauses: Vec<ClauseSpec>,
    pub dimension_pragma: DimensionPragmaSpec,
}

#[derive(Debug, Deserialize)]
pub struct DimensionPragmaSpec {
    pub applies_to: AppliesTo,
    pub defaults: String,
    pub example: String,
    pub properties: Vec<ClauseSpec>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Argument {
    None,
    Optional,
    Required,
    /// A comma-separated list of variable names (`shared(a, b)`).
    Names,
    /// An operator, `:` and a comma-separated list of variable names (`reduction(+:s, t)`).
    #[serde(rename = "op_names")]
    OpNames,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AppliesTo {
    Loop,
    Assignment,
}

#[derive(Debug, Deserialize)]
pub struct DirectiveSpec {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub applies_to: AppliesTo,
    pub argument: Argument,
    #[serde(default)]
    pub argument_rule: Option<String>,
    #[serde(default)]
    pub clauses: Vec<String>,
    pub meaning: String,
    pub example: String,
}

#[derive(Debug, Deserialize)]
pub struct ClauseSpec {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub argument: Argument,
    #[serde(default)]
    pub argument_rule: Option<String>,
    pub meaning: String,
    /// For the reference (docs/pragmas.md); the unit test below requires one.
    #[serde(default)]
    pub example: String,
}

impl DirectiveSpec {
    pub fn spellings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

impl ClauseSpec {
    pub fn spellings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// The parsed spec. The YAML is part of the binary, so a parse failure is a build defect
/// (caught by the unit test below), not a user error.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| {
        serde_norway::from_str(SPEC_YAML).expect("embedded pragma-spec/pragmas.yaml is valid")
    })
}

impl Spec {
    pub fn directive(&self, name: &str) -> Option<&DirectiveSpec> {
        self.directives.iter().find(|d| d.name == name)
    }
    pub fn property_by_spelling(&self, spelling: &str) -> Option<&ClauseSpec> {
        self.dimension_pragma
            .properties
            .iter()
            .find(|c| c.spellings().any(|s| s == spelling))
    }
    pub fn clause_by_spelling(&self, spelling: &str) -> Option<&ClauseSpec> {
        self.clauses
            .iter()
            .find(|c| c.spellings().any(|s| s == spelling))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_and_is_consistent() {
        let s = spec();
        assert!(s.directives.len() >= 4);
        for d in &s.directives {
            for c in &d.clauses {
                assert!(
                    s.clauses.iter().any(|cs| &cs.name == c),
                    "directive `{}` lists unknown clause `{c}`",
                    d.name
                );
            }
            assert!(!d.example.trim().is_empty());
        }
        for c in s.clauses.iter().chain(&s.dimension_pragma.properties) {
            assert!(!c.example.trim().is_empty(), "`{}` has no example", c.name);
        }
        let names: Vec<&str> = s
            .dimension_pragma
            .properties
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["parallel", "simd", "le", "reduce"]);
    }
}
