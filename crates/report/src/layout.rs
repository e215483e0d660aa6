//! Plain-text tables: columns as wide as their widest entry, text to the left, numbers to
//! the right, two spaces between columns (or one, for a column that reads as the previous
//! one's continuation, like `12345 ±2.1%`), and no trailing spaces.
//!
//! Widths count characters, not bytes, so `µs` lines up; every character the reports use
//! is one column wide in a terminal.

use std::io::{self, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

pub(crate) struct TextTable {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

struct Column {
    header: String,
    align: Align,
    /// Spaces before the column (none before the first).
    gap: usize,
}

impl TextTable {
    pub(crate) fn new() -> TextTable {
        TextTable { columns: Vec::new(), rows: Vec::new() }
    }

    /// Adds a column two spaces after the previous one.
    pub(crate) fn column(&mut self, header: &str, align: Align) {
        self.columns.push(Column { header: header.to_owned(), align, gap: 2 });
    }

    /// Adds a column one space after the previous one, read as part of it.
    pub(crate) fn continuation(&mut self, header: &str, align: Align) {
        self.columns.push(Column { header: header.to_owned(), align, gap: 1 });
    }

    /// Adds a row; missing trailing entries are blank, extra ones are dropped.
    pub(crate) fn row(&mut self, mut entries: Vec<String>) {
        entries.resize(self.columns.len(), String::new());
        self.rows.push(entries);
    }

    pub(crate) fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let widest = self.rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
                widest.max(c.header.chars().count())
            })
            .collect();
        let headers: Vec<String> = self.columns.iter().map(|c| c.header.clone()).collect();
        for entries in std::iter::once(&headers).chain(&self.rows) {
            let mut line = String::new();
            for (i, (column, entry)) in self.columns.iter().zip(entries).enumerate() {
                if i > 0 {
                    line.extend(std::iter::repeat_n(' ', column.gap));
                }
                let pad = widths[i] - entry.chars().count();
                match column.align {
                    Align::Left => {
                        line.push_str(entry);
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        line.extend(std::iter::repeat_n(' ', pad));
                        line.push_str(entry);
                    }
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(table: &TextTable) -> String {
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_fit_their_widest_entry() {
        let mut t = TextTable::new();
        t.column("server", Align::Left);
        t.column("req/s", Align::Right);
        t.continuation("±95%", Align::Right);
        t.column("cpu µs", Align::Right);
        t.row(vec!["nginx".into(), "12345".into(), "±2.1%".into(), "7.5".into()]);
        t.row(vec!["herd-serve".into(), "987".into(), "±12.0%".into(), "15.25".into()]);
        t.row(vec!["x".into()]);
        assert_eq!(
            render(&t),
            "server      req/s   ±95%  cpu µs\n\
             nginx       12345  ±2.1%     7.5\n\
             herd-serve    987 ±12.0%   15.25\n\
             x\n"
        );
    }

    #[test]
    fn a_table_without_rows_is_its_header() {
        let mut t = TextTable::new();
        t.column("a", Align::Left);
        t.column("b", Align::Left);
        assert_eq!(render(&t), "a  b\n");
    }
}
