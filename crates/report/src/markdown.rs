//! A report as Markdown (GitHub's flavour, with pipe tables): the same blocks and entries as
//! the terminal text, for pasting into an issue, a pull request or docs/.

use std::io::{self, Write};

use crate::doc::{Align, Block, Doc, Table};

pub(crate) fn write(doc: &Doc, out: &mut dyn Write) -> io::Result<()> {
    for block in &doc.blocks {
        match block {
            Block::Fields(fields) => {
                // The first field names the report.
                let mut fields = fields.iter();
                if let Some((label, value)) = fields.next() {
                    writeln!(out, "## {label} {}\n", inline(value))?;
                }
                for (label, value) in fields {
                    writeln!(out, "- {label}: {}", inline(value))?;
                }
            }
            Block::Heading(h) => writeln!(out, "\n### {}", inline(h.trim_end_matches(':')))?,
            Block::Subheading(h) => writeln!(out, "\n**{}**", inline(h.trim_end_matches(':')))?,
            Block::Items(items) => {
                writeln!(out)?;
                for item in items {
                    writeln!(out, "- {}", inline(item))?;
                }
            }
            Block::Table(table) => {
                writeln!(out)?;
                write_table(table, out)?;
            }
            Block::Text(lines) => {
                writeln!(out)?;
                for line in lines {
                    writeln!(out, "{}", inline(line))?;
                }
            }
            Block::Legend(lines) => {
                writeln!(out, "\n```")?;
                for line in lines {
                    writeln!(out, "{line}")?;
                }
                writeln!(out, "```")?;
            }
        }
    }
    Ok(())
}

fn write_table(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let cells = |entries: Vec<String>| format!("| {} |", entries.join(" | "));
    writeln!(out, "{}", cells(table.columns.iter().map(|c| inline(&c.header)).collect()))?;
    let rule = table.columns.iter().map(|c| match c.align {
        Align::Left => "---".to_owned(),
        Align::Right => "--:".to_owned(),
    });
    writeln!(out, "{}", cells(rule.collect()))?;
    for row in &table.rows {
        writeln!(out, "{}", cells(row.iter().map(|e| inline(&e.line())).collect()))?;
    }
    Ok(())
}

/// Text that Markdown shows as written: characters it would read as markup are escaped.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_entries_is_escaped() {
        assert_eq!(inline("a|b *c* [1] <x> _y_"), r"a\|b \*c\* \[1\] \<x\> \_y\_");
    }

    #[test]
    fn tables_are_pipe_tables_aligned_as_the_text() {
        let mut t = Table::default();
        t.column("server", Align::Left);
        t.column("req/s", Align::Right);
        t.text_row(vec!["nginx".into(), "12345".into()]);
        let mut out = Vec::new();
        write_table(&t, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "| server | req/s |\n| --- | --: |\n| nginx | 12345 |\n"
        );
    }
}
