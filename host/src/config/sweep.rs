//! Sweep expansion (seed 004's batch × sequence length × tensor dimension): the cartesian product
//! of every parameter axis, where each `zip` group counts as one axis whose members advance
//! together, minus the combinations an `exclude` rule names.

use crate::model::ParamMap;
use apex_plugin_api::{Backend, Precision};
use serde_json::Value;

/// One parameter and the values it takes (one value for a fixed parameter).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    pub name: String,
    pub values: Vec<Value>,
}

/// Groups axes into dimensions: each zip group (indices into `axes`, equal lengths already
/// checked) is one dimension placed where its first member is; every other axis is its own.
fn dimensions(axes: &[Axis], zip: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut dims: Vec<Vec<usize>> = Vec::new();
    for i in 0..axes.len() {
        match zip.iter().find(|g| g.contains(&i)) {
            Some(g) if g.iter().min() == Some(&i) => dims.push(g.clone()),
            Some(_) => {}
            None => dims.push(vec![i]),
        }
    }
    dims
}

/// The number of parameter combinations, or `None` on overflow.
pub(crate) fn count(axes: &[Axis], zip: &[Vec<usize>]) -> Option<usize> {
    dimensions(axes, zip)
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(axes[d[0]].values.len()))
}

/// Every combination, the first axis varying slowest (in declared parameter order).
pub(crate) fn combinations(axes: &[Axis], zip: &[Vec<usize>]) -> Vec<ParamMap> {
    let mut out = vec![ParamMap::new()];
    for dim in dimensions(axes, zip) {
        let len = axes[dim[0]].values.len();
        let mut next = Vec::with_capacity(out.len() * len);
        for partial in &out {
            for k in 0..len {
                let mut p = partial.clone();
                for &i in &dim {
                    p.insert(axes[i].name.clone(), axes[i].values[k].clone());
                }
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// An `exclude` item after resolution: key (a parameter, `backend` or `precision`) → the values
/// that match. A case is removed when every key matches.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exclusion {
    pub items: Vec<(String, Vec<Value>)>,
}

impl Exclusion {
    pub(crate) fn matches(
        &self,
        params: &ParamMap,
        backend: Backend,
        precision: Precision,
    ) -> bool {
        self.items.iter().all(|(key, values)| {
            let actual: Value = match key.as_str() {
                "backend" => backend.as_str().into(),
                "precision" => precision.as_str().into(),
                name => match params.get(name) {
                    Some(v) => v.clone(),
                    None => return false,
                },
            };
            values.contains(&actual)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, values: &[i64]) -> Axis {
        Axis {
            name: name.into(),
            values: values.iter().map(|v| Value::from(*v)).collect(),
        }
    }

    fn ids(ps: &[ParamMap]) -> Vec<String> {
        ps.iter()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    }

    #[test]
    fn cartesian_product_in_declared_order() {
        let axes = [
            axis("batch", &[16, 32]),
            axis("seq", &[256, 512]),
            axis("dim", &[8]),
        ];
        assert_eq!(count(&axes, &[]), Some(4));
        assert_eq!(
            ids(&combinations(&axes, &[])),
            vec![
                "batch=16,dim=8,seq=256",
                "batch=16,dim=8,seq=512",
                "batch=32,dim=8,seq=256",
                "batch=32,dim=8,seq=512"
            ]
        );
    }

    #[test]
    fn zip_groups_advance_together() {
        let axes = [
            axis("batch", &[16, 32, 64]),
            axis("dim", &[8, 16]),
            axis("seq", &[256, 512, 1024]),
        ];
        let zip = [vec![0, 2]];
        assert_eq!(count(&axes, &zip), Some(6));
        let c = ids(&combinations(&axes, &zip));
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], "batch=16,dim=8,seq=256");
        assert_eq!(c[1], "batch=16,dim=16,seq=256");
        assert_eq!(c[5], "batch=64,dim=16,seq=1024");
        assert!(
            !c.iter()
                .any(|s| s.contains("batch=16") && s.contains("seq=512"))
        );
    }

    #[test]
    fn exclusion_needs_every_key_to_match() {
        let mut p = ParamMap::new();
        p.insert("batch".into(), 128.into());
        p.insert("seq".into(), 2048.into());
        let ex = Exclusion {
            items: vec![
                ("batch".into(), vec![128.into()]),
                ("seq".into(), vec![1024.into(), 2048.into()]),
            ],
        };
        assert!(ex.matches(&p, Backend::Cpu, Precision::Fp32));
        let ex_cuda = Exclusion {
            items: vec![
                ("batch".into(), vec![128.into()]),
                ("backend".into(), vec!["cuda".into()]),
            ],
        };
        assert!(!ex_cuda.matches(&p, Backend::Cpu, Precision::Fp32));
        assert!(ex_cuda.matches(&p, Backend::Cuda, Precision::Fp32));
        assert!(count(&[axis("a", &[1; 100]), axis("b", &[1; 100])], &[]) == Some(10_000));
    }
}
