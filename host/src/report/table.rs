//! [`Table`]: a Markdown (GitHub) table and a plain, column-aligned text table for the terminal.

use super::fmt::cell;

#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    /// `true` for columns whose values are numbers (right-aligned).
    numeric: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Columns by name; a name starting with `>` is numeric (right-aligned), the `>` is dropped.
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            numeric: headers.iter().map(|h| h.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) -> &mut Self {
        debug_assert_eq!(cells.len(), self.headers.len(), "one cell per column");
        self.rows.push(cells);
        self
    }

    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut s = line(&self.headers);
        let rule: Vec<&str> = self
            .numeric
            .iter()
            .map(|&n| if n { "---:" } else { "---" })
            .collect();
        s.push_str(&format!("| {} |\n", rule.join(" | ")));
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }

    /// Space-separated columns padded to the widest cell, for a terminal.
    pub fn plain(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.numeric)
                .map(|((c, &w), &num)| {
                    if num {
                        format!("{c:>w$}")
                    } else {
                        format!("{c:<w$}")
                    }
                })
                .collect();
            format!("{}\n", parts.join("  ").trim_end())
        };
        let mut s = line(&self.headers);
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_markdown_and_plain() {
        let mut t = Table::new(&["case", ">p50 ms"]);
        t.row(vec!["a|b".into(), "1.5".into()]);
        t.row(vec!["long name".into(), "12.25".into()]);
        assert_eq!(
            t.markdown(),
            "| case | p50 ms |\n| --- | ---: |\n| a\\|b | 1.5 |\n| long name | 12.25 |\n"
        );
        assert_eq!(
            t.plain(),
            "case       p50 ms\na|b           1.5\nlong name   12.25\n"
        );
    }
}
