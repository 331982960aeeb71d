//! The input format of the model targets: the `.xml` bytes, then optionally the separator
//! `0xFF "BIN"` (never in UTF-8 text) and the `.bin` bytes.

pub const SEPARATOR: &[u8] = b"\xffBIN";

pub fn split(data: &[u8]) -> (&[u8], Option<Vec<u8>>) {
    match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (&data[..at], Some(data[at + SEPARATOR.len()..].to_vec())),
        None => (data, None),
    }
}
