//! Plain-text tables for the reports' `Display`: columns padded to their widest cell, numbers
//! aligned right, a rule under the header. No colours or box drawing, so that they read the
//! same in a terminal, a CI log and a test's panic message.

use std::fmt;

/// A column's alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

enum Row {
    Cells(Vec<String>),
    // Only the token report draws a rule before its totals.
    Rule,
}

/// A table being filled, rendered by [`Table::write`].
pub struct Table {
    columns: Vec<(&'static str, Align)>,
    rows: Vec<Row>,
}

impl Table {
    pub fn new(columns: &[(&'static str, Align)]) -> Self {
        Table { columns: columns.to_vec(), rows: Vec::new() }
    }

    /// Adds a row; missing cells are blank.
    pub fn row(&mut self, cells: impl IntoIterator<Item = String>) {
        self.rows.push(Row::Cells(cells.into_iter().collect()));
    }

    /// Adds a rule across the table (before a totals row).
    pub fn rule(&mut self) {
        self.rows.push(Row::Rule);
    }

    /// Writes the table, each line indented by `indent` spaces.
    pub fn write(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let mut widths: Vec<usize> = self.columns.iter().map(|(h, _)| h.chars().count()).collect();
        for row in &self.rows {
            if let Row::Cells(cells) = row {
                for (w, c) in widths.iter_mut().zip(cells) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let total = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
        let line = |f: &mut fmt::Formatter<'_>, cells: &mut dyn Iterator<Item = &str>| -> fmt::Result {
            let mut out = " ".repeat(indent);
            for (i, ((_, align), w)) in self.columns.iter().zip(&widths).enumerate() {
                let cell = cells.next().unwrap_or("");
                let pad = w.saturating_sub(cell.chars().count());
                if i > 0 {
                    out.push_str("  ");
                }
                match align {
                    Align::Left => {
                        out.push_str(cell);
                        out.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        out.extend(std::iter::repeat_n(' ', pad));
                        out.push_str(cell);
                    }
                }
            }
            writeln!(f, "{}", out.trim_end())
        };
        line(f, &mut self.columns.iter().map(|(h, _)| *h))?;
        writeln!(f, "{}{}", " ".repeat(indent), "-".repeat(total))?;
        for row in &self.rows {
            match row {
                Row::Cells(cells) => line(f, &mut cells.iter().map(String::as_str))?,
                Row::Rule => writeln!(f, "{}{}", " ".repeat(indent), "-".repeat(total))?,
            }
        }
        Ok(())
    }
}

/// `text` on one line (whitespace runs become one space), cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max.saturating_sub(1)) {
        Some((cut, _)) if flat.chars().count() > max => format!("{}…", &flat[..cut]),
        _ => flat,
    }
}

/// A count with thin grouping: `12 345`.
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Show(Table);
    impl fmt::Display for Show {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.write(f, 2)
        }
    }

    #[test]
    fn columns_are_padded_and_numbers_right_aligned() {
        let mut t = Table::new(&[("tool", Align::Left), ("calls", Align::Right)]);
        t.row(["search".to_owned(), "12".to_owned()]);
        t.rule();
        t.row(["all".to_owned(), "1 234".to_owned()]);
        assert_eq!(
            Show(t).to_string(),
            "  tool    calls\n  -------------\n  search     12\n  -------------\n  all     1 234\n"
        );
    }

    #[test]
    fn text_is_flattened_and_cut() {
        assert_eq!(one_line("a\n  b", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("abcd", 4), "abcd");
        assert_eq!(grouped(1234567), "1 234 567");
        assert_eq!(grouped(999), "999");
    }
}
