//! [`device_class`]: a GPU's class from its name, the key of its committed baseline
//! (`baselines/gpu-<class>.json`): the model token after the vendor and brand words, lowercased,
//! with a series prefix joined to its number (`NVIDIA H100 80GB HBM3` → `h100`,
//! `NVIDIA A100-SXM4-80GB` → `a100`, `NVIDIA GeForce RTX 4090` → `rtx4090`), and the form factor
//! after it where it is not the SXM module (`NVIDIA H100 PCIe` → `h100-pcie`, `NVIDIA H200 NVL` →
//! `h200-nvl`). A PCIe or NVL card runs the same model at its own power limit and clocks (the
//! H100 PCIe with 114 SMs instead of 132), so it is gated against a baseline of its own: against
//! the SXM part's values its own speed would read as a regression.

/// Words that name the vendor or a brand, not the model.
const BRAND_WORDS: [&str; 5] = ["nvidia", "geforce", "tesla", "quadro", "tegra"];

/// Words after the model token that name a form factor with its own speed.
const FORM_FACTOR_WORDS: [&str; 2] = ["pcie", "nvl"];

/// The class of the GPU named `name`; `None` when the name holds no model token.
pub fn device_class(name: &str) -> Option<String> {
    let mut tokens = name
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .map(str::to_ascii_lowercase)
        .filter(|t| !t.is_empty() && !BRAND_WORDS.contains(&t.as_str()));
    let mut class = String::new();
    loop {
        let token = tokens.next()?;
        class.extend(token.chars().filter(char::is_ascii_alphanumeric));
        if token.chars().any(|c| c.is_ascii_digit()) {
            break;
        }
    }
    if let Some(form) = tokens.find(|t| FORM_FACTOR_WORDS.contains(&t.as_str())) {
        class.push('-');
        class.push_str(&form);
    }
    Some(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_real_names() {
        for (name, class) in [
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA H200", "h200"),
            ("NVIDIA H100 PCIe", "h100-pcie"),
            ("NVIDIA H100 NVL", "h100-nvl"),
            ("NVIDIA H200 NVL", "h200-nvl"),
            ("NVIDIA A100-PCIE-40GB", "a100-pcie"),
            ("NVIDIA A100 80GB PCIe", "a100-pcie"),
            ("NVIDIA H100 SXM5 80GB", "h100"),
            ("Tesla V100-PCIE-32GB", "v100-pcie"),
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
