//! A report as a document: headings, tables, lists and plain lines, built once from the
//! stored experiment and then rendered as terminal text, Markdown or HTML.
//! Every format shows the same entries, formatted once here, so they cannot disagree on a
//! number.

/// A report, top to bottom.
#[derive(Debug, Default)]
pub(crate) struct Doc {
    pub(crate) blocks: Vec<Block>,
}

#[derive(Debug)]
pub(crate) enum Block {
    /// `label  value` lines, such as the experiment's header.
    Fields(Vec<(String, String)>),
    /// Opens a section (a blank line before it in text).
    Heading(String),
    /// A heading inside a section (no blank line before it in text).
    Subheading(String),
    /// One entry per line, indented in text, a list elsewhere.
    Items(Vec<String>),
    Table(Table),
    /// Lines said as they are.
    Text(Vec<String>),
    /// Aligned explanation lines, kept as they are in every format.
    Legend(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

#[derive(Debug)]
pub(crate) struct Column {
    pub(crate) header: String,
    pub(crate) align: Align,
    /// Read as part of the previous column (`12345 ±2.1%`): one space before it in text.
    pub(crate) continues: bool,
}

/// One table entry: its text; where it is a share of a baseline, how good it is as a
/// percentage of the baseline (its share; for a time, a latency or a cost, the baseline's
/// over its: the HTML page colours the entry by it, the text prints the share itself); and
/// where it shows a stored row's figure, which one, unrounded (the HTML page carries it,
/// so a reader or a test can check the page against the store).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Entry {
    pub(crate) text: String,
    pub(crate) percent: Option<f64>,
    pub(crate) figure: Option<Figure>,
    /// An article's figure for the same cell (`2.909 (73.2 %)`): published, not measured,
    /// shown after today's as `| then …` (on a line of its own in HTML).
    pub(crate) then: Option<String>,
}

impl Entry {
    /// The entry as one line of text: today's figure, then the article's if any.
    pub(crate) fn line(&self) -> String {
        match &self.then {
            Some(then) => format!("{} | then {then}", self.text),
            None => self.text.clone(),
        }
    }
}

/// The figure an entry shows: a measure's median over a row's ok repetitions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figure {
    /// The stored cell's key.
    pub(crate) cell: String,
    /// The step's label, for a row of a stepped load.
    pub(crate) step: Option<String>,
    pub(crate) measure: herd_store::Measure,
    pub(crate) value: f64,
}

impl From<String> for Entry {
    fn from(text: String) -> Entry {
        Entry { text, ..Entry::default() }
    }
}

impl From<&str> for Entry {
    fn from(text: &str) -> Entry {
        Entry { text: text.to_owned(), ..Entry::default() }
    }
}

/// What a table is: the HTML page styles the matrix and the comparison (shares coloured,
/// charts after them) and names every table by its class, so a reader's tools can find it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    #[default]
    Plain,
    Matrix,
    Rows,
    ThenNow,
    Compare,
    Repetitions,
    Counts,
    Health,
    Servers,
    Environment,
    Programs,
}

impl Role {
    /// Its class on the page; None for a plain table.
    pub(crate) fn class(self) -> Option<&'static str> {
        Some(match self {
            Role::Plain => return None,
            Role::Matrix => "matrix",
            Role::Rows => "rows",
            Role::ThenNow => "then-now",
            Role::Compare => "compare",
            Role::Repetitions => "repetitions",
            Role::Counts => "counts",
            Role::Health => "health",
            Role::Servers => "servers",
            Role::Environment => "environment",
            Role::Programs => "programs",
        })
    }

    /// A table of figures set against a baseline, coloured by their share of it.
    pub(crate) fn shares(self) -> bool {
        matches!(self, Role::Matrix | Role::Compare)
    }
}

#[derive(Debug, Default)]
pub(crate) struct Table {
    pub(crate) role: Role,
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: Vec<Vec<Entry>>,
}

impl Table {
    pub(crate) fn with_role(role: Role) -> Table {
        Table { role, ..Table::default() }
    }

    /// Adds columns, each a header and its alignment.
    pub(crate) fn columns(&mut self, columns: &[(&str, Align)]) {
        for &(header, align) in columns {
            self.column(header, align);
        }
    }

    pub(crate) fn column(&mut self, header: &str, align: Align) {
        self.columns.push(Column { header: header.to_owned(), align, continues: false });
    }

    /// A column read as part of the previous one.
    pub(crate) fn continuation(&mut self, header: &str, align: Align) {
        self.columns.push(Column { header: header.to_owned(), align, continues: true });
    }

    /// Adds a row; missing trailing entries are blank, extra ones are dropped.
    pub(crate) fn row(&mut self, entries: Vec<Entry>) {
        let mut entries = entries;
        entries.resize(self.columns.len(), Entry::default());
        self.rows.push(entries);
    }

    /// Adds a row of plain texts.
    pub(crate) fn text_row(&mut self, entries: Vec<String>) {
        self.row(entries.into_iter().map(Entry::from).collect());
    }
}

impl Doc {
    pub(crate) fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }

    /// Adds a heading and its items, when there are items.
    pub(crate) fn section(&mut self, heading: String, items: Vec<String>) {
        if !items.is_empty() {
            self.push(Block::Heading(heading));
            self.push(Block::Items(items));
        }
    }
}
