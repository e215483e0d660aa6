//! The machine's steal time over a run: the share of its CPUs' time a hypervisor gave to
//! other guests while this one had work (`steal` in /proc/stat's `cpu` line). A guest whose
//! CPUs are taken away wakes late and runs late; an open loop's requests then leave late
//! while herd's threads look idle. The health verdict names it, with this figure.

/// /proc/stat's `cpu` line at one moment: steal and the total of every field, in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StealProbe {
    steal: u64,
    total: u64,
}

impl StealProbe {
    /// Read now; None where /proc/stat cannot be read or has no steal field (old kernels).
    pub(crate) fn start() -> Option<StealProbe> {
        parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Steal's share of all CPU time since [`StealProbe::start`], 0 to 1.
    pub(crate) fn finish(&self) -> Option<f64> {
        StealProbe::start().and_then(|now| now.share_since(self))
    }

    fn share_since(&self, earlier: &StealProbe) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let steal = self.steal.checked_sub(earlier.steal)?;
        (total > 0).then(|| (steal as f64 / total as f64).clamp(0.0, 1.0))
    }
}

/// The `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal [guest
/// guest_nice]. Guest time is already counted in user and nice (proc(5)): not added again.
fn parse(stat: &str) -> Option<StealProbe> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> =
        line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().ok()?;
    let steal = *fields.get(7)?;
    let total = fields.iter().take(8).sum();
    Some(StealProbe { steal, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_a_share_of_all_fields_but_guest() {
        let a = parse("cpu  100 0 50 800 0 0 0 50 7 7\ncpu0 1 2 3\n").unwrap();
        let b = parse("cpu  200 0 50 850 0 0 0 100 70 70\n").unwrap();
        // 200 ticks passed, 50 of them stolen.
        assert_eq!(b.share_since(&a), Some(0.25));
        assert_eq!(a.share_since(&a), None);
        assert_eq!(parse("cpu  1 2 3\n"), None, "no steal field");
        assert_eq!(parse("intr 5\n"), None);
    }

    #[test]
    fn this_machine_reports_it() {
        let p = StealProbe::start().unwrap();
        assert!(p.finish().is_none_or(|s| (0.0..=1.0).contains(&s)));
    }
}
