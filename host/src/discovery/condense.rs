//! One-line reasons from the loaders' long errors: libloading's terse `Display` (the useful text
//! is in `source()`), and abi_stable's layout errors, which run to about 1,400 lines per plugin.

use abi_stable::library::LibraryError;

/// The whole `source()` chain of an error on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.dedup();
    parts.join(": ")
}

/// A one-line reason for an abi_stable load failure.
pub fn library_error(e: &LibraryError) -> String {
    match e {
        LibraryError::OpenError { err, .. } => format!("cannot open library: {}", error_chain(err.as_ref())),
        LibraryError::GetSymbolError { .. } => {
            "not an apex plugin: it exports no abi_stable root module (hint: call apex_plugin_api::export_plugin!() in its lib.rs)".into()
        }
        LibraryError::IncompatibleVersionNumber { expected_version, actual_version, .. } => format!(
            "incompatible plugin API: built against apex-plugin-api {actual_version}, this host speaks {expected_version} (hint: rebuild the plugin against this checkout's plugin-api)"
        ),
        LibraryError::AbiInstability(err) => format!(
            "incompatible ABI layout: {} (hint: rebuild the plugin against this checkout's plugin-api)",
            condense_layout(&err.to_string())
        ),
        LibraryError::InvalidAbiHeader(_) | LibraryError::InvalidCAbi { .. } => {
            "incompatible abi_stable runtime (hint: plugin and host must use abi_stable 0.11)".into()
        }
        LibraryError::RootModule { err, .. } => {
            format!("the plugin's root module failed to initialize: {}", squash(&err.to_string()))
        }
        LibraryError::ParseVersionError(v) => format!("unreadable plugin API version: {}", squash(&v.to_string())),
        LibraryError::Many(errors) => errors.iter().map(library_error).collect::<Vec<_>>().join("; "),
    }
}

/// Keeps the `Error:` blocks of an abi_stable layout report (`incompatible type size: expected 72,
/// found 64`) and the innermost type named, on one line.
pub fn condense_layout(report: &str) -> String {
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(what) = lines[i].strip_prefix("Error:") {
            let mut item = what.trim().to_string();
            let value_after = |label: &str, from: usize| {
                lines[from..]
                    .iter()
                    .position(|l| *l == label)
                    .and_then(|p| lines.get(from + p + 1))
                    .map(|v| v.to_string())
            };
            if let (Some(exp), Some(fnd)) = (value_after("Expected:", i), value_after("Found:", i))
                && exp.len() < 80
                && fnd.len() < 80
            {
                item = format!("{item}: expected {exp}, found {fnd}");
            }
            if !found.contains(&item) {
                found.push(item);
            }
        }
        i += 1;
    }
    let innermost_type = lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("type:").map(|t| t.trim().to_string()));
    let mut text = if found.is_empty() {
        "layout mismatch".to_string()
    } else {
        found.join("; ")
    };
    if let Some(t) = innermost_type {
        text.push_str(&format!(" (in `{t}`)"));
    }
    text
}

/// Collapses whitespace runs (including newlines and tabs) to single spaces.
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_report_condenses_to_one_line() {
        let report = "\n--- many lines ---\ntype: PluginRoot\n  field: kernels\ntype: Param\nError:incompatible type size\nExpected:\n    72\nFound:\n    64\n\nError:too many fields\nExpected:\n    3\nFound:\n    2\n";
        let s = condense_layout(report);
        assert_eq!(
            s,
            "incompatible type size: expected 72, found 64; too many fields: expected 3, found 2 (in `Param`)"
        );
        assert!(!s.contains('\n'));
    }
}
