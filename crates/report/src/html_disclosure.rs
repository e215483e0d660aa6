//! The disclosure at the end of each experiment on the HTML page: everything a reader needs
//! to judge or repeat the figures. herd's version and methodology, the machine and kernel
//! with the sysctls that shape a benchmark, each program's version, the servers' command
//! lines and every configuration file as it was rendered, the experiment file and its plan.
//! Identical items are shown once, with the repetitions that used them; what each
//! repetition's texts have of their own (its directory, its port: placeholders.rs) is
//! written as a placeholder first, so that the same configuration in fifteen directories is
//! one configuration. The clients' command lines, which name each repetition's own files,
//! and each repetition's values of the placeholders are in the cells' details.

use std::fmt::Write as _;

use herd_store::StoredExperiment;

use crate::doc::{Align, Role, Table};
use crate::html::table;
use crate::html_cells::shell_words;
use crate::placeholders::{self, Own, PORT, RUN_DIR};
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

    let owns = placeholders::of_experiment(exp);
    let mut shown = String::new();
    programs(&mut shown, exp, &owns);
    configs(&mut shown, exp, &owns);
    placeholders_said(page, &shown);
    page.push_str(&shown);
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
fn programs(page: &mut String, exp: &StoredExperiment, owns: &[Vec<Own>]) {
    let mut seen: Vec<([String; 5], usize)> = Vec::new();
    let mut count = |key: [String; 5]| match seen.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => seen.push((key, 1)),
    };
    for (r, own) in repetitions(exp, owns) {
        let c = &r.record.client;
        count([
            "client".into(),
            match &c.io {
                Some(io) => format!("{}, I/O: {io}", c.tool),
                None => c.tool.clone(),
            },
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
                own.generalise(&shell_words(&s.argv)),
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

/// Every configuration file as the servers read it, each distinct text once, with the cells
/// and repetitions that used it.
fn configs(page: &mut String, exp: &StoredExperiment, owns: &[Vec<Own>]) {
    // (server, path, text) → the repetitions that used it, by cell.
    type Users = Vec<(usize, Vec<u32>)>;
    let mut seen: Vec<(String, String, String, Users)> = Vec::new();
    for (i, cell) in exp.cells.iter().enumerate() {
        for (j, r) in cell.repetitions.iter().enumerate() {
            let own = owns.get(i).and_then(|o| o.get(j)).cloned().unwrap_or_default();
            for s in &r.record.servers {
                for (path, text) in &s.configs {
                    let who = format!("{} ({} {})", s.name, s.program, s.version);
                    let text = own.generalise(text);
                    let rep = r.record.repetition.saturating_add(1);
                    let at =
                        seen.iter().position(|(w, p, t, _)| *w == who && p == path && *t == text);
                    let users = match at {
                        Some(k) => &mut seen[k].3,
                        None => {
                            seen.push((who, path.clone(), text, Vec::new()));
                            let last = seen.len() - 1;
                            &mut seen[last].3
                        }
                    };
                    match users.last_mut() {
                        Some((c, reps)) if *c == i => reps.push(rep),
                        _ => users.push((i, vec![rep])),
                    }
                }
            }
        }
    }
    if seen.is_empty() {
        return;
    }
    let all: usize = exp.cells.iter().map(|c| c.repetitions.len()).sum();
    page.push_str("<h4>configuration files, as rendered</h4>\n");
    for (who, path, text, users) in seen {
        let n: usize = users.iter().map(|(_, reps)| reps.len()).sum();
        let used = if n == all {
            "every repetition".to_owned()
        } else {
            users
                .iter()
                .map(|(c, reps)| {
                    let key = exp.cells.get(*c).map_or("", |cell| cell.key.as_str());
                    let reps: Vec<String> = reps.iter().map(u32::to_string).collect();
                    format!(
                        "<a href=\"#experiment-{}-cell-{c}\">{}</a> (repetition{} {})",
                        exp.id.0,
                        escape(key),
                        if reps.len() == 1 { "" } else { "s" },
                        reps.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = writeln!(
            page,
            "<details class=\"config\"><summary><code>{}</code>: {}, {n} repetition{}</summary><p class=\"used\">Used by {used}.</p><pre>{}</pre></details>",
            escape(&path),
            escape(&who),
            if n == 1 { "" } else { "s" },
            escape(&text)
        );
    }
}

/// Every repetition with its own values, in the experiment's order.
fn repetitions<'e>(
    exp: &'e StoredExperiment,
    owns: &[Vec<Own>],
) -> Vec<(&'e herd_store::StoredRepetition, Own)> {
    let mut out = Vec::new();
    for (i, cell) in exp.cells.iter().enumerate() {
        for (j, r) in cell.repetitions.iter().enumerate() {
            out.push((r, owns.get(i).and_then(|o| o.get(j)).cloned().unwrap_or_default()));
        }
    }
    out
}

/// What the placeholders in `shown` (the command lines and files that follow) stand for,
/// where there are some.
fn placeholders_said(page: &mut String, shown: &str) {
    let mut said = Vec::new();
    if shown.contains(&escape(RUN_DIR)) {
        said.push(format!(
            "<code>{}</code> stands for each repetition's own directory",
            escape(RUN_DIR)
        ));
    }
    if shown.contains(&escape(PORT)) {
        said.push(format!(
            "<code>{}</code> for the port its server listened on (its client's URL names it)",
            escape(PORT)
        ));
    }
    if !said.is_empty() {
        let _ = writeln!(
            page,
            "<p class=\"placeholders\">In the command lines and files below, {}. Each repetition's values are in its cell's command lines.</p>",
            said.join(", and ")
        );
    }
}
