//! The files a package installs beside the binary, made from the command line's own
//! definitions so that they cannot drift from it: a man page for herd and for each of its
//! commands (`herd man DIR`), and shell completions (`herd completions SHELL`).
//! scripts/package.sh calls both; a user who built herd with cargo can too.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Command, CommandFactory};
use clap_complete::Shell;
use clap_mangen::Man;

use crate::Cli;

/// Prints `shell`'s completion script for herd on stdout.
pub(crate) fn completions(shell: Shell) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    clap_complete::generate(shell, &mut Cli::command(), "herd", &mut out);
    out.flush().context("cannot write the completions to stdout")
}

/// Writes herd.1 and a page for every command that is not hidden (herd-run.1,
/// herd-lab-run.1, …) into `dir`, which must exist; prints each path written.
pub(crate) fn man_pages(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        bail!("{} is not a directory: create it first (mkdir -p {0})", dir.display());
    }
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let mut written = Vec::new();
    write_pages(&cli, dir, &mut written)?;
    let mut out = io::stdout().lock();
    for path in written {
        writeln!(out, "{}", path.display()).context("cannot write to stdout")?;
    }
    Ok(())
}

/// `cmd`'s page and, first, those of its visible commands.
fn write_pages(cmd: &Command, dir: &Path, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    let man = Man::new(cmd.clone()).manual("herd manual");
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    if cmd.get_name() == "ab" {
        ab_page(&man, &mut page)?;
    } else {
        man.render(&mut page)?;
    }
    fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    written.push(path);
    Ok(())
}

/// `herd ab`'s page: its flags are ab's, parsed by herd-ab rather than clap, so its options
/// are the text `herd ab -h` prints (herd_ab::args::usage), kept as it is laid out.
fn ab_page(man: &Man, page: &mut Vec<u8>) -> io::Result<()> {
    man.render_title(page)?;
    man.render_name_section(page)?;
    man.render_description_section(page)?;
    page.extend_from_slice(b".SH OPTIONS\n.nf\n");
    for line in herd_ab::args::usage().lines() {
        page.extend_from_slice(roff_line(line).as_bytes());
        page.push(b'\n');
    }
    page.extend_from_slice(b".fi\n");
    Ok(())
}

/// A line of text as roff prints it literally: backslashes escaped, and a leading `.` or
/// `'` (which would start a request) made ordinary.
fn roff_line(line: &str) -> String {
    let escaped = line.replace('\\', "\\e");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_lines_print_as_written() {
        assert_eq!(roff_line("    -n requests"), "    -n requests");
        assert_eq!(roff_line(".hidden"), "\\&.hidden");
        assert_eq!(roff_line("'quoted'"), "\\&'quoted'");
        assert_eq!(roff_line("a\\b"), "a\\eb");
    }

    /// Every visible command has a page, the hidden helper none, and `herd ab`'s lists ab's
    /// flags.
    #[test]
    fn every_visible_command_gets_a_page() {
        let dir = std::env::temp_dir().join(format!("herd-man-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        man_pages(&dir).unwrap();
        let mut names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for want in ["herd.1", "herd-run.1", "herd-ab.1", "herd-lab-run.1", "herd-serve.1"] {
            assert!(names.iter().any(|n| n == want), "no {want} among {names:?}");
        }
        assert!(!names.iter().any(|n| n.starts_with("herd-host")), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("-help")), "{names:?}");
        let ab = fs::read_to_string(dir.join("herd-ab.1")).unwrap();
        assert!(ab.contains("Number of requests to perform"), "{ab}");
        let run = fs::read_to_string(dir.join("herd-run.1")).unwrap();
        assert!(run.contains("\\-\\-rate"), "herd run's page has its flags");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_refused_with_what_to_do() {
        let e = man_pages(Path::new("/nonexistent/herd-man")).unwrap_err().to_string();
        assert!(e.contains("is not a directory") && e.contains("mkdir -p"), "{e}");
    }
}
