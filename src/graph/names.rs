//! Tensor names: the `names` attribute of output ports and `output_names` of Results.

/// Splits a names attribute the way OpenVINO 2026.4 does: at commas not preceded by `\`;
/// `\,` becomes `,`; empty items are dropped; no whitespace is trimmed.
pub fn split_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                cur.push(',');
                chars.next();
            }
            ',' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_names;

    #[test]
    fn names_table() {
        let table: &[(&str, &[&str])] = &[
            ("a", &["a"]),
            ("a,b", &["a", "b"]),
            ("a\\,b", &["a,b"]),
            ("a\\,b,c", &["a,b", "c"]),
            (",,", &[]),
            ("", &[]),
            (" b sp ,c", &[" b sp ", "c"]),
            ("a\\b", &["a\\b"]),
            ("x,", &["x"]),
            ("alias a,a_t", &["alias a", "a_t"]),
        ];
        for (text, want) in table {
            assert_eq!(split_names(text), *want, "{text:?}");
        }
    }
}
