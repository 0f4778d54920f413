//! Shared by the CLI's integration tests: the binary as a user runs it.
#![allow(
    dead_code,
    reason = "each test binary uses its own part of this module"
)]

use std::path::Path;
use std::process::{Command, Output};

/// `rectcast ARGS`, run to the end.
pub fn rectcast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(args)
        .output()
        .expect("run rectcast")
}

/// Its stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `cpu`, and `gpu` unless no GPU opens and RECTCAST_REQUIRE_GPU is not 1 (then it says so).
pub fn backends() -> Vec<&'static str> {
    let required = std::env::var("RECTCAST_REQUIRE_GPU").as_deref() == Ok("1");
    if required || rectcast::GpuContext::new().is_ok() {
        vec!["cpu", "gpu"]
    } else {
        eprintln!(
            "SKIPPED the gpu backend: no GPU adapter; set RECTCAST_REQUIRE_GPU=1 to fail instead"
        );
        vec!["cpu"]
    }
}

/// `rectcast ARGS`, which must succeed (else its stderr is the failure).
pub fn ok(args: &[&str]) -> Output {
    let o = rectcast(args);
    assert!(
        o.status.success(),
        "rectcast {}: {}",
        args.join(" "),
        stderr(&o)
    );
    o
}

/// A path as an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
