//! Canonical JSON, byte-compatible with the seeds' `stable_json_dumps`
//! (`json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`), and the two
//! hashes built on it. Byte compatibility matters: a manifest hash computed by the Python tools
//! and by apex-host for the same inputs must be equal.
//!
//! - Object keys sorted by code point (Rust's `str` order is the same as Python's).
//! - Integers as integers; floats as Python's `repr`: the shortest round-trip digits, fixed
//!   notation with at least one decimal (`3.0`) when the decimal exponent is in `[-4, 16)`,
//!   otherwise `d.ddde±XX` (`1e-05`, `1.5e+16`).
//! - Strings escaped like Python's `ensure_ascii`: `\"`, `\\`, `\b \f \n \r \t`, every other
//!   character outside `' '..='~'` as lowercase `\uXXXX` (UTF-16 surrogate pairs above U+FFFF).

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use super::AttestError;

/// The canonical JSON text of `value`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Lowercase hex SHA-256 of the UTF-8 bytes of [`canonical_json`] (`hash_json_sha256`).
pub fn hash_json_sha256(value: &Value) -> String {
    hex(&Sha256::digest(canonical_json(value).as_bytes()))
}

/// Lowercase hex SHA-256 of a file's raw bytes, read in 1 MiB chunks, and its size.
pub fn hash_file_sha256(path: &Path) -> Result<(String, u64), AttestError> {
    let io = |source| AttestError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((hex(&hasher.finalize()), size))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else {
                // serde_json numbers are finite, so a float is always representable.
                out.push_str(&python_float_repr(n.as_f64().unwrap_or(0.0)));
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, &map[k]);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python's `repr(float)` for a finite `x`.
pub fn python_float_repr(x: f64) -> String {
    // `{:e}` without a precision prints Rust's shortest round-trip digits, e.g. `1.5e-7`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let (int_part, frac_part) = if exp >= 0 {
            let e = exp as usize + 1;
            if digits.len() > e {
                (digits[..e].to_string(), digits[e..].to_string())
            } else {
                (
                    format!("{digits}{}", "0".repeat(e - digits.len())),
                    String::new(),
                )
            }
        } else {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat((-exp - 1) as usize)),
            )
        };
        let frac = if frac_part.is_empty() {
            "0".to_string()
        } else {
            frac_part
        };
        format!("{sign}{int_part}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_match_python_repr() {
        // Each right-hand side is what CPython 3.11 prints for `repr(x)`.
        let cases = [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1.5e-7, "1.5e-07"),
            (123_456_789_012_345_678.0, "1.2345678901234568e+17"),
            (16.000000000000004, "16.000000000000004"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (0.1, "0.1"),
            (2.5e300, "2.5e+300"),
            (5e-324, "5e-324"),
            (1e22, "1e+22"),
            (12345.678, "12345.678"),
            (3.0, "3.0"),
            (-42.5, "-42.5"),
        ];
        for (x, want) in cases {
            assert_eq!(python_float_repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn spec_worked_example_config_hash() {
        // spec/apex-x-kernels.md §4.7: config {"kmax":4,"budget":3.0} hashes to 233a5712…6a47.
        let config = json!({"kmax": 4, "budget": 3.0});
        assert_eq!(canonical_json(&config), r#"{"budget":3.0,"kmax":4}"#);
        assert_eq!(
            hash_json_sha256(&config),
            "233a57128d66c45674ea7dce41df9ee81b5db8a836cc4edf7b3a32736c286a47"
        );
    }

    #[test]
    fn strings_escape_like_ensure_ascii() {
        let v = json!({"é": "a\"b\\c\n\u{7f}\u{1}😀", "a": [true, null, -3]});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":[true,null,-3],"\u00e9":"a\"b\\c\n\u007f\u0001\ud83d\ude00"}"#
        );
    }
}
