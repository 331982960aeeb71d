//! The memory budget: every tensor execution makes is checked against it before it is
//! allocated, so that a hostile or mistaken model (a `[100000,1] - [1,100000]` broadcast, a
//! huge Const shape) ends in an error instead of the allocator aborting the process.

/// The default budget: the machine's physical memory (from `/proc/meminfo` on Linux;
/// 16 GiB where it cannot be read).
pub fn default_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| physical().unwrap_or(16 << 30))
}

fn physical() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Parses a size: a number of bytes, or with a binary suffix `K`, `M`, `G`, `T` (optionally
/// followed by `B` or `iB`, any case): `512M`, `4GiB`, `1.5G`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "{text:?} is not a size (for example 512M, 4G, 1073741824)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (for example 512M, 4G, 1073741824)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is not a usable memory size"));
    }
    Ok(bytes as u64)
}

/// A byte count for people: `37.3 GiB (40000000000 bytes)`, or `512 bytes`. `u64::MAX` stands
/// for a count that overflowed 64 bits (see `Tensor::bytes`), and says so.
pub fn bytes_text(n: u64) -> String {
    if n == u64::MAX {
        return "more than 16 EiB (the byte count overflows 64 bits)".into();
    }
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = None;
    let mut v = n as f64;
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = Some(u);
    }
    match unit {
        Some(u) => format!("{v:.1} {u} ({n} bytes)"),
        None => format!("{n} bytes"),
    }
}

/// A tensor that would not fit the memory budget: what it is, the bytes it needs, the bytes
/// in use and the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub what: &'static str,
    pub needed: u64,
    pub in_use: u64,
    pub limit: u64,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} needs {}, but {} of the {} memory budget are in use (raise it with --max-memory)",
            self.what,
            bytes_text(self.needed),
            bytes_text(self.in_use),
            bytes_text(self.limit)
        )
    }
}

impl From<OverBudget> for crate::ErrorKind {
    fn from(o: OverBudget) -> crate::ErrorKind {
        crate::ErrorKind::MemoryBudget(o)
    }
}

/// Bytes in use by execution against a limit.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub limit: u64,
    pub in_use: u64,
}

impl Budget {
    /// Checks that `needed` more bytes fit (nothing is recorded: the caller adds what it keeps).
    pub fn check(&self, what: &'static str, needed: u64) -> Result<(), OverBudget> {
        if self.in_use.saturating_add(needed) > self.limit {
            return Err(OverBudget {
                what,
                needed,
                in_use: self.in_use,
                limit: self.limit,
            });
        }
        Ok(())
    }

    pub fn add(&mut self, bytes: u64) {
        self.in_use = self.in_use.saturating_add(bytes);
    }

    pub fn remove(&mut self, bytes: u64) {
        self.in_use = self.in_use.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("99999999T").is_err());
        assert_eq!(bytes_text(512), "512 bytes");
        assert_eq!(bytes_text(40_000_000_000), "37.3 GiB (40000000000 bytes)");
        assert_eq!(bytes_text(1 << 60), "1.0 EiB (1152921504606846976 bytes)");
        assert!(bytes_text(u64::MAX).starts_with("more than 16 EiB"));
    }

    #[test]
    fn budget() {
        let mut b = Budget {
            limit: 100,
            in_use: 0,
        };
        assert!(b.check("output", 100).is_ok());
        b.add(60);
        assert!(b.check("output", 41).is_err());
        b.remove(60);
        assert!(b.check("output", u64::MAX).is_err());
    }
}
