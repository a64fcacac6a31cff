//! The lexer of the skip-condition language: turns `not cuda.available and backend == "cuda"` into
//! [`Token`]s with 1-based character columns. Anything outside the small grammar (arithmetic, `&&`,
//! `===`, `:` of a lambda, ...) is rejected here with a hint that names the allowed spelling.

use super::errors::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Num(f64),
    Str(String),
    And,
    Or,
    Not,
    In,
    True,
    False,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("name `{s}`"),
            Tok::Num(n) => format!("number `{n}`"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::And => "`and`".into(),
            Tok::Or => "`or`".into(),
            Tok::Not => "`not`".into(),
            Tok::In => "`in`".into(),
            Tok::True => "`true`".into(),
            Tok::False => "`false`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Dot => "`.`".into(),
            Tok::Eq => "`==`".into(),
            Tok::Ne => "`!=`".into(),
            Tok::Lt => "`<`".into(),
            Tok::Le => "`<=`".into(),
            Tok::Gt => "`>`".into(),
            Tok::Ge => "`>=`".into(),
            Tok::Eof => "end of expression".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    /// 1-based character column of the token's first character.
    pub col: usize,
}

/// Longest expression accepted; a skip condition is one line of logic, and the bound keeps
/// hostile input from costing anything.
pub(crate) const MAX_EXPR_CHARS: usize = 4096;

pub(crate) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let err = |column: usize, message: String, hint: &str| ParseError {
        message,
        column,
        expression: text.to_string(),
        hint: hint.to_string(),
    };
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_EXPR_CHARS {
        return Err(err(
            MAX_EXPR_CHARS + 1,
            format!(
                "expression is {} characters long (limit {MAX_EXPR_CHARS})",
                chars.len()
            ),
            "split the condition into several `skip_conditions` entries",
        ));
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        let next = chars.get(i + 1).copied();
        let push = |out: &mut Vec<Token>, tok: Tok| out.push(Token { tok, col });
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                i += 1;
            }
            '(' => {
                push(&mut out, Tok::LParen);
                i += 1;
            }
            ')' => {
                push(&mut out, Tok::RParen);
                i += 1;
            }
            '[' => {
                push(&mut out, Tok::LBracket);
                i += 1;
            }
            ']' => {
                push(&mut out, Tok::RBracket);
                i += 1;
            }
            ',' => {
                push(&mut out, Tok::Comma);
                i += 1;
            }
            '.' => {
                push(&mut out, Tok::Dot);
                i += 1;
            }
            '=' | '!' => {
                if next != Some('=') {
                    return Err(if c == '=' {
                        err(
                            col,
                            "`=` is not an operator".into(),
                            "compare with `==`; nothing can be assigned",
                        )
                    } else {
                        err(col, "`!` is not an operator".into(), "negate with `not`")
                    });
                }
                if chars.get(i + 2) == Some(&'=') {
                    let op = if c == '=' { "===" } else { "!==" };
                    let fix = if c == '=' { "==" } else { "!=" };
                    return Err(err(
                        col,
                        format!("`{op}` is not an operator"),
                        &format!("use `{fix}`"),
                    ));
                }
                push(&mut out, if c == '=' { Tok::Eq } else { Tok::Ne });
                i += 2;
            }
            '<' | '>' => {
                let (short, long) = if c == '<' {
                    (Tok::Lt, Tok::Le)
                } else {
                    (Tok::Gt, Tok::Ge)
                };
                if next == Some('=') {
                    push(&mut out, long);
                    i += 2;
                } else if next == Some(c) {
                    return Err(err(
                        col,
                        format!("`{c}{c}` (bit shift) is not an operator"),
                        "the operators are: not and or == != < <= > >= in",
                    ));
                } else {
                    push(&mut out, short);
                    i += 1;
                }
            }
            '&' | '|' => {
                let word = if c == '&' { "and" } else { "or" };
                let shown = if next == Some(c) {
                    format!("{c}{c}")
                } else {
                    c.to_string()
                };
                return Err(err(
                    col,
                    format!("`{shown}` is not an operator"),
                    &format!("use `{word}`"),
                ));
            }
            '"' | '\'' => {
                let (s, end) = lex_string(&chars, i).map_err(|(column, message)| {
                    err(
                        column,
                        message,
                        "close the string with the same quote it opened with",
                    )
                })?;
                push(&mut out, Tok::Str(s));
                i = end;
            }
            '-' if next.is_some_and(|d| d.is_ascii_digit()) => {
                let (n, end) = lex_number(&chars, i + 1)
                    .map_err(|m| err(col, m, "write numbers like `8`, `9.0` or `1e-3`"))?;
                push(&mut out, Tok::Num(-n));
                i = end;
            }
            d if d.is_ascii_digit() => {
                let (n, end) = lex_number(&chars, i)
                    .map_err(|m| err(col, m, "write numbers like `8`, `9.0` or `1e-3`"))?;
                push(&mut out, Tok::Num(n));
                i = end;
            }
            a if a.is_ascii_alphabetic() || a == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let tok = match word.as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "not" => Tok::Not,
                    "in" => Tok::In,
                    "true" => Tok::True,
                    "false" => Tok::False,
                    _ => Tok::Ident(word),
                };
                out.push(Token { tok, col });
            }
            '+' | '-' | '*' | '/' | '%' | '^' | '~' | '@' => {
                return Err(err(
                    col,
                    format!("`{c}`: arithmetic is not supported"),
                    "compare facts with literals, e.g. `cuda.compute_capability >= 8.0`",
                ));
            }
            ':' => {
                if let Some(t) = out.iter().find(|t| t.tok == Tok::Ident("lambda".into())) {
                    return Err(err(
                        t.col,
                        "`lambda` is not allowed".into(),
                        "no functions can be defined; write the condition itself",
                    ));
                }
                return Err(err(
                    col,
                    "`:` is not allowed (no lambdas, slices or dict literals)".into(),
                    "a condition is facts, literals, comparisons and not/and/or",
                ));
            }
            other => {
                return Err(err(
                    col,
                    format!("unexpected character `{other}`"),
                    "a condition is facts, literals, comparisons and not/and/or",
                ));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        col: chars.len() + 1,
    });
    Ok(out)
}

/// Reads a quoted string starting at `chars[start]` (the quote). Returns the value and the index
/// after the closing quote, or the column and message of the error.
fn lex_string(chars: &[char], start: usize) -> Result<(String, usize), (usize, String)> {
    let quote = chars[start];
    let mut s = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            c if c == quote => return Ok((s, i + 1)),
            '\\' => {
                let escaped = match chars.get(i + 1) {
                    Some('\\') => '\\',
                    Some('\'') => '\'',
                    Some('"') => '"',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some(other) => {
                        return Err((i + 1, format!("unknown escape `\\{other}` in string")));
                    }
                    None => break,
                };
                s.push(escaped);
                i += 2;
            }
            c => {
                s.push(c);
                i += 1;
            }
        }
    }
    Err((
        start + 1,
        format!("unterminated string (opened with {quote})"),
    ))
}

fn lex_number(chars: &[char], start: usize) -> Result<(f64, usize), String> {
    let mut i = start;
    let digits = |i: &mut usize| {
        while *i < chars.len() && (chars[*i].is_ascii_digit() || chars[*i] == '_') {
            *i += 1;
        }
    };
    digits(&mut i);
    if i < chars.len() && chars[i] == '.' && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
        i += 1;
        digits(&mut i);
    }
    if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
        let mut j = i + 1;
        if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
            j += 1;
        }
        if chars.get(j).is_some_and(|c| c.is_ascii_digit()) {
            i = j;
            digits(&mut i);
        }
    }
    let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
    if i < chars.len() && (chars[i].is_ascii_alphabetic() || chars[i] == '_') {
        return Err(format!(
            "malformed number `{}`",
            chars[start..=i].iter().collect::<String>()
        ));
    }
    text.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map(|n| (n, i))
        .ok_or_else(|| format!("malformed number `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn lexes_operators_names_and_literals() {
        assert_eq!(
            toks("not cuda.available and x>=9.5 or 'a\\'b' != \"c\" in [1, -2e3]"),
            vec![
                Tok::Not,
                Tok::Ident("cuda".into()),
                Tok::Dot,
                Tok::Ident("available".into()),
                Tok::And,
                Tok::Ident("x".into()),
                Tok::Ge,
                Tok::Num(9.5),
                Tok::Or,
                Tok::Str("a'b".into()),
                Tok::Ne,
                Tok::Str("c".into()),
                Tok::In,
                Tok::LBracket,
                Tok::Num(1.0),
                Tok::Comma,
                Tok::Num(-2000.0),
                Tok::RBracket,
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn columns_are_one_based_characters() {
        let t = lex("é == 'x'").unwrap_err();
        assert_eq!(t.column, 1);
        let t = lex("a <= 3").unwrap();
        assert_eq!(
            t.iter().map(|t| t.col).collect::<Vec<_>>(),
            vec![1, 3, 6, 7]
        );
    }

    #[test]
    fn rejects_foreign_operators_with_hints() {
        for (src, col, hint) in [
            ("a === b", 3, "`==`"),
            ("a !== b", 3, "`!=`"),
            ("a && b", 3, "`and`"),
            ("a || b", 3, "`or`"),
            ("!a", 1, "`not`"),
            ("a = 1", 3, "`==`"),
            ("a + 1", 3, "compare"),
            ("lambda: 1", 1, "no functions"),
            ("x: 1", 2, "condition"),
            ("a << 1", 3, "operators"),
        ] {
            let e = lex(src).unwrap_err();
            assert_eq!(e.column, col, "{src}: {e}");
            assert!(e.hint.contains(hint), "{src}: {}", e.hint);
        }
    }

    #[test]
    fn rejects_unterminated_strings_and_bad_numbers() {
        assert_eq!(lex("os == 'linux").unwrap_err().column, 7);
        assert!(
            lex("x == \"a")
                .unwrap_err()
                .message
                .contains("unterminated")
        );
        assert!(lex("x == 9abc").unwrap_err().message.contains("malformed"));
        assert!(lex(&"a".repeat(MAX_EXPR_CHARS + 1)).is_err());
    }
}
