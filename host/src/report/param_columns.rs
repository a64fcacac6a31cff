//! [`ParamColumns`]: the parameters a Markdown table shows for each case. A parameter that has
//! the same value in every case of its kernel in this run says nothing about the row, so the
//! `params` column leaves it out and the section lists it once per kernel; the full case id
//! (every declared parameter) stays in `summary.json` and in the gate's metric ids.

use std::collections::BTreeMap;

use crate::model::CaseKey;

#[derive(Debug, Default)]
pub struct ParamColumns {
    /// Per kernel: `name=value` of each parameter constant across its cases.
    fixed: BTreeMap<String, BTreeMap<String, String>>,
}

impl ParamColumns {
    /// The columns of a table of the cases `keys`.
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a CaseKey>) -> Self {
        let mut values: BTreeMap<&str, BTreeMap<&str, Option<&str>>> = BTreeMap::new();
        for key in keys {
            let kernel = values.entry(key.kernel.as_str()).or_default();
            for (name, v) in &key.params {
                kernel
                    .entry(name.as_str())
                    .and_modify(|seen| {
                        if *seen != Some(v.as_str()) {
                            *seen = None;
                        }
                    })
                    .or_insert(Some(v.as_str()));
            }
            // A parameter some case lacks is not constant.
            for (name, seen) in kernel.iter_mut() {
                if !key.params.contains_key(*name) {
                    *seen = None;
                }
            }
        }
        let fixed = values
            .into_iter()
            .map(|(kernel, params)| {
                let constant = params
                    .into_iter()
                    .filter_map(|(n, v)| v.map(|v| (n.to_string(), v.to_string())))
                    .collect();
                (kernel.to_string(), constant)
            })
            .collect();
        Self { fixed }
    }

    /// `k=v,…` of the parameters that vary among the case's kernel's cases; `-` when none does.
    pub fn label(&self, key: &CaseKey) -> String {
        let fixed = self.fixed.get(&key.kernel);
        let shown: Vec<String> = key
            .params
            .iter()
            .filter(|(n, _)| fixed.is_none_or(|f| !f.contains_key(*n)))
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        if shown.is_empty() {
            "-".into()
        } else {
            shown.join(",")
        }
    }

    /// One line per kernel with constant parameters: `` `kernel`: k=v, k=v ``.
    pub fn fixed_lines(&self) -> Vec<String> {
        self.fixed
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(k, p)| {
                let list: Vec<String> = p.iter().map(|(n, v)| format!("{n}={v}")).collect();
                format!("`{k}`: {}", list.join(", "))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::measured_case;

    #[test]
    fn constant_parameters_leave_the_column_and_varying_ones_stay() {
        let mut a = measured_case("k.a", "cpu", 1.0, 0.01);
        let mut b = measured_case("k.a", "cpu", 2.0, 0.01);
        a.key.params = BTreeMap::from([("n".into(), "1".into()), ("t".into(), "8".into())]);
        b.key.params = BTreeMap::from([("n".into(), "2".into()), ("t".into(), "8".into())]);
        let mut only = measured_case("k.b", "cpu", 1.0, 0.01);
        only.key.params = BTreeMap::from([("m".into(), "3".into())]);
        let cols = ParamColumns::of([&a.key, &b.key, &only.key]);
        assert_eq!(cols.label(&a.key), "n=1");
        assert_eq!(cols.label(&only.key), "-");
        assert_eq!(cols.fixed_lines(), vec!["`k.a`: t=8", "`k.b`: m=3"]);
    }
}
