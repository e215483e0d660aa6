//! A report as terminal text. Tables: columns as wide as their widest entry, text to the
//! left, numbers to the right, two spaces between columns (or one, for a column that reads
//! as the previous one's continuation, like `12345 ±2.1%`), and no trailing spaces.
//!
//! Widths count characters, not bytes, so `µs` lines up; every character the reports use
//! is one column wide in a terminal.

use std::io::{self, Write};

use crate::doc::{Align, Block, Doc, Entry, Table};

pub(crate) fn write(doc: &Doc, out: &mut dyn Write) -> io::Result<()> {
    let mut after_heading = false;
    for block in &doc.blocks {
        match block {
            Block::Fields(fields) => {
                for (label, value) in fields {
                    writeln!(out, "{label:<12}{value}")?;
                }
            }
            Block::Heading(h) => writeln!(out, "\n{h}")?,
            Block::Subheading(h) => writeln!(out, "{h}")?,
            Block::Items(items) => {
                for item in items {
                    writeln!(out, "  {item}")?;
                }
            }
            Block::Table(table) => {
                // A table stands apart from the lines before it, not from its heading.
                if !after_heading {
                    writeln!(out)?;
                }
                write_table(table, out)?;
            }
            Block::Text(lines) => {
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
            Block::Legend(lines) => {
                writeln!(out)?;
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
        }
        after_heading = matches!(block, Block::Heading(_) | Block::Subheading(_));
    }
    Ok(())
}

pub(crate) fn write_table(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let widths: Vec<usize> = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let widest = table.rows.iter().map(|r| r[i].line().chars().count()).max().unwrap_or(0);
            widest.max(c.header.chars().count())
        })
        .collect();
    let headers: Vec<String> = table.columns.iter().map(|c| c.header.clone()).collect();
    let rows = table.rows.iter().map(|r| r.iter().map(Entry::line).collect::<Vec<_>>());
    for entries in std::iter::once(headers).chain(rows) {
        let mut line = String::new();
        for (i, (column, entry)) in table.columns.iter().zip(entries).enumerate() {
            if i > 0 {
                line.push_str(if column.continues { " " } else { "  " });
            }
            let pad = widths[i] - entry.chars().count();
            match column.align {
                Align::Left => {
                    line.push_str(&entry);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(&entry);
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(table: &Table) -> String {
        let mut out = Vec::new();
        write_table(table, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_fit_their_widest_entry() {
        let mut t = Table::default();
        t.column("server", Align::Left);
        t.column("req/s", Align::Right);
        t.continuation("±95%", Align::Right);
        t.column("cpu µs", Align::Right);
        t.text_row(vec!["nginx".into(), "12345".into(), "±2.1%".into(), "7.5".into()]);
        t.text_row(vec!["herd-serve".into(), "987".into(), "±12.0%".into(), "15.25".into()]);
        t.text_row(vec!["x".into()]);
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
        let mut t = Table::default();
        t.column("a", Align::Left);
        t.column("b", Align::Left);
        assert_eq!(render(&t), "a  b\n");
    }
}
