//! Helpers shared by the integration tests.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};

/// The crate root: tests run the binary from here so paths in output are relative and stable.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `path` relative to the crate root, with `/` separators.
pub fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// A fresh, empty folder `suite/name` for one test, under the target folder (so paths in
/// reports stay short).
pub fn scratch(suite: &str, name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `ovir ARGS` from the crate root and renders exit code, stdout and stderr as one text
/// for a snapshot.
pub fn ovir(args: &[&str]) -> String {
    ovir_in(root(), args)
}

/// Runs `ovir ARGS` from `dir`, rendered as [`ovir`] does.
pub fn ovir_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ovir"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .expect("the ovir binary runs");
    let code = out.status.code().map_or_else(
        || format!("killed by a signal: {:?}", out.status),
        |c| c.to_string(),
    );
    format!(
        "exit code: {code}\n----- stdout -----\n{}----- stderr -----\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
