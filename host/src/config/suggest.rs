//! "Did you mean" for misspelled keys and names: the closest candidate within a small edit
//! distance, else the full list.

/// `did you mean `x`?` when a candidate is close, otherwise `known: a, b, c`.
pub(crate) fn hint_for(word: &str, candidates: &[&str], what: &str) -> String {
    match closest(word, candidates) {
        Some(c) => format!("did you mean `{c}`? {what}: {}", candidates.join(", ")),
        None => format!("{what}: {}", candidates.join(", ")),
    }
}

fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let close = candidates
        .iter()
        .map(|c| (distance(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c);
    // A truncated name (`tile` for `tile_size`) is far in edit distance but obvious to a reader.
    close.or_else(|| {
        let mut prefixed = candidates.iter().filter(|c| {
            let c = c.to_ascii_lowercase();
            lower.len() >= 3 && (c.starts_with(&lower) || lower.starts_with(&c))
        });
        match (prefixed.next(), prefixed.next()) {
            (Some(c), None) => Some(*c),
            _ => None,
        }
    })
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys_only() {
        let keys = ["precisions", "backends", "problem_size"];
        assert!(
            hint_for("precision", &keys, "known keys").starts_with("did you mean `precisions`?")
        );
        assert!(hint_for("problem-size", &keys, "known keys").contains("`problem_size`"));
        assert!(hint_for("problem", &keys, "known keys").contains("`problem_size`"));
        assert_eq!(
            hint_for("zzz", &keys, "known keys"),
            "known keys: precisions, backends, problem_size"
        );
    }
}
