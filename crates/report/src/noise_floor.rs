//! The noise floor an experiment's A/A control measured (`[runner] controls = N`): one cell
//! run again as its own twin, interleaved with the others. Every report states it; the
//! twin itself is never a row, a baseline or a chart's point.
//!
//! [`split`] takes the twins out of an experiment before anything else sees it (so no table,
//! matrix, chart or comparison needs to know of them) and keeps what they measured: the
//! twin's figure over its cell's (geometric means, with the 95 % interval), the run-to-run
//! variation, and the smallest ratio the experiment's cells can tell from that variation at
//! 95 % with 80 % power (`herd_stats::noise`, which states the formulas). `--compare` calls
//! a change under that smallest difference "within noise".

use std::borrow::Cow;

use herd_stats::noise::{aa_pair, AaPair};
use herd_store::{Measure, StoredExperiment};

use crate::doc::{Block, Doc};
use crate::figures;
use crate::table::measure_name;

/// What an A/A control measured, in one measure.
#[derive(Debug, Clone)]
pub(crate) struct NoiseFloor {
    /// The key of the cell that was twinned, and the step compared (a stepped load's first
    /// step both measured).
    pub(crate) of: String,
    pub(crate) step: Option<String>,
    /// The twin's runs, failed ones included.
    pub(crate) twin_runs: usize,
    /// Figures in the measure of the cell's ok runs, and of its twin's.
    pub(crate) n: usize,
    pub(crate) m: usize,
    /// Ok runs of the cell and of its twin, whatever the measure gives them.
    pub(crate) ok_runs: usize,
    pub(crate) measure: Measure,
    /// None: too few ok runs (one a side at least, three in all) or no positive figures.
    pub(crate) pair: Option<AaPair>,
}

impl NoiseFloor {
    /// The run-to-run variation, when measured.
    pub(crate) fn sd_log(&self) -> Option<f64> {
        self.pair.map(|p| p.sd_log)
    }
}

/// The experiment without its A/A twins, and the noise floor they measured in `measure`
/// (None without a twin). Borrowed as it is when it has none.
pub(crate) fn split(
    exp: &StoredExperiment,
    measure: Measure,
) -> (Cow<'_, StoredExperiment>, Option<NoiseFloor>) {
    let Some(twin) = exp.cells.iter().find(|c| c.control_of.is_some()) else {
        return (Cow::Borrowed(exp), None);
    };
    let of = twin.control_of.clone().unwrap_or_default();
    let (rows, _) = figures::rows(exp);
    let pairs: Vec<(&figures::Row<'_>, &figures::Row<'_>)> = rows
        .iter()
        .filter(|r| r.cell.key == of)
        .filter_map(|a| {
            Some((a, rows.iter().find(|b| b.cell.key == twin.key && b.step == a.step)?))
        })
        .collect();
    let (sa, sb): (&[f64], &[f64]) =
        pairs.first().map_or((&[], &[]), |(a, b)| (a.samples(measure), b.samples(measure)));
    let floor = NoiseFloor {
        step: pairs.first().and_then(|(a, _)| a.step.clone().filter(|_| a.is_ramp_step())),
        of,
        twin_runs: twin.repetitions.len(),
        n: sa.len(),
        m: sb.len(),
        ok_runs: pairs.first().map_or(0, |(a, b)| a.n_ok + b.n_ok),
        measure,
        pair: aa_pair(sa, sb),
    };
    let mut without = exp.clone();
    without.cells.retain(|c| c.control_of.is_none());
    (Cow::Owned(without), Some(floor))
}

/// `+1.2 %` for a ratio of 1.012.
fn percent(ratio: f64) -> String {
    format!("{:+.1} %", (ratio - 1.0) * 100.0)
}

/// The report's section: what the twin showed, and the smallest difference that tells.
pub(crate) fn add(floor: &NoiseFloor, doc: &mut Doc) {
    doc.push(Block::Heading("noise floor (A/A control):".to_owned()));
    let step = floor.step.as_ref().map(|s| format!(" (step {s})")).unwrap_or_default();
    let mut lines = vec![format!(
        "{}{step} was measured {} more times as its own twin, interleaved with the other cells \
         ({} ok runs of the cell, {} of the twin).",
        floor.of, floor.twin_runs, floor.n, floor.m
    )];
    match floor.pair {
        Some(p) => {
            lines.push(format!(
                "The twin came out {} in {} (its geometric mean over the cell's; 95 % CI {} … {}); \
                 runs vary by {:.1} % from run to run (standard deviation of the ln figures, \
                 both pooled).",
                percent(p.ratio),
                measure_name(floor.measure),
                percent(p.low),
                percent(p.high),
                p.sd_log * 100.0
            ));
            let n = floor.n;
            lines.push(match p.mde(n, n) {
                Some(mde) => format!(
                    "Smallest difference this run can tell from noise at 95 % (80 % power), \
                     between two cells of {n} runs: ±{:.1} %; differences under it cannot be \
                     told from noise.",
                    mde * 100.0
                ),
                None => format!(
                    "No smallest detectable difference between cells of {n} run: give each cell \
                     2 runs or more ([repetitions] min)."
                ),
            });
        }
        // Ok runs, but none with a figure in this measure (server CPU not read): another
        // measure shows the floor.
        None if floor.n + floor.m == 0 && floor.ok_runs > 0 => lines.push(format!(
            "{} has no figure for these runs, so the noise floor cannot be measured in it: \
             `herd report --measure requests_per_second` shows it.",
            measure_name(floor.measure)
        )),
        None => lines.push(
            "Too few ok runs for a noise floor: it needs one of the cell and one of its twin at \
             least, three in all, with figures above 0."
                .to_owned(),
        ),
    }
    doc.push(Block::Text(lines));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_signed_to_a_tenth() {
        assert_eq!(percent(1.0117), "+1.2 %");
        assert_eq!(percent(0.9696), "-3.0 %");
        assert_eq!(percent(1.0), "+0.0 %");
    }
}
