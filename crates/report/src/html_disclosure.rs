//! The disclosure at the end of each experiment on the HTML page: everything a reader needs
//! to judge or repeat the figures. herd's version and methodology, the machine and kernel
//! with the sysctls that shape a benchmark, each program's version, the servers' command
//! lines and every configuration file as it was rendered, the experiment file and its plan.
//! Identical items are shown once, with how many repetitions used them; the clients'
//! command lines, which name each repetition's own files, are in the cells' details.

use std::fmt::Write as _;

use herd_store::StoredExperiment;

use crate::doc::{Align, Role, Table};
use crate::html::table;
use crate::html_cells::shell_words;
use crate::svg_chart::escape;

pub(crate) fn write(page: &mut String, exp: &StoredExperiment) {
    let e = &exp.experiment;
    page.push_str("<h3>disclosure: how these figures were made</h3>\n<dl class=\"fields\">\n");
    let mut fields = vec![
        ("herd", format!("{} (methodology {})", e.herd_version, e.methodology_version)),
        ("experiment", format!("{} ({})", e.name, e.source)),
        ("status", exp.status.to_string()),
        ("started", e.started_at.clone()),
        ("finished", exp.finished_at.clone().unwrap_or_else(|| "-".into())),
    ];
    if let Some(reference) = &e.reference {
        fields.push(("reference", reference.clone()));
    }
    for (axis, values) in e.axes.iter().zip(&e.axis_values) {
        fields.push(("axis", format!("{axis}: {}", values.join(", "))));
    }
    for (label, value) in fields {
        let _ = writeln!(page, "<dt>{}</dt><dd>{}</dd>", escape(label), escape(&value));
    }
    page.push_str("</dl>\n");

    page.push_str("<h4>machine, kernel and settings</h4>\n");
    if e.environment.is_empty() {
        page.push_str("<p>None recorded.</p>\n");
    } else {
        let mut t = Table::with_role(Role::Environment);
        t.column("setting", Align::Left);
        t.column("value", Align::Left);
        for (k, v) in &e.environment {
            t.text_row(vec![k.clone(), v.clone()]);
        }
        table(page, &t);
    }

    programs(page, exp);
    configs(page, exp);
    for (what, text) in [("the experiment file", &e.definition), ("the plan", &e.plan)] {
        let _ = writeln!(
            page,
            "<details class=\"source\"><summary>{what}</summary><pre>{}</pre></details>",
            escape(text)
        );
    }
}

/// Each program once (client tools and server programs with their versions), and each
/// server command line once, with the repetitions that ran them.
fn programs(page: &mut String, exp: &StoredExperiment) {
    let mut seen: Vec<([String; 5], usize)> = Vec::new();
    let mut count = |key: [String; 5]| match seen.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => seen.push((key, 1)),
    };
    for r in exp.cells.iter().flat_map(|c| &c.repetitions) {
        let c = &r.record.client;
        count([
            "client".into(),
            c.tool.clone(),
            c.version.clone(),
            c.cpus.clone().unwrap_or_else(|| "any".into()),
            String::new(),
        ]);
        for s in &r.record.servers {
            count([
                format!("server {}", s.name),
                s.program.clone(),
                s.version.clone(),
                s.cpus.clone().unwrap_or_else(|| "any".into()),
                shell_words(&s.argv),
            ]);
        }
    }
    page.push_str("<h4>programs and command lines</h4>\n");
    let mut t = Table::with_role(Role::Programs);
    t.columns(&[
        ("role", Align::Left),
        ("program", Align::Left),
        ("version", Align::Left),
        ("cpus", Align::Left),
        ("repetitions", Align::Right),
        ("command line", Align::Left),
    ]);
    for ([role, program, version, cpus, argv], n) in seen {
        let argv = if role == "client" {
            "(each repetition's, in its cell's details)".to_owned()
        } else {
            argv
        };
        t.text_row(vec![role, program, version, cpus, n.to_string(), argv]);
    }
    table(page, &t);
}

/// Every configuration file as the servers read it, each distinct text once.
fn configs(page: &mut String, exp: &StoredExperiment) {
    let mut seen: Vec<(String, String, String, usize)> = Vec::new();
    for r in exp.cells.iter().flat_map(|c| &c.repetitions) {
        for s in &r.record.servers {
            for (path, text) in &s.configs {
                let who = format!("{} ({} {})", s.name, s.program, s.version);
                match seen.iter_mut().find(|(w, p, t, _)| *w == who && p == path && t == text) {
                    Some((.., n)) => *n += 1,
                    None => seen.push((who, path.clone(), text.clone(), 1)),
                }
            }
        }
    }
    if seen.is_empty() {
        return;
    }
    page.push_str("<h4>configuration files, as rendered</h4>\n");
    for (who, path, text, n) in seen {
        let _ = writeln!(
            page,
            "<details class=\"config\"><summary><code>{}</code>: {}, {n} repetition{}</summary><pre>{}</pre></details>",
            escape(&path),
            escape(&who),
            if n == 1 { "" } else { "s" },
            escape(&text)
        );
    }
}
