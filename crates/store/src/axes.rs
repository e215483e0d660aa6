//! How cells are named by their axis values, for everyone who matches them: the lab's
//! `[[exclude]]` rules and `[published]` figures, and the reports' comparisons between cells.
//! One rule each, so that a value means the same wherever it is written.

/// Whether a cell's axis value `have` is named by `wanted`: the same value, or a sweep's
/// name for each of its sizes (`sizes` names `sizes:1024`).
pub fn names_value(wanted: &str, have: &str) -> bool {
    have == wanted || have.strip_prefix(wanted).is_some_and(|rest| rest.starts_with(':'))
}

/// The label of one size of a sweep: `sizes` at 1024 bytes is `sizes:1024`.
pub fn sweep_label(sweep: &str, size: u64) -> String {
    format!("{sweep}:{size}")
}

/// The size in a sweep's label ([`sweep_label`]): `sizes:1024` → 1024; None for a value
/// that is not one.
pub fn sweep_size(label: &str) -> Option<u64> {
    let (sweep, size) = label.rsplit_once(':')?;
    (!sweep.is_empty()).then_some(())?;
    size.parse().ok()
}

/// Whether the cell with axis values `a` is the cell `b` with `axis` set to `value` (the
/// other axes equal): the `direct` cell beside a path's, the calibration cell beside a
/// server's.
pub fn is_sibling(a: &[(String, String)], b: &[(String, String)], axis: &str, value: &str) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((an, av), (bn, bv))| an == bn && if an == axis { av == value } else { av == bv })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_sweep_name_names_each_of_its_sizes_and_nothing_else() {
        assert!(names_value("nginx", "nginx"));
        assert!(names_value("sizes", "sizes:1024"));
        assert!(!names_value("sizes", "sizes2:1"));
        assert!(!names_value("size", "sizes:1"));
        assert!(!names_value("sizes:1", "sizes:1024"));
    }

    #[test]
    fn sweep_labels_carry_their_size() {
        assert_eq!(sweep_label("sizes", 1024), "sizes:1024");
        assert_eq!(sweep_size("sizes:1024"), Some(1024));
        assert_eq!(sweep_size(&sweep_label("a:b", 7)), Some(7));
        for not in ["page", "sizes:big", ":12", "sizes:"] {
            assert_eq!(sweep_size(not), None, "{not}");
        }
    }

    #[test]
    fn siblings_differ_in_the_one_axis_only() {
        let nat = axes(&[("server", "nginx"), ("path", "nft-dnat")]);
        let direct = axes(&[("server", "nginx"), ("path", "direct")]);
        let other = axes(&[("server", "apache"), ("path", "direct")]);
        assert!(is_sibling(&direct, &nat, "path", "direct"));
        assert!(is_sibling(&direct, &direct, "path", "direct"));
        assert!(!is_sibling(&other, &nat, "path", "direct"));
        assert!(!is_sibling(&nat, &direct, "path", "direct"));
        assert!(!is_sibling(&direct[..1], &nat, "path", "direct"));
    }
}
