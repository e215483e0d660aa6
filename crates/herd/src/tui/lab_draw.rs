//! The lab view's layout, a pure function of its state: the experiment and where it is; the
//! matrix of cells by repetition, each finished run's figure and each cell's median so far;
//! the run in flight, its rate and latency each second (herd's client); the lab's last notes;
//! the one key it takes. Tested on ratatui's test backend.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::lab_state::{LabView, Mark};

/// Repetition columns shown at most (the last ones, when there are more).
const COLUMNS: u32 = 8;
const REP_WIDTH: usize = 8;
const MEDIAN_WIDTH: usize = 13;

pub(crate) fn draw(f: &mut Frame, v: &LabView) {
    let rows = u16::try_from(v.cells.len().clamp(1, 12)).unwrap_or(12) + 3;
    // Each note on up to two lines.
    let notes = u16::try_from(v.recent_notes().len().max(1) * 2).unwrap_or(8) + 2;
    let [head, matrix, current, notes_area, foot] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(rows),
        Constraint::Min(8),
        Constraint::Length(notes),
        Constraint::Length(1),
    ])
    .areas(f.area());
    header(f, head, v);
    matrix_table(f, matrix, v);
    current_run(f, current, v);
    let lines: Vec<Line> = v.recent_notes().iter().map(|n| Line::from(n.as_str())).collect();
    let notes = Paragraph::new(lines).wrap(Wrap { trim: true });
    f.render_widget(notes.block(Block::bordered().title(" notes ")), notes_area);
    let foot_text = if v.stopping {
        "stopping: the run in flight is being stopped; finished runs are kept"
    } else {
        "q or Ctrl-C: stop the experiment (finished runs are kept; --resume runs the rest)"
    };
    f.render_widget(Paragraph::new(foot_text).style(Style::new().fg(Color::DarkGray)), foot);
}

fn header(f: &mut Frame, area: Rect, v: &LabView) {
    let eta = v.eta().map_or_else(|| "-".to_owned(), clock);
    let failed = if v.failed > 0 { format!(" · {} failed", v.failed) } else { String::new() };
    let now = match &v.current {
        Some(c) => format!(
            "now: run {} · {} · repetition {} · {} s",
            c.n,
            c.key,
            c.repetition + 1,
            c.since.elapsed().as_secs()
        ),
        None => "between runs".to_owned(),
    };
    let lines = vec![
        Line::from(format!(
            "{} of {} runs stored · {} elapsed · ETA {eta}{failed}",
            v.done,
            v.planned,
            clock(v.started.elapsed())
        )),
        Line::from(now),
    ];
    let block = Block::bordered().title(format!(" herd lab run {} ", v.name));
    f.render_widget(Paragraph::new(lines).block(block), area);
}

fn matrix_table(f: &mut Frame, area: Rect, v: &LabView) {
    // The cells' names first; then as many of the last repetitions as fit beside them.
    let key_width = v.cells.iter().map(|k| k.len()).max().unwrap_or(4).clamp(4, 60);
    let room = usize::from(area.width).saturating_sub(key_width + 2 + MEDIAN_WIDTH + 1);
    let fit = u32::try_from(room / (REP_WIDTH + 1)).unwrap_or(COLUMNS).clamp(1, COLUMNS);
    let last = v.repetitions.max(1);
    let first = last.saturating_sub(fit);
    let mut head = vec!["cell".to_owned()];
    head.extend((first..last).map(|r| format!("rep {}", r + 1)));
    head.push(format!("median {}", v.unit));
    // The rows around the run in flight, when the matrix is taller than its space.
    let room = usize::from(area.height.saturating_sub(3)).max(1);
    let at = v.current.as_ref().and_then(|c| v.cells.iter().position(|k| *k == c.key));
    let skip = at.map_or(0, |i| i.saturating_sub(room / 2)).min(v.cells.len().saturating_sub(room));
    let rows: Vec<Row> = v
        .cells
        .iter()
        .skip(skip)
        .take(room)
        .map(|key| {
            let mut cells = vec![key.clone()];
            cells.extend((first..last).map(|r| match v.marks.get(&(key.clone(), r)) {
                Some(Mark::Running) => "running".to_owned(),
                Some(Mark::Figure(x)) => figure(*x),
                Some(Mark::Failed) => "FAILED".to_owned(),
                None => "·".to_owned(),
            }));
            cells.push(v.median(key).map_or_else(|| "-".to_owned(), figure));
            let running = v.current.as_ref().is_some_and(|c| c.key == *key);
            let style =
                if running { Style::new().add_modifier(Modifier::BOLD) } else { Style::new() };
            Row::new(cells).style(style)
        })
        .collect();
    let mut widths = vec![Constraint::Length(u16::try_from(key_width).unwrap_or(60))];
    widths.extend((first..last).map(|_| Constraint::Length(REP_WIDTH as u16)));
    widths.push(Constraint::Length(MEDIAN_WIDTH as u16));
    let title = format!(" {} cells · the figure of each repetition ", v.cells.len());
    let table = Table::new(rows, widths)
        .header(Row::new(head).style(Style::new().add_modifier(Modifier::UNDERLINED)))
        .block(Block::bordered().title(title));
    f.render_widget(table, area);
}

fn current_run(f: &mut Frame, area: Rect, v: &LabView) {
    let title = match &v.current {
        Some(_) => " run in flight".to_owned(),
        None => " run in flight".to_owned(),
    };
    if v.live.is_empty() {
        let why = match &v.current {
            Some(_) => {
                "its figures come each second from herd's client, or at its end from another"
            }
            None => "the next run starts once its servers are up",
        };
        let block = Block::bordered().title(format!("{title} "));
        f.render_widget(Paragraph::new(why).block(block), area);
        return;
    }
    let [rate_area, latency_area] =
        Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).areas(area);
    let x = |i: usize| i as f64 + 1.0;
    let rate: Vec<(f64, f64)> = v.live.iter().enumerate().map(|(i, s)| (x(i), s.rate)).collect();
    let p50: Vec<(f64, f64)> =
        v.live.iter().enumerate().filter_map(|(i, s)| s.latency_ms.map(|l| (x(i), l[0]))).collect();
    let p99: Vec<(f64, f64)> =
        v.live.iter().enumerate().filter_map(|(i, s)| s.latency_ms.map(|l| (x(i), l[1]))).collect();
    let x_top = (v.live.len() as f64).max(10.0);
    let failed: u64 = v.live.iter().map(|s| s.failed).sum();
    let last = v.live.back().map_or(0.0, |s| s.rate);
    let top = rate.iter().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.1;
    let chart = Chart::new(vec![Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .data(&rate)])
    .block(Block::bordered().title(format!("{title}: {last:.0} req/s · {failed} failed ")))
    .x_axis(Axis::default().bounds([0.0, x_top]).labels(["0s".to_owned(), format!("{x_top:.0}s")]))
    .y_axis(Axis::default().bounds([0.0, top]).labels(["0".to_owned(), format!("{top:.0}")]));
    f.render_widget(chart, rate_area);
    let l_top = p99.iter().map(|p| p.1).fold(0.0, f64::max).max(0.001) * 1.1;
    let line = |name: &'static str, colour: Color, points| {
        Dataset::default()
            .name(name)
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(colour))
            .data(points)
    };
    let chart =
        Chart::new(vec![line("p50", Color::Green, &p50), line("p99", Color::LightRed, &p99)])
            .block(Block::bordered().title(" latency (ms, from the intended send) "))
            .x_axis(
                Axis::default()
                    .bounds([0.0, x_top])
                    .labels(["0s".to_owned(), format!("{x_top:.0}s")]),
            )
            .y_axis(
                Axis::default()
                    .bounds([0.0, l_top])
                    .labels(["0".to_owned(), format!("{l_top:.2}")]),
            );
    f.render_widget(chart, latency_area);
}

/// A figure in at most 8 characters.
fn figure(x: f64) -> String {
    if x >= 100_000.0 {
        format!("{:.0}k", x / 1000.0)
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// `1:05`, `1:02:03`.
fn clock(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(v: &LabView) -> String {
        crate::tui::drawn(110, 36, v)
    }

    #[test]
    fn the_view_shows_the_matrix_filling_in_and_the_run_in_flight() {
        let mut v = LabView::new("tiny".into(), None);
        v.cells(&["server=herd,c=1", "server=nginx,c=1"]);
        v.begin(0, 4);
        v.run_started(1, 4, "server=herd,c=1", 0);
        v.run_finished(&herd_lab::runner::progress::RunSummary {
            cell_key: "server=herd,c=1".into(),
            repetition: 0,
            outcome: herd_store::Outcome::Ok,
            requests_per_second: 12345.0,
            mbit_per_second: None,
            failed: 0,
            seconds: 1.0,
            client_flag: None,
        });
        v.note("waiting for TIME_WAIT");
        v.run_started(2, 4, "server=nginx,c=1", 0);
        let s = screen(&v);
        for want in [
            "herd lab run tiny",
            "1 of 4 runs stored",
            "now: run 2 · server=nginx,c=1 · repetition 1",
            "2 cells · the figure of each repetition",
            "rep 1",
            "median req/s",
            "12345",
            "running",
            "waiting for TIME_WAIT",
            "its figures come each second from herd's client",
            "q or Ctrl-C: stop the experiment",
        ] {
            assert!(s.contains(want), "no `{want}` in\n{s}");
        }
    }
}
