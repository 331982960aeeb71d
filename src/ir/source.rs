//! Byte offsets to line:col.

use std::path::Path;
use std::sync::Arc;

use crate::error::{LayerRef, LineCol, Location};

/// The positions of the line starts of a text, so a byte offset can become a line:col.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    /// Byte offset of the start of every line after the first.
    starts: Vec<usize>,
    /// Length of the text in bytes.
    text_len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let starts = memchr::memchr_iter(b'\n', text.as_bytes())
            .map(|i| i + 1)
            .collect();
        LineIndex {
            starts,
            text_len: text.len(),
        }
    }

    /// [`LineIndex::new`] on two threads.
    pub fn new_parallel(text: &str) -> LineIndex {
        let mid = text.len() / 2;
        let (a, b) = text.as_bytes().split_at(mid);
        let (mut first, second) = rayon::join(
            || {
                memchr::memchr_iter(b'\n', a)
                    .map(|i| i + 1)
                    .collect::<Vec<_>>()
            },
            || {
                memchr::memchr_iter(b'\n', b)
                    .map(|i| mid + i + 1)
                    .collect::<Vec<_>>()
            },
        );
        first.extend(second);
        LineIndex {
            starts: first,
            text_len: text.len(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset into `text`, which must be
    /// the text this index was built from.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let offset = offset.min(self.text_len);
        let line = self.starts.partition_point(|&s| s <= offset);
        let line_start = if line == 0 { 0 } else { self.starts[line - 1] };
        let col = text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count());
        LineCol {
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
        }
    }
}

/// An XML text with its file name and line index: turns offsets into [`Location`]s.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    pub file: Arc<Path>,
    pub text: &'a str,
    pub lines: LineIndex,
}

impl<'a> Source<'a> {
    pub fn new(file: Arc<Path>, text: &'a str) -> Source<'a> {
        Source {
            file,
            lines: LineIndex::new(text),
            text,
        }
    }

    pub fn with_lines(file: Arc<Path>, text: &'a str, lines: LineIndex) -> Source<'a> {
        Source { file, text, lines }
    }

    pub fn pos(&self, offset: usize) -> LineCol {
        self.lines.line_col(self.text, offset)
    }

    pub fn locate(&self, offset: usize, layer: Option<LayerRef>) -> Location {
        Location {
            file: self.file.clone(),
            pos: Some(self.pos(offset)),
            layer,
            port: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let text = "ab\nc\u{e9}d\n\nx";
        let idx = LineIndex::new(text);
        let lc = |o| {
            let p = idx.line_col(text, o);
            (p.line, p.col)
        };
        assert_eq!(lc(0), (1, 1));
        assert_eq!(lc(1), (1, 2));
        assert_eq!(lc(3), (2, 1));
        assert_eq!(lc(6), (2, 3)); // after the two-byte é
        assert_eq!(lc(8), (3, 1));
        assert_eq!(lc(9), (4, 1));
        assert_eq!(lc(100), (4, 2));
    }
}
