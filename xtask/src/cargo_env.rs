//! Undoing what `cargo run` (and rustup's proxy) add to the xtask's own
//! environment, so every child command sees the environment `scripts/test.sh`
//! gave it. Left in place, `RUSTUP_TOOLCHAIN` would pin every child to the
//! toolchain that built the xtask (overriding a directory's toolchain file),
//! and `LD_LIBRARY_PATH` would point children at this build's libraries.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Variables `cargo run` sets for the program it runs (besides `CARGO_PKG_*`) and
/// rustup's proxy sets for the cargo it starts.
const ADDED: &[&str] = &[
    "CARGO",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_TOOLCHAIN_SOURCE",
    "RUST_RECURSION_COUNT",
];

/// What to change in every child's environment; worked out once.
#[derive(Debug)]
struct Cleanup {
    remove: Vec<OsString>,
    /// `Some(None)`: remove `LD_LIBRARY_PATH`; `Some(Some(v))`: set it to `v`.
    library_path: Option<Option<OsString>>,
}

/// Gives `command` the environment the xtask itself was started with.
pub fn restore(command: &mut Command) {
    static CLEANUP: OnceLock<Cleanup> = OnceLock::new();
    let cleanup = CLEANUP.get_or_init(cleanup);
    for k in &cleanup.remove {
        command.env_remove(k);
    }
    match &cleanup.library_path {
        Some(Some(v)) => {
            command.env("LD_LIBRARY_PATH", v);
        }
        Some(None) => {
            command.env_remove("LD_LIBRARY_PATH");
        }
        None => {}
    }
}

fn cleanup() -> Cleanup {
    let remove = env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| {
            k.to_str()
                .is_some_and(|k| ADDED.contains(&k) || k.starts_with("CARGO_PKG_"))
        })
        .collect();
    // cargo prepends the directory of the binary it runs (and its deps/) and the
    // toolchain's libraries; `CARGO` is `<toolchain>/bin/cargo`.
    let mut ours: Vec<PathBuf> = env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .into_iter()
        .collect();
    ours.extend(
        env::var_os("CARGO")
            .map(PathBuf::from)
            .and_then(|c| Some(c.parent()?.parent()?.to_path_buf())),
    );
    let library_path = env::var_os("LD_LIBRARY_PATH").map(|paths| without_prefixes(&paths, &ours));
    Cleanup {
        remove,
        library_path,
    }
}

/// The search path without the entries under any of `prefixes`; `None` when nothing is left.
fn without_prefixes(paths: &OsString, prefixes: &[PathBuf]) -> Option<OsString> {
    let kept: Vec<PathBuf> = env::split_paths(paths)
        .filter(|p| !prefixes.iter().any(|pre| p.starts_with(pre)))
        .collect();
    if kept.is_empty() {
        None
    } else {
        env::join_paths(kept).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::cmd;

    #[test]
    fn children_do_not_see_what_cargo_set_for_us() {
        // `cargo test` runs this binary with the same additions as `cargo run`.
        let probe = r#"[ -z "$CARGO_PKG_NAME$CARGO_MANIFEST_DIR$CARGO$RUSTUP_TOOLCHAIN" ]"#;
        assert!(cmd("sh", ["-c", probe]).succeeds_quietly());
    }

    #[test]
    fn only_cargos_library_dirs_are_dropped() {
        let ours = [
            PathBuf::from("/w/target/debug"),
            PathBuf::from("/r/toolchains/1.95"),
        ];
        let paths = OsString::from(
            "/w/target/debug:/w/target/debug/deps:/r/toolchains/1.95/lib:/opt/mine/lib",
        );
        assert_eq!(
            without_prefixes(&paths, &ours),
            Some(OsString::from("/opt/mine/lib"))
        );
        let only_cargos = OsString::from("/w/target/debug/deps:/r/toolchains/1.95/lib");
        assert_eq!(without_prefixes(&only_cargos, &ours), None);
    }
}
