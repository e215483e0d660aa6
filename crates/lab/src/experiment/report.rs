//! `[report]`: how `herd report` shows the experiment's tables unless told otherwise: the
//! baseline every other row is a percentage of (`baseline = { path = "direct" }`), and the
//! figure the tables show (`measure = "seconds"`, as seed 001 published its table).

use herd_store::{Measure, ReportDefaults};

use super::error::Errors;
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
        .map(|b| super::build::one_axis_value(errs, e, b, "report", "baseline"))
        .transpose()?;
    let measure = r
        .measure
        .as_ref()
        .map(|m| {
            Measure::tabulated(m.get_ref())
                .map_err(|why| errs.at(m.span(), format!("[report] measure = {why}")))
        })
        .transpose()?;
    if let (Some(m), Some(measure)) = (&r.measure, measure) {
        for cell in crate::matrix::runnable(e) {
            super::published::measurable(measure, &cell)
                .map_err(|why| errs.at(m.span(), format!("[report] measure: {why}")))?;
        }
    }
    Ok(ReportDefaults { baseline, measure })
}
