//! Tensor shape specs as the seeds' TensorRT flags write them (apex-x-kernels.md §3.1, §3.3):
//! `--trt-input-shape name=AxBxC` gives one tensor's shape ([`parse_shape`]), and `--shape-case
//! "n1=AxB;n2=CxD"` a list of them ([`parse_shape_case`]; `,` separates entries too). Every
//! dimension is an integer > 0; the main types are [`ShapeSpec`] and [`ShapeCase`], which print back
//! in the normalised form `name=AxBxC` (entries joined by `;`).
//!
//! Errors name the 1-based column (in characters) of the offending part of the text and carry a
//! `(hint: ...)` line:
//!
//! ```text
//! `input=1x0x128`, column 9: dimension 2 of `input` is 0; every dimension must be > 0
//! (hint: write the shape as name=AxBxC with positive integers, e.g. input=1x3x128x128)
//! ```

use std::collections::BTreeSet;
use std::fmt;

/// The most dimensions a shape may have (TensorRT's `Dims::MAX_DIMS`).
pub const MAX_DIMS: usize = 8;

/// One tensor's shape: `name=AxBxC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeSpec {
    /// The tensor's name, trimmed; never empty and never contains `=`, `;` or `,`.
    pub name: String,
    /// At least one and at most [`MAX_DIMS`] dimensions, each in `1..=i64::MAX`.
    pub dims: Vec<u64>,
}

impl ShapeSpec {
    /// The number of elements, `None` when it does not fit in a `u64`.
    pub fn elements(&self) -> Option<u64> {
        self.dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }
}

impl fmt::Display for ShapeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=", self.name)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str("x")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// One `--shape-case`: shapes for distinct tensor names, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeCase(pub Vec<ShapeSpec>);

impl fmt::Display for ShapeCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// What is wrong with a shape spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeSpecErrorKind {
    /// Nothing but whitespace and separators.
    Empty,
    /// An entry without `=`.
    MissingEquals(String),
    /// `=AxB`.
    EmptyName,
    /// A name holding a separator (only [`parse_shape`], where `;` and `,` are not separators).
    NameSeparator(String),
    /// `name=` with nothing after it.
    NoDims(String),
    /// `1xx2`, `x2` or `2x`.
    EmptyDim { name: String, index: usize },
    /// Not a decimal integer (a sign, another separator such as `X` or `*`, a letter).
    NotAnInteger {
        name: String,
        index: usize,
        text: String,
    },
    /// 0.
    Zero { name: String, index: usize },
    /// Larger than `i64::MAX` (TensorRT dimensions are 64-bit signed).
    TooLarge {
        name: String,
        index: usize,
        text: String,
    },
    /// More than [`MAX_DIMS`] dimensions.
    TooManyDims { name: String, count: usize },
    /// The same tensor twice in one case.
    DuplicateName(String),
}

impl fmt::Display for ShapeSpecErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no shape given"),
            Self::MissingEquals(entry) => write!(f, "`{entry}` has no `=` between name and shape"),
            Self::EmptyName => f.write_str("the tensor name before `=` is empty"),
            Self::NameSeparator(name) => {
                write!(f, "the tensor name `{name}` contains a `;` or `,`")
            }
            Self::NoDims(name) => write!(f, "`{name}` has no dimensions after `=`"),
            Self::EmptyDim { name, index } => {
                write!(f, "dimension {index} of `{name}` is empty")
            }
            Self::NotAnInteger { name, index, text } => write!(
                f,
                "dimension {index} of `{name}` is `{text}`, not a positive integer"
            ),
            Self::Zero { name, index } => write!(
                f,
                "dimension {index} of `{name}` is 0; every dimension must be > 0"
            ),
            Self::TooLarge { name, index, text } => write!(
                f,
                "dimension {index} of `{name}` is `{text}`, larger than {}",
                i64::MAX
            ),
            Self::TooManyDims { name, count } => write!(
                f,
                "`{name}` has {count} dimensions; at most {MAX_DIMS} are allowed"
            ),
            Self::DuplicateName(name) => write!(f, "`{name}` is given twice in one shape case"),
        }
    }
}

/// A shape spec that does not parse: the text, the 1-based column of the problem, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}`, column {column}: {kind}\n(hint: {hint})", hint = self.hint())]
pub struct ShapeSpecError {
    pub text: String,
    /// 1-based, in characters; at most one past the last character.
    pub column: usize,
    pub kind: ShapeSpecErrorKind,
}

impl ShapeSpecError {
    fn hint(&self) -> &'static str {
        match self.kind {
            ShapeSpecErrorKind::DuplicateName(_) => {
                "give each tensor once per case; a second shape for it is a second --shape-case"
            }
            ShapeSpecErrorKind::NameSeparator(_) => {
                "one shape per --trt-input-shape; repeat the flag for more tensors"
            }
            ShapeSpecErrorKind::TooManyDims { .. } => "TensorRT tensors have at most 8 dimensions",
            _ => {
                "write the shape as name=AxBxC with positive integers and a lowercase `x`, e.g. \
                 input=1x3x128x128; separate the tensors of a case with `;`"
            }
        }
    }
}

/// Parses one tensor's shape, `name=AxBxC` (`--trt-input-shape`). Whitespace around the name and
/// the dimensions is ignored.
pub fn parse_shape(text: &str) -> Result<ShapeSpec, ShapeSpecError> {
    let located = |offset: usize, kind| error(text, offset, kind);
    if text.trim().is_empty() {
        return Err(located(text.len(), ShapeSpecErrorKind::Empty));
    }
    let spec = parse_entry(text, 0, text.len())?;
    if let Some(pos) = spec.name.find([';', ',']) {
        let name_start = text.len() - text.trim_start().len();
        return Err(located(
            name_start + pos,
            ShapeSpecErrorKind::NameSeparator(spec.name),
        ));
    }
    Ok(spec)
}

/// Parses one shape case, `"n1=AxB;n2=CxD"` (`--shape-case`); `,` separates entries too, and
/// empty entries (a trailing `;`) are ignored. Each tensor name may appear once.
pub fn parse_shape_case(text: &str) -> Result<ShapeCase, ShapeSpecError> {
    let mut specs = Vec::new();
    let mut names = BTreeSet::new();
    let mut start = 0;
    for (end, _) in text
        .char_indices()
        .filter(|&(_, c)| c == ';' || c == ',')
        .chain(std::iter::once((text.len(), ';')))
    {
        if !text[start..end].trim().is_empty() {
            let spec = parse_entry(text, start, end)?;
            if !names.insert(spec.name.clone()) {
                let at = start + (text[start..end].len() - text[start..end].trim_start().len());
                return Err(error(
                    text,
                    at,
                    ShapeSpecErrorKind::DuplicateName(spec.name),
                ));
            }
            specs.push(spec);
        }
        start = end + 1;
    }
    if specs.is_empty() {
        return Err(error(text, text.len(), ShapeSpecErrorKind::Empty));
    }
    Ok(ShapeCase(specs))
}

/// Parses `text[start..end]`, one `name=dims` entry; errors are located in the whole `text`.
fn parse_entry(text: &str, start: usize, end: usize) -> Result<ShapeSpec, ShapeSpecError> {
    let entry = &text[start..end];
    let located = |offset: usize, kind| error(text, start + offset, kind);
    let lead = entry.len() - entry.trim_start().len();
    let Some(eq) = entry.find('=') else {
        return Err(located(
            lead,
            ShapeSpecErrorKind::MissingEquals(entry.trim().to_string()),
        ));
    };
    let name = entry[..eq].trim();
    if name.is_empty() {
        return Err(located(eq, ShapeSpecErrorKind::EmptyName));
    }
    let dims_text = &entry[eq + 1..];
    if dims_text.trim().is_empty() {
        return Err(located(
            eq + 1,
            ShapeSpecErrorKind::NoDims(name.to_string()),
        ));
    }
    let mut dims = Vec::new();
    let mut part_start = eq + 1;
    for (index, part) in dims_text.split('x').enumerate() {
        let index = index + 1;
        let at = part_start + (part.len() - part.trim_start().len());
        let trimmed = part.trim();
        let name = name.to_string();
        if index > MAX_DIMS {
            let count = dims_text.split('x').count();
            return Err(located(
                part_start,
                ShapeSpecErrorKind::TooManyDims { name, count },
            ));
        }
        if trimmed.is_empty() {
            return Err(located(at, ShapeSpecErrorKind::EmptyDim { name, index }));
        }
        if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
            let text = trimmed.to_string();
            return Err(located(
                at,
                ShapeSpecErrorKind::NotAnInteger { name, index, text },
            ));
        }
        let value = match trimmed.parse::<i64>() {
            Ok(v) => v,
            Err(_) => {
                let text = trimmed.to_string();
                return Err(located(
                    at,
                    ShapeSpecErrorKind::TooLarge { name, index, text },
                ));
            }
        };
        if value == 0 {
            return Err(located(at, ShapeSpecErrorKind::Zero { name, index }));
        }
        dims.push(value.unsigned_abs());
        part_start += part.len() + 1;
    }
    Ok(ShapeSpec {
        name: name.to_string(),
        dims,
    })
}

/// An error at byte `offset` of `text`, as a 1-based character column.
fn error(text: &str, offset: usize, kind: ShapeSpecErrorKind) -> ShapeSpecError {
    let offset = offset.min(text.len());
    // Offsets come from char boundaries found above; `floor` keeps this total anyway.
    let boundary = (0..=offset)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    ShapeSpecError {
        text: text.to_string(),
        column: text[..boundary].chars().count() + 1,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, dims: &[u64]) -> ShapeSpec {
        ShapeSpec {
            name: name.into(),
            dims: dims.to_vec(),
        }
    }

    #[test]
    fn shapes_parse_and_print_normalised() {
        for (text, expected, printed) in [
            (
                "input=1x3x128x128",
                spec("input", &[1, 3, 128, 128]),
                "input=1x3x128x128",
            ),
            (
                " images:0 = 2 x 3 ",
                spec("images:0", &[2, 3]),
                "images:0=2x3",
            ),
            ("x=7", spec("x", &[7]), "x=7"),
            ("t=01x2", spec("t", &[1, 2]), "t=1x2"),
            (
                "t=9223372036854775807",
                spec("t", &[i64::MAX as u64]),
                "t=9223372036854775807",
            ),
        ] {
            let s = parse_shape(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s, expected, "{text}");
            assert_eq!(s.to_string(), printed, "{text}");
        }
        assert_eq!(spec("t", &[2, 3, 4]).elements(), Some(24));
        assert_eq!(spec("t", &[u64::MAX, 2]).elements(), None);
    }

    #[test]
    fn cases_split_on_semicolons_and_commas() {
        let c = parse_shape_case("a=1x2;b=3x4, c=5 ;").unwrap();
        assert_eq!(
            c,
            ShapeCase(vec![
                spec("a", &[1, 2]),
                spec("b", &[3, 4]),
                spec("c", &[5])
            ])
        );
        assert_eq!(c.to_string(), "a=1x2;b=3x4;c=5");
        assert_eq!(parse_shape_case(&c.to_string()).unwrap(), c);
    }

    #[test]
    fn errors_name_the_column_and_the_problem() {
        for (text, column, kind) in [
            ("", 1, ShapeSpecErrorKind::Empty),
            (" ; ,", 5, ShapeSpecErrorKind::Empty),
            (
                "input",
                1,
                ShapeSpecErrorKind::MissingEquals("input".into()),
            ),
            ("a=1;  b", 7, ShapeSpecErrorKind::MissingEquals("b".into())),
            ("=1x2", 1, ShapeSpecErrorKind::EmptyName),
            ("a=", 3, ShapeSpecErrorKind::NoDims("a".into())),
            (
                "a=1xx2",
                5,
                ShapeSpecErrorKind::EmptyDim {
                    name: "a".into(),
                    index: 2,
                },
            ),
            (
                "a=2x",
                5,
                ShapeSpecErrorKind::EmptyDim {
                    name: "a".into(),
                    index: 2,
                },
            ),
            (
                "a=1x0x3",
                5,
                ShapeSpecErrorKind::Zero {
                    name: "a".into(),
                    index: 2,
                },
            ),
            (
                "a=1X2",
                3,
                ShapeSpecErrorKind::NotAnInteger {
                    name: "a".into(),
                    index: 1,
                    text: "1X2".into(),
                },
            ),
            (
                "a=-1",
                3,
                ShapeSpecErrorKind::NotAnInteger {
                    name: "a".into(),
                    index: 1,
                    text: "-1".into(),
                },
            ),
            (
                "a=1;b=9223372036854775808",
                7,
                ShapeSpecErrorKind::TooLarge {
                    name: "b".into(),
                    index: 1,
                    text: "9223372036854775808".into(),
                },
            ),
            (
                "a=1x1x1x1x1x1x1x1x1",
                19,
                ShapeSpecErrorKind::TooManyDims {
                    name: "a".into(),
                    count: 9,
                },
            ),
            ("a=1; a=2", 6, ShapeSpecErrorKind::DuplicateName("a".into())),
            // Columns count characters, not bytes.
            (
                "ä=1xé",
                5,
                ShapeSpecErrorKind::NotAnInteger {
                    name: "ä".into(),
                    index: 2,
                    text: "é".into(),
                },
            ),
        ] {
            let err = parse_shape_case(text).unwrap_err();
            assert_eq!((err.column, &err.kind), (column, &kind), "{text:?}: {err}");
            let shown = err.to_string();
            assert!(
                shown.contains(&format!("column {column}")) && shown.contains("\n(hint: "),
                "{shown}"
            );
        }
    }

    #[test]
    fn one_shape_per_trt_input_shape_flag() {
        let err = parse_shape("a=1;b=2").unwrap_err();
        assert!(
            matches!(err.kind, ShapeSpecErrorKind::NotAnInteger { .. }),
            "{err}"
        );
        let err = parse_shape("a;b=2").unwrap_err();
        assert_eq!(err.kind, ShapeSpecErrorKind::NameSeparator("a;b".into()));
        assert_eq!(err.column, 2);
        assert!(err.to_string().contains("repeat the flag"), "{err}");
        assert_eq!(
            parse_shape("  ").unwrap_err().kind,
            ShapeSpecErrorKind::Empty
        );
    }
}
