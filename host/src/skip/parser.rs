//! The recursive-descent parser of skip conditions. Grammar (docs/config-reference.md has it as
//! EBNF):
//!
//! ```text
//! expr    = or ;
//! or      = and { "or" and } ;
//! and     = not { "and" not } ;
//! not     = "not" not | cmp ;
//! cmp     = primary [ cmp_op primary ] ;          (no chaining: `a < b < c` is an error)
//! primary = literal | list | fact | "(" expr ")" ;
//! ```
//!
//! Names resolve to facts while parsing, so an unknown name, a call such as `open(...)`, an
//! attribute beyond a fact namespace or a subscript never survives to evaluation.

use super::ast::{CmpOp, FIXED_FACTS, Fact, Node};
use super::errors::ParseError;
use super::lexer::{Tok, Token, lex};
use super::value::Value;

/// Nesting limit for parentheses and `not`, so a hostile `((((...` cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Python words a reader of the QuASIM seed might try, each with what to write instead.
const FOREIGN_WORDS: [(&str, &str); 14] = [
    (
        "lambda",
        "no functions can be defined; write the condition itself",
    ),
    ("import", "nothing can be imported; use the facts"),
    ("is", "compare with `==` or `!=`"),
    ("if", "combine conditions with `and`/`or`"),
    ("else", "combine conditions with `and`/`or`"),
    ("for", "there are no loops; use `in [..]` for membership"),
    ("def", "no functions can be defined"),
    ("class", "no classes can be defined"),
    ("True", "booleans are `true` and `false`"),
    ("False", "booleans are `true` and `false`"),
    (
        "None",
        "an unset `env.NAME` is false; test it with `not env.NAME`",
    ),
    (
        "null",
        "an unset `env.NAME` is false; test it with `not env.NAME`",
    ),
    ("AND", "the operators are lowercase: `and`"),
    ("OR", "the operators are lowercase: `or`"),
];

pub(crate) fn parse(text: &str) -> Result<Node, ParseError> {
    let tokens = lex(text)?;
    let mut p = Parser {
        text,
        tokens,
        pos: 0,
        depth: 0,
    };
    if p.peek().tok == Tok::Eof {
        return Err(p.error(1, "empty expression", "write e.g. `not cuda.available`"));
    }
    let node = p.or()?;
    let t = p.peek().clone();
    match t.tok {
        Tok::Eof => Ok(node),
        Tok::RParen => Err(p.error(t.col, "unbalanced `)`", "remove it or add the matching `(`")),
        Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::In => Err(p.error(
            t.col,
            "chained comparison",
            "join comparisons with `and`, e.g. `a >= 1 and a <= 3`",
        )),
        Tok::LBracket => Err(p.error(
            t.col,
            "subscripts are not allowed",
            "facts are plain values; `env.NAME` reads one variable",
        )),
        Tok::LParen => Err(p.error(
            t.col,
            "function calls are not allowed",
            "facts are values, not functions",
        )),
        Tok::Ident(word) if FOREIGN_WORDS.iter().any(|(w, _)| *w == word) => {
            let hint = FOREIGN_WORDS
                .iter()
                .find(|(w, _)| *w == word)
                .map_or("", |(_, h)| h);
            Err(p.error(t.col, &format!("`{word}` is not allowed"), hint))
        }
        other => Err(p.error(
            t.col,
            &format!("unexpected {}", other.describe()),
            "join conditions with `and` / `or`",
        )),
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn error(&self, column: usize, message: &str, hint: &str) -> ParseError {
        ParseError {
            message: message.to_string(),
            column,
            expression: self.text.to_string(),
            hint: hint.to_string(),
        }
    }

    fn enter(&mut self, col: usize) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                col,
                &format!("expression nests deeper than {MAX_DEPTH} levels"),
                "simplify the condition",
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Node, ParseError> {
        let mut lhs = self.and()?;
        while self.peek().tok == Tok::Or {
            self.bump();
            let rhs = self.and()?;
            lhs = Node::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Node, ParseError> {
        let mut lhs = self.not()?;
        while self.peek().tok == Tok::And {
            self.bump();
            let rhs = self.not()?;
            lhs = Node::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn not(&mut self) -> Result<Node, ParseError> {
        if self.peek().tok == Tok::Not {
            let col = self.bump().col;
            self.enter(col)?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Node::Not {
                inner: Box::new(inner),
                col,
            });
        }
        self.cmp()
    }

    fn cmp(&mut self) -> Result<Node, ParseError> {
        let lhs = self.primary()?;
        let t = self.peek().clone();
        let op = match t.tok {
            Tok::Eq => CmpOp::Eq,
            Tok::Ne => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            Tok::In => CmpOp::In,
            Tok::Not if self.tokens.get(self.pos + 1).map(|t| &t.tok) == Some(&Tok::In) => {
                self.bump();
                CmpOp::NotIn
            }
            _ => return Ok(lhs),
        };
        self.bump();
        let rhs = self.primary()?;
        Ok(Node::Cmp {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            col: t.col,
        })
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let t = self.bump();
        let col = t.col;
        match t.tok {
            Tok::Num(n) => Ok(Node::Lit {
                value: Value::Num(n),
                col,
            }),
            Tok::Str(s) => Ok(Node::Lit {
                value: Value::Str(s),
                col,
            }),
            Tok::True => Ok(Node::Lit {
                value: Value::Bool(true),
                col,
            }),
            Tok::False => Ok(Node::Lit {
                value: Value::Bool(false),
                col,
            }),
            Tok::LParen => {
                self.enter(col)?;
                let inner = self.or()?;
                self.depth -= 1;
                let close = self.bump();
                if close.tok != Tok::RParen {
                    return Err(self.error(
                        col,
                        "unbalanced `(`",
                        &format!(
                            "add the matching `)` (found {} at column {})",
                            close.tok.describe(),
                            close.col
                        ),
                    ));
                }
                Ok(inner)
            }
            Tok::LBracket => self.list(col),
            Tok::Ident(first) => self.fact(first, col),
            Tok::Eof => Err(self.error(
                col,
                "expression ends too early",
                "complete the condition after the last operator",
            )),
            Tok::RParen => {
                Err(self.error(col, "unbalanced `)`", "remove it or add the matching `(`"))
            }
            other => Err(self.error(
                col,
                &format!(
                    "expected a fact, literal or `(`, found {}",
                    other.describe()
                ),
                "e.g. `not cuda.available`, `backend == \"cuda\"`",
            )),
        }
    }

    fn list(&mut self, open_col: usize) -> Result<Node, ParseError> {
        let mut items = Vec::new();
        loop {
            let t = self.bump();
            let item = match t.tok {
                Tok::RBracket if items.is_empty() => break,
                Tok::Num(n) => Value::Num(n),
                Tok::Str(s) => Value::Str(s),
                Tok::True => Value::Bool(true),
                Tok::False => Value::Bool(false),
                Tok::Eof => {
                    return Err(self.error(open_col, "unbalanced `[`", "close the list with `]`"));
                }
                other => {
                    return Err(self.error(
                        t.col,
                        &format!("list items must be literals, found {}", other.describe()),
                        "write e.g. `[\"fp16\", \"bf16\"]` or `[8, 16]`",
                    ));
                }
            };
            items.push(item);
            let sep = self.bump();
            match sep.tok {
                Tok::Comma if self.peek().tok == Tok::RBracket => {
                    self.bump();
                    break;
                }
                Tok::Comma => {}
                Tok::RBracket => break,
                Tok::Eof => {
                    return Err(self.error(open_col, "unbalanced `[`", "close the list with `]`"));
                }
                other => {
                    return Err(self.error(
                        sep.col,
                        &format!("expected `,` or `]` in list, found {}", other.describe()),
                        "separate list items with commas",
                    ));
                }
            }
        }
        Ok(Node::Lit {
            value: Value::List(items),
            col: open_col,
        })
    }

    fn fact(&mut self, first: String, col: usize) -> Result<Node, ParseError> {
        if let Some((_, hint)) = FOREIGN_WORDS.iter().find(|(w, _)| *w == first) {
            return Err(self.error(col, &format!("`{first}` is not allowed"), hint));
        }
        let mut parts = vec![first];
        while self.peek().tok == Tok::Dot {
            self.bump();
            let t = self.bump();
            match t.tok {
                Tok::Ident(s) => parts.push(s),
                other => {
                    return Err(self.error(
                        t.col,
                        &format!("expected a name after `.`, found {}", other.describe()),
                        &known_facts_hint(),
                    ));
                }
            }
        }
        let dotted = parts.join(".");
        match self.peek().tok {
            Tok::LParen => {
                let hint = if dotted.ends_with("is_available") {
                    "the seed's `torch.cuda.is_available()` is the fact `cuda.available`".into()
                } else {
                    format!("facts are values, not functions; {}", known_facts_hint())
                };
                return Err(self.error(
                    col,
                    &format!("function calls are not allowed: `{dotted}(...)`"),
                    &hint,
                ));
            }
            Tok::LBracket => {
                return Err(self.error(
                    self.peek().col,
                    &format!("subscripts are not allowed: `{dotted}[...]`"),
                    "read one environment variable as `env.NAME`, one parameter as `param.NAME`",
                ));
            }
            _ => {}
        }
        match Fact::from_path(&parts) {
            Some(fact) => Ok(Node::Fact { fact, col }),
            None => {
                let hint = match parts[0].as_str() {
                    "env" | "param" if parts.len() != 2 => {
                        format!("write `{}.NAME` with one name after the dot", parts[0])
                    }
                    "cuda" | "nvml" | "trt" | "os" | "arch" | "backend" | "precision"
                        if parts.len() > 1 =>
                    {
                        format!(
                            "attribute access beyond a fact is not allowed; {}",
                            known_facts_hint()
                        )
                    }
                    _ => known_facts_hint(),
                };
                Err(self.error(col, &format!("unknown fact `{dotted}`"), &hint))
            }
        }
    }
}

fn known_facts_hint() -> String {
    let names: Vec<&str> = FIXED_FACTS.iter().map(|(n, _)| *n).collect();
    format!("known facts: {}, env.NAME, param.NAME", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(n: &Node) -> String {
        match n {
            Node::Lit { value, .. } => value.to_string(),
            Node::Fact { fact, .. } => fact.name(),
            Node::Not { inner, .. } => format!("(not {})", show(inner)),
            Node::And(a, b) => format!("({} and {})", show(a), show(b)),
            Node::Or(a, b) => format!("({} or {})", show(a), show(b)),
            Node::Cmp { op, lhs, rhs, .. } => {
                format!("({} {} {})", show(lhs), op.as_str(), show(rhs))
            }
        }
    }

    #[test]
    fn precedence_is_or_and_not_cmp() {
        let cases = [
            (
                "not cuda.available or backend == 'cpu' and os != \"linux\"",
                "((not cuda.available) or ((backend == \"cpu\") and (os != \"linux\")))",
            ),
            ("not backend == 'cuda'", "(not (backend == \"cuda\"))"),
            (
                "(not cuda.available or trt.available) and arch == 'x86_64'",
                "(((not cuda.available) or trt.available) and (arch == \"x86_64\"))",
            ),
            (
                "precision not in ['fp8', 'bf16',]",
                "(precision not in [\"fp8\", \"bf16\"])",
            ),
            ("not not env.CI", "(not (not env.CI))"),
            ("param.tile_size >= -8", "(param.tile_size >= -8)"),
            ("a_or_b", ""),
        ];
        for (src, want) in cases {
            if want.is_empty() {
                assert!(parse(src).is_err());
                continue;
            }
            assert_eq!(show(&parse(src).unwrap()), want, "{src}");
        }
    }

    #[test]
    fn rejects_code_with_located_errors() {
        for (src, col, msg) in [
            ("open('/etc/passwd')", 1, "function calls"),
            ("__import__('os').system('x')", 1, "function calls"),
            ("torch.cuda.is_available()", 1, "function calls"),
            ("cuda.available.real", 1, "unknown fact"),
            ("env['HOME']", 4, "subscripts"),
            ("os[0] == 'l'", 3, "subscripts"),
            ("lambda x: x", 1, "not allowed"),
            ("cuda.avail", 1, "unknown fact"),
            ("env.A.B", 1, "unknown fact"),
            ("(not cuda.available", 1, "unbalanced `(`"),
            ("not cuda.available)", 19, "unbalanced `)`"),
            ("1 < param.x < 3", 13, "chained"),
            ("os ==", 6, "ends too early"),
            ("", 1, "empty"),
            ("[1, os]", 5, "literals"),
            ("[1, 2", 1, "unbalanced `[`"),
            ("cuda.available True", 16, "not allowed"),
            ("cuda.available os", 16, "unexpected"),
            ("x is None", 1, "unknown fact"),
            ("backend is 'cuda'", 9, "not allowed"),
            ("True", 1, "not allowed"),
        ] {
            let e = parse(src).unwrap_err();
            assert_eq!(e.column, col, "{src}: {e}");
            assert!(e.message.contains(msg), "{src}: {e}");
            assert!(!e.hint.is_empty());
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("{}true{}", "(".repeat(1000), ")".repeat(1000));
        assert!(parse(&src).unwrap_err().message.contains("nests deeper"));
        let src = format!("{}true", "not ".repeat(1000));
        assert!(parse(&src).is_err());
    }
}
