//! Number formatting shared by the Markdown report, the progress lines and the final table:
//! one place decides how many digits a reader sees, and that a missing value reads `n/a`.

/// What a missing value prints as, everywhere (as in the Apex-X Markdown companion).
pub const NA: &str = "n/a";

/// `x` with `sig` significant digits, without exponent for everyday magnitudes
/// (`0.0001234`, `12.35`, `1235`), and in scientific form beyond them.
pub fn sig(x: f64, sig: usize) -> String {
    if !x.is_finite() {
        return NA.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-5..=9).contains(&mag) {
        return format!("{:.*e}", sig.saturating_sub(1), x);
    }
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A time in milliseconds: four significant digits.
pub fn ms(x: f64) -> String {
    sig(x, 4)
}

/// An optional time in milliseconds; `n/a` when absent.
pub fn opt_ms(x: Option<f64>) -> String {
    x.map_or_else(|| NA.into(), ms)
}

/// A large rate with an SI prefix: `1.235 G`, `512.0 k`, `12.00`.
pub fn si(x: f64) -> String {
    if !x.is_finite() {
        return NA.into();
    }
    const PREFIXES: [(f64, &str); 5] = [
        (1e15, " P"),
        (1e12, " T"),
        (1e9, " G"),
        (1e6, " M"),
        (1e3, " k"),
    ];
    for (scale, prefix) in PREFIXES {
        if x.abs() >= scale {
            return format!("{}{prefix}", sig(x / scale, 4));
        }
    }
    sig(x, 4)
}

/// A ratio as a percentage with one decimal: `0.0523` → `5.2%`.
pub fn pct_of_ratio(x: f64) -> String {
    if !x.is_finite() {
        return NA.into();
    }
    format!("{:.1}%", x * 100.0)
}

/// A value already in percent: `12.345` → `12.3%`; `n/a` when absent.
pub fn opt_pct(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.1}%"),
        _ => NA.into(),
    }
}

/// An optional number with `digits` significant digits; `n/a` when absent.
pub fn opt_sig(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| NA.into(), |x| sig(x, digits))
}

/// An error magnitude (accuracy figures): three significant digits in scientific form.
pub fn err(x: f64) -> String {
    if !x.is_finite() {
        return NA.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    format!("{x:.2e}")
}

/// Escapes a table cell: a `|` would split the cell, a newline would end the row.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.000_123_456, 4), "0.0001235");
        assert_eq!(sig(12.3456, 4), "12.35");
        assert_eq!(sig(1234.56, 4), "1235");
        assert_eq!(sig(0.5, 4), "0.5000");
        assert_eq!(sig(0.0, 4), "0");
        assert_eq!(sig(1.5e-7, 3), "1.50e-7");
        assert_eq!(sig(f64::NAN, 4), NA);
    }

    #[test]
    fn missing_values_read_na() {
        assert_eq!(opt_ms(None), "n/a");
        assert_eq!(opt_pct(None), "n/a");
        assert_eq!(opt_sig(None, 3), "n/a");
        assert_eq!(opt_ms(Some(0.1234)), "0.1234");
    }

    #[test]
    fn si_prefixes_and_percent() {
        assert_eq!(si(2.048e6), "2.048 M");
        assert_eq!(si(1.5e10), "15.00 G");
        assert_eq!(si(999.0), "999.0");
        assert_eq!(pct_of_ratio(0.0523), "5.2%");
        assert_eq!(opt_pct(Some(12.345)), "12.3%");
        assert_eq!(err(2.5e-4), "2.50e-4");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
