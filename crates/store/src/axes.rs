//! How cells are named by their axis values, for everyone who matches them: the lab's
//! `[[exclude]]` rules and `[published]` figures, and the reports' comparisons between cells.
//! One rule each, so that a value means the same wherever it is written.

/// Whether a cell's axis value `have` is named by `wanted`: the same value, or a sweep's
/// name for each of its sizes (`sizes` names `sizes:1024`).
pub fn names_value(wanted: &str, have: &str) -> bool {
    have == wanted || have.strip_prefix(wanted).is_some_and(|rest| rest.starts_with(':'))
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
