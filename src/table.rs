//! Aligned plain-text tables, written one way for every command: each column as wide as its
//! widest cell (in characters), text padded left or right, two spaces between columns, no
//! trailing blanks. Rows, a rule of dashes under the header and blank lines between groups are
//! added in order; [`Table::render`] measures the columns over every row and writes them.
//!
//! This sits at the bottom of the house: it imports nothing from the crate.

/// Which side of its column a cell keeps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Figures: padded on the left.
    Right,
}

enum Line {
    Cells(Vec<String>),
    Rule,
    Blank,
}

/// A table being built: its lines in order and how each column aligns.
pub struct Table<'a> {
    align: Box<dyn Fn(usize) -> Align + 'a>,
    lines: Vec<Line>,
}

impl<'a> Table<'a> {
    /// An empty table whose column `i` aligns as `align(i)` says.
    pub fn new(align: impl Fn(usize) -> Align + 'a) -> Table<'a> {
        Table {
            align: Box::new(align),
            lines: Vec::new(),
        }
    }

    /// Adds a row (the header is a row too).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.lines
            .push(Line::Cells(cells.into_iter().map(Into::into).collect()));
        self
    }

    /// Adds a rule: dashes the width of each column.
    pub fn rule(&mut self) -> &mut Self {
        self.lines.push(Line::Rule);
        self
    }

    /// Adds an empty line (between groups of rows).
    pub fn gap(&mut self) -> &mut Self {
        self.lines.push(Line::Blank);
        self
    }

    #[cfg(test)]
    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        !self.lines.iter().any(|l| matches!(l, Line::Cells(_)))
    }

    /// The width of each column: its widest cell, in characters.
    pub fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = Vec::new();
        for line in &self.lines {
            let Line::Cells(cells) = line else { continue };
            if widths.len() < cells.len() {
                widths.resize(cells.len(), 0);
            }
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(c.chars().count());
            }
        }
        widths
    }

    /// The table, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let widths = self.widths();
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let mut out = String::new();
        for line in &self.lines {
            let cells = match line {
                Line::Cells(cells) => cells,
                Line::Rule => &rule,
                Line::Blank => {
                    out.push('\n');
                    continue;
                }
            };
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = widths[i] - c.chars().count();
                match (self.align)(i) {
                    Align::Left => {
                        s.push_str(c);
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(c);
                    }
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_cell() {
        let mut t = Table::new(|i| if i == 0 { Align::Left } else { Align::Right });
        assert!(t.is_empty());
        t.row(["lock", "thr", "µs"]).rule();
        t.row(["ticket", "1", "2.50"]).gap().row(["mcs", "16", "x"]);
        assert_eq!(t.widths(), vec![6, 3, 4]);
        assert_eq!(
            t.render(),
            "lock    thr    µs\n------  ---  ----\nticket    1  2.50\n\nmcs      16     x\n"
        );
        // No trailing blanks: a left-aligned last column is not padded out.
        let mut t = Table::new(|_| Align::Left);
        t.row(["a", "long note"]).row(["bb", "n"]);
        assert_eq!(t.render(), "a   long note\nbb  n\n");
    }
}
