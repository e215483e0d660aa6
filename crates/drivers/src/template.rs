//! Filling the config templates in `src/templates/`: `@NAME@` placeholders replaced by values.
//! A placeholder alone on its line is a block: each line of the value gets the placeholder's
//! indentation, and an empty value removes the line. Values are pasted once, never scanned
//! again, so a value may contain `@`. No conditionals or loops: the drivers build optional
//! blocks in Rust and hand them in.

use crate::error::DriverError;

/// `text`, the template `name` (`templates/nginx.conf`, or the driver and constant of an
/// inline snippet), with every `@NAME@` of `vars` replaced.
///
/// A placeholder missing from `vars` is a bug in the driver (the golden tests render every
/// template). It is an error in every build, so that no config with `@NAME@` left in it is
/// ever written for a server to misread.
pub(crate) fn fill(
    name: &'static str,
    text: &str,
    vars: &[(&str, &str)],
) -> Result<String, DriverError> {
    let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let unfilled = |placeholder: &str| DriverError::UnfilledPlaceholder {
        template: name,
        placeholder: placeholder.to_owned(),
    };
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let trimmed = body.trim_start();
        let indent = &body[..body.len() - trimmed.len()];
        if let Some(value) = placeholder(trimmed).and_then(lookup) {
            for value_line in value.lines() {
                if !value_line.is_empty() {
                    out.push_str(indent);
                }
                out.push_str(value_line);
                out.push('\n');
            }
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find('@') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let name_len = after.find(|c: char| !is_name_char(c)).unwrap_or(after.len());
            let found = &after[..name_len];
            let closed = name_len > 0 && after[name_len..].starts_with('@');
            match lookup(found) {
                Some(value) if closed => {
                    out.push_str(value);
                    rest = &after[name_len + 1..];
                }
                None if closed => return Err(unfilled(found)),
                _ => {
                    out.push('@');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// `NAME` when `text` is exactly `@NAME@`.
fn placeholder(text: &str) -> Option<&str> {
    let name = text.strip_prefix('@')?.strip_suffix('@')?;
    (!name.is_empty() && name.chars().all(is_name_char)).then_some(name)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, vars: &[(&str, &str)], want: &str) {
        assert_eq!(fill("test.conf", text, vars).unwrap(), want);
    }

    #[test]
    fn inline_values() {
        check("root @ROOT@/x;\n", &[("ROOT", "/srv")], "root /srv/x;\n");
        check("a @A@@B@ b\n", &[("A", "1"), ("B", "2")], "a 12 b\n");
        // Values are not scanned again.
        check("x @A@ y\n", &[("A", "@B@"), ("B", "no")], "x @B@ y\n");
        // A lone @, an email-like word, or a path with @: copied.
        check("user@host @ 1\n", &[], "user@host @ 1\n");
    }

    #[test]
    fn blocks_take_the_indentation_and_vanish_when_empty() {
        let t = "http {\n    @PHP@\n}\n@USER@\nend\n";
        check(
            t,
            &[("PHP", "a;\n\nb {\n    c;\n}\n"), ("USER", "")],
            "http {\n    a;\n\n    b {\n        c;\n    }\n}\nend\n",
        );
    }

    #[test]
    fn last_line_without_newline() {
        check("x @A@", &[("A", "1")], "x 1");
    }

    /// Before: a placeholder without a value was caught by a debug assertion only, so a
    /// release build wrote `@PORT@` into the config. Inline and block placeholders alike.
    #[test]
    fn a_placeholder_without_a_value_is_an_error_naming_it_and_the_template() {
        for text in ["listen @HOST@:@PORT@;\n", "a\n    @PORT@\nb\n"] {
            let err = fill("test.conf", text, &[("HOST", "127.0.0.1")]).unwrap_err();
            let DriverError::UnfilledPlaceholder { template, placeholder } = &err else {
                panic!("{err}")
            };
            assert_eq!((*template, placeholder.as_str()), ("test.conf", "PORT"), "{text:?}");
            let msg = err.to_string();
            assert!(msg.contains("test.conf") && msg.contains("@PORT@"), "{msg}");
        }
    }
}
