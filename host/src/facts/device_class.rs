//! [`device_class`]: a GPU's class from its name, the key of its committed baseline
//! (`baselines/gpu-<class>.json`): the model token after the vendor and brand words, lowercased,
//! with a series prefix joined to its number (`NVIDIA H100 80GB HBM3` → `h100`,
//! `NVIDIA A100-SXM4-80GB` → `a100`, `NVIDIA GeForce RTX 4090` → `rtx4090`).

/// Words that name the vendor or a brand, not the model.
const BRAND_WORDS: [&str; 5] = ["nvidia", "geforce", "tesla", "quadro", "tegra"];

/// The class of the GPU named `name`; `None` when the name holds no model token.
pub fn device_class(name: &str) -> Option<String> {
    let mut class = String::new();
    for token in name
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .map(str::to_ascii_lowercase)
        .filter(|t| !t.is_empty() && !BRAND_WORDS.contains(&t.as_str()))
    {
        class.extend(token.chars().filter(char::is_ascii_alphanumeric));
        if token.chars().any(|c| c.is_ascii_digit()) {
            return Some(class);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_real_names() {
        for (name, class) in [
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA H200", "h200"),
            ("NVIDIA H100 PCIe", "h100"),
            ("NVIDIA A100-SXM4-80GB", "a100"),
            ("NVIDIA GeForce RTX 4090", "rtx4090"),
            ("Tesla V100-SXM2-16GB", "v100"),
            ("NVIDIA L4", "l4"),
        ] {
            assert_eq!(device_class(name).as_deref(), Some(class), "{name}");
        }
        assert_eq!(device_class("NVIDIA"), None);
        assert_eq!(device_class(""), None);
    }
}
