//! ab's report: text, `-w` HTML, `-e` CSV and `-g` TSV.
