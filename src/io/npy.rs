//! `.npy` files: reading (v1, v2, v3 headers; little- or big-endian; C or Fortran order) and
//! writing (v1 header, little-endian, C order), for the element types ovir computes with.
//!
//! Written by hand rather than with an npy crate: the format is small, and this way every
//! malformed or hostile header (bad magic, truncated data, unsupported dtype, shape/size
//! disagreement, overflowing shapes) ends in a clear error before anything large is allocated.
//! bf16 has no numpy dtype: bf16 tensors are written as float32 (exactly), and a float32 file
//! given for a bf16 input is rounded to nearest even.

use std::path::Path;

use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use crate::dtype::ElementType;
use crate::tensor::Tensor;

/// Why an `.npy` file cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NpyError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError(msg.into()))
}

/// The parsed header.
#[derive(Debug, PartialEq, Eq)]
struct Header {
    descr: String,
    fortran: bool,
    shape: Vec<usize>,
}

fn parse_header(h: &str) -> Result<Header, NpyError> {
    let mut s = h.trim();
    s = s
        .strip_prefix('{')
        .and_then(|x| x.trim_end().strip_suffix('}'))
        .ok_or_else(|| NpyError("the header is not a {...} dictionary".into()))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (key, after) = quoted(rest)?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| NpyError(format!("no ':' after key {key:?}")))?;
        let after = after.trim_start();
        rest = match key.as_str() {
            "descr" => {
                let (v, r) = quoted(after)?;
                descr = Some(v);
                r
            }
            "fortran_order" => {
                if let Some(r) = after.strip_prefix("True") {
                    fortran = Some(true);
                    r
                } else if let Some(r) = after.strip_prefix("False") {
                    fortran = Some(false);
                    r
                } else {
                    return err("fortran_order is not True or False");
                }
            }
            "shape" => {
                let body = after
                    .strip_prefix('(')
                    .ok_or_else(|| NpyError("shape is not a tuple".into()))?;
                let end = body
                    .find(')')
                    .ok_or_else(|| NpyError("shape tuple is not closed".into()))?;
                let dims = body[..end]
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| {
                        if !t.bytes().all(|b| b.is_ascii_digit()) {
                            return err(format!("shape entry {t:?} is not a non-negative integer"));
                        }
                        t.parse::<usize>()
                            .map_err(|_| NpyError(format!("shape entry {t} is too large")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                shape = Some(dims);
                &body[end + 1..]
            }
            other => return err(format!("unexpected header key {other:?}")),
        };
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(Header {
        descr: descr.ok_or_else(|| NpyError("the header has no 'descr'".into()))?,
        fortran: fortran.ok_or_else(|| NpyError("the header has no 'fortran_order'".into()))?,
        shape: shape.ok_or_else(|| NpyError("the header has no 'shape'".into()))?,
    })
}

/// A `'...'` or `"..."` string at the start of `s`, and the rest.
fn quoted(s: &str) -> Result<(String, &str), NpyError> {
    let q = s
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| {
            NpyError(format!(
                "expected a quoted string at {:?}",
                s.chars().take(20).collect::<String>()
            ))
        })?;
    let body = &s[1..];
    let end = body
        .find(q)
        .ok_or_else(|| NpyError("unterminated string in the header".into()))?;
    Ok((body[..end].to_owned(), &body[end + 1..]))
}

/// numpy type codes (`descr` without the byte-order character) and the element types they
/// hold, for reading and writing. `b1` is numpy's bool (one byte, any non-zero byte true).
const CODES: &[(&str, ElementType)] = &[
    ("f2", ElementType::F16),
    ("f4", ElementType::F32),
    ("f8", ElementType::F64),
    ("i1", ElementType::I8),
    ("i2", ElementType::I16),
    ("i4", ElementType::I32),
    ("i8", ElementType::I64),
    ("u1", ElementType::U8),
    ("u2", ElementType::U16),
    ("u4", ElementType::U32),
    ("u8", ElementType::U64),
    ("b1", ElementType::Boolean),
];

/// Element type, byte size and whether the data are big-endian, from a numpy `descr`.
/// Booleans (`b1`) come back as `Boolean` with one byte.
fn dtype(descr: &str) -> Result<(ElementType, usize, bool), NpyError> {
    // The byte-order character, if ASCII (`split_at` on a byte that starts a multi-byte
    // character would panic: a fuzzer found a descr of 'ě8').
    let (order, code) = descr.split_at_checked(1).unwrap_or(("", descr));
    let big = match order {
        "<" | "|" | "=" => false,
        ">" => true,
        _ => return err(format!("unsupported dtype {descr:?}")),
    };
    match CODES.iter().find(|(c, _)| *c == code) {
        // Every code names a whole number of bytes: the last character.
        Some(&(c, t)) => Ok((t, (c.as_bytes()[1] - b'0') as usize, big)),
        None => err(format!(
            "unsupported dtype {descr:?} (ovir reads float16/32/64, 8- to 64-bit integers and bool)"
        )),
    }
}

/// Reads a tensor from `.npy` bytes (numpy's `bool` as `boolean`). `limit` bounds the data
/// size in bytes.
pub fn read_bytes(bytes: &[u8], limit: u64) -> Result<Tensor, NpyError> {
    let (h, data) = split_header(bytes)?;
    let (et, size, big) = dtype(&h.descr)?;
    let count = h
        .shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| NpyError("the shape has too many elements".into()))?;
    let need = count
        .checked_mul(size)
        .ok_or_else(|| NpyError("the shape has too many elements".into()))?;
    if need as u64 > limit {
        return err(format!(
            "the array needs {need} bytes, more than the limit of {limit}"
        ));
    }
    if data.len() != need {
        return err(format!(
            "the shape {:?} needs {need} bytes of data, the file has {}",
            h.shape,
            data.len()
        ));
    }
    let swapped: Vec<u8>;
    let data = if big && size > 1 {
        swapped = data
            .chunks_exact(size)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        &swapped[..]
    } else {
        data
    };
    let tensor = if !h.fortran {
        Tensor::from_le_bytes(et, &h.shape, data)
            .ok_or_else(|| NpyError("internal error: bad size".into()))?
    } else {
        // Fortran order: the data are the transpose's C-order data.
        let mut rev = h.shape.clone();
        rev.reverse();
        let t = Tensor::from_le_bytes(et, &rev, data)
            .ok_or_else(|| NpyError("internal error: bad size".into()))?;
        to_c_order(t, &h.shape)
    };
    Ok(tensor)
}

/// The header of `.npy` bytes and the rest (the data).
fn split_header(bytes: &[u8]) -> Result<(Header, &[u8]), NpyError> {
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| NpyError("not an .npy file (bad magic)".into()))?;
    let (&major, rest) = rest
        .split_first()
        .ok_or_else(|| NpyError("truncated header".into()))?;
    let (_minor, rest) = rest
        .split_first()
        .ok_or_else(|| NpyError("truncated header".into()))?;
    let (len, rest) = match major {
        1 => {
            let b = rest
                .get(..2)
                .ok_or_else(|| NpyError("truncated header".into()))?;
            (u16::from_le_bytes([b[0], b[1]]) as usize, &rest[2..])
        }
        2 | 3 => {
            let b = rest
                .get(..4)
                .ok_or_else(|| NpyError("truncated header".into()))?;
            (
                u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
                &rest[4..],
            )
        }
        v => return err(format!("unsupported .npy version {v}")),
    };
    let header = rest
        .get(..len)
        .ok_or_else(|| NpyError("truncated header".into()))?;
    let header =
        std::str::from_utf8(header).map_err(|_| NpyError("the header is not text".into()))?;
    let h = parse_header(header)?;
    Ok((h, &rest[len..]))
}

/// The bytes an `.npy` file's data take, from its header (`None` if the header cannot be
/// read): what reading it would need, for a budget check before it is read.
pub fn data_bytes(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(1 << 20)
        .read_to_end(&mut head)
        .ok()?;
    let (h, _) = split_header(&head).ok()?;
    let (_, size, _) = dtype(&h.descr).ok()?;
    h.shape
        .iter()
        .try_fold(size as u64, |a, &d| a.checked_mul(d as u64))
}

fn to_c_order(t: Tensor, shape: &[usize]) -> Tensor {
    fn go<T: crate::tensor::Element>(t: &Tensor, shape: &[usize]) -> Option<Tensor> {
        let v = T::view(t)?;
        let data: Vec<T> = v.iter().copied().collect();
        let f = ArrayD::from_shape_vec(IxDyn(shape).f(), data).ok()?;
        Some(T::wrap(f.as_standard_layout().into_owned()))
    }
    let et = t.element_type();
    crate::dispatch!(any: et, T => go::<T>(&t, shape), _ => None).unwrap_or(t)
}

/// A tensor read from `.npy` as an input of element type `want`: a float32 array feeds a bf16
/// input, rounded to nearest even (numpy has no bf16). Other tensors are returned as they are.
pub fn for_input(t: Tensor, want: Option<ElementType>) -> Tensor {
    match (want, t) {
        (Some(ElementType::Bf16), Tensor::F32(a)) => Tensor::Bf16(a.mapv(half::bf16::from_f32)),
        (_, t) => t,
    }
}

/// A tensor as `.npy` stores it: bf16 as float32 (exactly), everything else unchanged.
pub fn as_stored(t: &Tensor) -> Tensor {
    match t {
        Tensor::Bf16(a) => Tensor::F32(a.mapv(|x| x.to_f32())),
        other => other.clone(),
    }
}

/// Reads an `.npy` file (numpy's `bool` as `boolean`).
pub fn read(path: &Path, limit: u64) -> Result<Tensor, NpyError> {
    // A file far larger than the limit is refused before it is read (headers are at most a
    // few KiB; version 2 allows 4 GiB, which no writer uses).
    let size = std::fs::metadata(path)
        .map_err(|e| NpyError(format!("cannot read: {e}")))?
        .len();
    if size > limit.saturating_add(1 << 20) {
        return err(format!(
            "the file has {size} bytes, more than the limit of {limit} for its data"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| NpyError(format!("cannot read: {e}")))?;
    read_bytes(&bytes, limit)
}

/// `.npy` bytes for a tensor (bf16 as float32).
pub fn to_bytes(t: &Tensor) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(t, &mut out);
    out
}

/// Writes a tensor as `.npy` (bf16 as float32), its data streamed without a copy of the
/// whole tensor.
pub fn write(t: &Tensor, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let stored;
    let t = match t {
        Tensor::Bf16(_) => {
            stored = as_stored(t);
            &stored
        }
        t => t,
    };
    let code = CODES
        .iter()
        .find(|(_, et)| *et == t.element_type())
        .map_or("u1", |(c, _)| c);
    let order = if code.ends_with('1') { '|' } else { '<' };
    let descr = format!("{order}{code}");
    let shape = match t.shape() {
        [] => "()".to_owned(),
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&(header.len() as u16).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    t.write_le(w)
}

/// A name made safe as a file name on every platform: path separators, `:*?"<>|` and control
/// characters become `_`. `None` for names that are empty or start with `.`.
pub fn safe_stem(name: &str) -> Option<String> {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .collect();
    (!stem.is_empty() && !stem.starts_with('.')).then_some(stem)
}

/// The `.npy` file names `ovir run -o` writes for outputs named `names`, in order:
/// `<name>.npy` made safe ([`safe_stem`]), `output_<k>.npy` for an unusable name, and
/// `<name>_<k>.npy` for the second of two outputs that would share a file.
pub fn output_file_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut used = UniqueNames::default();
    names
        .into_iter()
        .enumerate()
        .map(|(k, name)| {
            let stem = safe_stem(name).unwrap_or_else(|| format!("output_{k}"));
            used.claim(format!("{stem}.npy"), || format!("{stem}_{k}.npy"))
        })
        .collect()
}

/// File names handed out in one folder, kept distinct case-insensitively (as macOS and Windows
/// file systems compare them).
#[derive(Debug, Default)]
pub struct UniqueNames(std::collections::HashSet<String>);

impl UniqueNames {
    /// `preferred` if no name given out so far matches it, else `fallback()`.
    pub fn claim(&mut self, preferred: String, fallback: impl FnOnce() -> String) -> String {
        let name = if self.0.contains(&preferred.to_lowercase()) {
            fallback()
        } else {
            preferred
        };
        self.0.insert(name.to_lowercase());
        name
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, renamed into
/// place. On failure nothing is left behind and an existing file is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path` atomically, as [`write_atomic`] does.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A new file (never one that exists, nor where a symbolic link points): a stale temporary
    // file left by a killed process of the same id is passed over.
    let mut k = 0;
    let (tmp, file) = loop {
        let tmp = dir.join(format!(".{name}.{}.{k}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && k < 100 => k += 1,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 16, file);
        fill(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_file_names_are_safe_and_distinct() {
        assert_eq!(
            output_file_names(["y", "a/b:c", "", ".hidden", "y", "Y"]),
            [
                "y.npy",
                "a_b_c.npy",
                "output_2.npy",
                "output_3.npy",
                "y_4.npy",
                "Y_5.npy"
            ]
        );
    }

    #[test]
    fn round_trip_every_type() {
        // Every numeric type .npy has (it has no bf16).
        for et in crate::tensor::TypeSet::NUMERIC
            .types()
            .filter(|&t| t != ElementType::Bf16)
        {
            let size = et.bit_width().unwrap() as usize / 8;
            let bytes: Vec<u8> = (0..6 * size).map(|i| (i * 7 % 251) as u8).collect();
            let t = Tensor::from_le_bytes(et, &[2, 3], &bytes).unwrap();
            let back = read_bytes(&to_bytes(&t), u64::MAX).unwrap();
            assert_eq!(back.to_le_bytes(), t.to_le_bytes(), "{et}");
            assert_eq!(back.shape(), [2, 3]);
        }
        let scalar = Tensor::from_le_bytes(ElementType::I32, &[], &7i32.to_le_bytes()).unwrap();
        assert_eq!(read_bytes(&to_bytes(&scalar), u64::MAX).unwrap(), scalar);
        // The header is padded to a multiple of 64 bytes; then come the 4 data bytes.
        assert_eq!(to_bytes(&scalar).len() % 64, 4);
    }

    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn big_endian_and_fortran_order_are_read() {
        let data: Vec<u8> = [1i32, 2, 3, 4, 5, 6]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let t = read_bytes(
            &npy(
                "{'descr': '>i4', 'fortran_order': False, 'shape': (2, 3), }",
                &data,
            ),
            u64::MAX,
        )
        .unwrap();
        assert_eq!(
            t.view::<i32>().unwrap().iter().copied().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6]
        );
        // Fortran order: column-major data [1,4,2,5,3,6] is the C-order matrix [[1,2,3],[4,5,6]].
        let data: Vec<u8> = [1i32, 4, 2, 5, 3, 6]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let t = read_bytes(
            &npy(
                "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                &data,
            ),
            u64::MAX,
        )
        .unwrap();
        assert_eq!(
            t.view::<i32>().unwrap().iter().copied().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn hostile_files_are_refused() {
        let ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
        let table: &[(Vec<u8>, &str)] = &[
            (b"NUMPY".to_vec(), "bad magic"),
            (npy(ok, &[0; 4]), "needs 8 bytes of data, the file has 4"),
            (npy(ok, &[0; 12]), "needs 8 bytes of data, the file has 12"),
            (
                npy(
                    "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "unsupported dtype",
            ),
            (
                npy(
                    "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "unsupported dtype",
            ),
            (
                npy(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }",
                    &[],
                ),
                "too many elements",
            ),
            (
                npy("{'descr': '<f4', 'shape': (1,), }", &[0; 4]),
                "no 'fortran_order'",
            ),
            (
                npy(
                    "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }",
                    &[0; 4],
                ),
                "not True or False",
            ),
            (
                npy(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                    &[0; 4],
                ),
                "not a non-negative integer",
            ),
            (npy("not a dict", &[]), "not a {...} dictionary"),
            (b"\x93NUMPY\x01\x00\xff\xff{".to_vec(), "truncated header"),
            (b"\x93NUMPY\x09\x00".to_vec(), "unsupported .npy version 9"),
            // Found by the npy fuzz target: a non-ASCII first character in descr panicked.
            (
                npy(
                    "{'descr': '\u{11b}8', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "unsupported dtype \"ě8\"",
            ),
            (
                npy(
                    "{'descr': '', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "unsupported dtype \"\"",
            ),
        ];
        for (bytes, want) in table {
            let e = read_bytes(bytes, u64::MAX).unwrap_err();
            assert!(e.0.contains(want), "{e} does not say {want:?}");
        }
        let big = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }",
            &[],
        );
        assert!(
            read_bytes(&big, 100)
                .unwrap_err()
                .0
                .contains("more than the limit")
        );
    }

    #[test]
    fn booleans_read_any_non_zero_byte_as_true_and_write_as_numpy_does() {
        let bytes = npy(
            "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
            &[0, 1, 7, 255],
        );
        let t = read_bytes(&bytes, u64::MAX).unwrap();
        assert_eq!(
            t.view::<bool>()
                .unwrap()
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [false, true, true, true]
        );
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        let header = String::from_utf8_lossy(&out[10..74]).into_owned();
        assert!(header.contains("'descr': '|b1'"), "{header}");
        assert_eq!(&out[out.len() - 4..], &[0, 1, 1, 1]);
    }
}
