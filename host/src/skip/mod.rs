//! Skip conditions: a small expression language over the facts the host measured
//! (product.md §4). **Data, never code**: a hand-written lexer and recursive-descent parser accept
//! only facts, literals, comparisons and `not`/`and`/`or`; names are resolved at parse time, so a
//! config with an unknown name, a call or a subscript fails at load time, and evaluation is pure.
//!
//! ```text
//! "not cuda.available"  ─lexer─► tokens ─parser─► Expr (ast::Node) ─eval(Facts, CaseContext)─► bool
//! ```
//!
//! The main types are [`Expr`] and [`SkipRule`]; a true check means **skip** (see `rule.rs`).

mod ast;
mod errors;
mod expr;
mod lexer;
mod parser;
mod rule;
mod types;
mod value;

pub use ast::{FIXED_FACTS, Fact};
pub use errors::{EvalError, ParseError};
pub use expr::{CaseContext, Expr};
pub use rule::{RuleOutcome, SkipRule, evaluate, explain, implicit_reason};
pub use types::{Ty, TypeError};
pub use value::Value;
