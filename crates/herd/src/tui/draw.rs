//! The live view's layout, a pure function of the state: the run and its totals; requests
//! per second over time; the latency percentiles over time (from the intended send); the
//! failures by kind; and the one key it takes. Tested on ratatui's test backend; the terminal
//! itself is mod.rs's.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{
    Axis, Block, Chart, Dataset, GraphType, LegendPosition, Paragraph, Row, Table,
};
use ratatui::Frame;

use super::state::View;

/// The percentiles' names and colours, as the chart and the header show them.
const PERCENTILES: [(&str, Color); 4] = [
    ("p50", Color::Green),
    ("p90", Color::Yellow),
    ("p99", Color::LightRed),
    ("p99.9", Color::Magenta),
];

pub(crate) fn draw(f: &mut Frame, v: &View) {
    let kinds = v.failures_by_kind();
    let failure_rows = u16::try_from(kinds.len().clamp(1, 6)).unwrap_or(6) + 2;
    let agents = u16::from(!v.agents_behind.is_empty());
    let [head, rate, latency, failures, foot] = Layout::vertical([
        Constraint::Length(5 + agents),
        Constraint::Min(6),
        Constraint::Min(6),
        Constraint::Length(failure_rows),
        Constraint::Length(1),
    ])
    .areas(f.area());
    header(f, head, v);
    rate_chart(f, rate, v);
    latency_chart(f, latency, v);
    failure_table(f, failures, &kinds);
    let foot_text = if v.stopping {
        "stopping: the summary follows"
    } else {
        "q or Ctrl-C: stop the run (what was measured is kept and summed up)"
    };
    f.render_widget(Paragraph::new(foot_text).style(Style::new().fg(Color::DarkGray)), foot);
}

fn header(f: &mut Frame, area: Rect, v: &View) {
    let step = match (v.step, v.steps) {
        (Some(k), Some(n)) => format!("step {k}/{n} · "),
        _ => String::new(),
    };
    let failed = v.failures.total();
    let now = v.last().map_or_else(|| "-".to_owned(), |s| format!("{:.0}", s.rate));
    let p = v.last().and_then(|s| s.latency_ms);
    let percentiles = match p {
        Some(ms) => PERCENTILES
            .iter()
            .zip(ms)
            .map(|((name, _), ms)| format!("{name} {}", millis(ms)))
            .collect::<Vec<_>>()
            .join("  "),
        None => "no response in the last second".to_owned(),
    };
    let mut lines = vec![
        Line::from(format!(
            "{}{} s · {} requests · {} failed · {} MB read · {} connections open",
            step,
            v.elapsed,
            v.completed,
            failed,
            v.bytes_read / 1_000_000,
            v.open_connections
        )),
        Line::from(format!("last second: {now} req/s · {percentiles} (from the intended send)")),
        Line::from(client_health(v)),
    ];
    if !v.agents_behind.is_empty() {
        let each: Vec<String> = v
            .agents_behind
            .iter()
            .enumerate()
            .map(|(i, b)| match b {
                Some(d) => format!("agent {i} {}", millis(d.as_secs_f64() * 1000.0)),
                None => format!("agent {i} -"),
            })
            .collect();
        lines.push(Line::from(format!(
            "each agent's last second came late by: {}",
            each.join(" · ")
        )));
    }
    let block = Block::bordered().title(format!(" {} ", v.title));
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// The client's health as it forms: its CPU and, in an open loop, how many of its sends fell
/// behind their schedule (the verdict at the end finds a run suspect when
/// [`herd_run::LATE_SHARE_SUSPECT`] of them were [`herd_run::LATE_SEND`] late or more: a
/// second past that already says so).
fn client_health(v: &View) -> String {
    let cpu = v.cpu_cores.map_or_else(|| "-".to_owned(), |c| format!("{c:.2}"));
    if !v.open_loop {
        return format!(
            "client: CPU {cpu} cores (a closed loop: the verdict at its end weighs each worker's \
             CPU)"
        );
    }
    let last = v.last().and_then(|s| s.late_share);
    let worst = v.worst_late_share;
    let word = if worst >= herd_run::LATE_SHARE_SUSPECT {
        "fell behind: suspect or worse"
    } else {
        "on schedule"
    };
    format!(
        "client: CPU {cpu} cores · sends 1 ms+ late: {} now, {} at worst · {word}",
        last.map_or_else(|| "-".to_owned(), percent),
        percent(worst)
    )
}

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

fn rate_chart(f: &mut Frame, area: Rect, v: &View) {
    let points: Vec<(f64, f64)> = v.seconds.iter().map(|s| (s.at as f64 + 1.0, s.rate)).collect();
    let top = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.1;
    let (x0, x1) = x_bounds(v);
    let data =
        [Dataset::default().marker(Marker::Braille).graph_type(GraphType::Line).data(&points)];
    let chart = Chart::new(data.to_vec())
        .block(Block::bordered().title(" requests/s "))
        .x_axis(Axis::default().bounds([x0, x1]).labels([format!("{x0:.0}s"), format!("{x1:.0}s")]))
        .y_axis(Axis::default().bounds([0.0, top]).labels(["0".to_owned(), format!("{top:.0}")]));
    f.render_widget(chart, area);
}

fn latency_chart(f: &mut Frame, area: Rect, v: &View) {
    let series: Vec<Vec<(f64, f64)>> = (0..4)
        .map(|k| {
            v.seconds
                .iter()
                .filter_map(|s| s.latency_ms.map(|ms| (s.at as f64 + 1.0, ms[k])))
                .collect()
        })
        .collect();
    let top = series[3].iter().map(|p| p.1).fold(0.0, f64::max).max(0.001) * 1.1;
    let (x0, x1) = x_bounds(v);
    let data: Vec<Dataset> = series
        .iter()
        .zip(PERCENTILES)
        .map(|(points, (name, colour))| {
            Dataset::default()
                .name(name)
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(colour))
                .data(points)
        })
        .collect();
    let chart = Chart::new(data)
        .block(Block::bordered().title(" latency, each second (ms) "))
        .legend_position(Some(LegendPosition::TopRight))
        .hidden_legend_constraints((Constraint::Ratio(1, 1), Constraint::Ratio(1, 1)))
        .x_axis(Axis::default().bounds([x0, x1]).labels([format!("{x0:.0}s"), format!("{x1:.0}s")]))
        .y_axis(Axis::default().bounds([0.0, top]).labels(["0".to_owned(), millis(top)]));
    f.render_widget(chart, area);
}

fn failure_table(f: &mut Frame, area: Rect, kinds: &[(herd_stats::FailureKind, u64)]) {
    let rows: Vec<Row> = if kinds.is_empty() {
        vec![Row::new(["none so far".to_owned(), String::new()])]
    } else {
        kinds.iter().take(6).map(|(k, n)| Row::new([k.name().to_owned(), n.to_string()])).collect()
    };
    let table = Table::new(rows, [Constraint::Length(16), Constraint::Length(12)])
        .block(Block::bordered().title(" failures by kind "))
        .style(Style::new().add_modifier(Modifier::empty()));
    f.render_widget(table, area);
}

/// The charts' time axis: the seconds kept, at least ten wide.
fn x_bounds(v: &View) -> (f64, f64) {
    let first = v.seconds.front().map_or(0.0, |s| s.at as f64);
    let last = v.seconds.back().map_or(0.0, |s| s.at as f64 + 1.0);
    (first, last.max(first + 10.0))
}

fn millis(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}ms")
    } else if ms >= 1.0 {
        format!("{ms:.2}ms")
    } else {
        format!("{:.0}µs", ms * 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use herd_run::{Interval, RunSecond};
    use herd_stats::FailureKind;

    fn screen(v: &View) -> String {
        crate::tui::drawn(100, 32, v)
    }

    #[test]
    fn the_view_shows_the_run_its_charts_and_its_failures() {
        let mut v = View::new("herd run http://127.0.0.1:8080/ -c 10".into(), Some(3), true);
        for k in 0..5u64 {
            let mut interval = Interval::default();
            for _ in 0..(100 * (k + 1)) {
                interval.completed += 1;
                interval.latency.record_micros(1_500);
            }
            interval.failed = 2;
            interval.open_connections = 10;
            interval.failures.add(FailureKind::Timeout);
            interval.failures.add(FailureKind::Timeout);
            v.add(Some(2), &RunSecond { second: k, length: Duration::from_secs(1), interval });
        }
        v.cpu(0.47, 1.0);
        v.agent_behind(1, Duration::from_micros(2_500));
        let s = screen(&v);
        for want in [
            "herd run http://127.0.0.1:8080/ -c 10",
            "step 2/3 · 5 s · 1500 requests · 10 failed · 0 MB read · 10 connections open",
            "client: CPU 0.47 cores · sends 1 ms+ late: 0.0 % now, 0.0 % at worst · on schedule",
            "last second: 500 req/s · p50 1.50ms",
            "requests/s",
            "latency, each second (ms)",
            "timeout",
            "q or Ctrl-C: stop the run",
            "each agent's last second came late by: agent 0 - · agent 1 2.50ms",
        ] {
            assert!(s.contains(want), "no `{want}` in\n{s}");
        }
        let closed = screen(&View::new("x".into(), None, false));
        assert!(closed.contains("none so far"), "{closed}");
        assert!(closed.contains("client: CPU - cores (a closed loop"), "{closed}");
    }
}
