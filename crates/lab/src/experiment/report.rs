//! `[report]`: how `herd report` shows the experiment's tables unless told otherwise: the
//! baseline every other row is a percentage of (`baseline = { path = "direct" }`), and the
//! figure the tables show (`measure = "seconds"`, as seed 001 published its table).

use herd_store::{Measure, ReportDefaults};

use super::error::{choices, Errors};
use super::raw::RawExperiment;
use super::{Experiment, ExperimentError};

pub(super) fn build(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    e: &Experiment,
) -> Result<ReportDefaults, ExperimentError> {
    let Some(r) = &raw.report else { return Ok(ReportDefaults::default()) };
    let baseline = r
        .baseline
        .as_ref()
        .map(|b| super::build::one_axis_value(errs, e, b, "[report] baseline"))
        .transpose()?;
    let measure = match &r.measure {
        None => None,
        Some(m) => Some(
            Measure::from_key(m.get_ref())
                .filter(|known| Measure::TABULATED.contains(known))
                .ok_or_else(|| {
                    let keys: Vec<&str> = Measure::TABULATED.iter().map(|m| m.key()).collect();
                    errs.at(
                        m.span(),
                        format!(
                            "[report] measure = \"{}\" is not a figure the tables show: use {}",
                            m.get_ref(),
                            choices(&keys)
                        ),
                    )
                })?,
        ),
    };
    if let (Some(m), Some(Measure::ConnectionsPerSecond)) = (&r.measure, measure) {
        if let Some(cell) = crate::matrix::cells(e).into_iter().find(|c| c.load.keep_alive) {
            return Err(errs.at(
                m.span(),
                format!(
                    "[report] measure = \"connections_per_second\" needs loads that open a connection per request; cell {}'s load `{}` keeps connections alive: use requests_per_second",
                    cell.key, cell.load_name
                ),
            ));
        }
    }
    Ok(ReportDefaults { baseline, measure })
}
