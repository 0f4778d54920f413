//! Shared by the CLI's integration tests: the binary as a user runs it.
#![allow(dead_code)]

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
