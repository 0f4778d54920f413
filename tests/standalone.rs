//! The library stands alone: a game that depends on `rectcast` builds what the library needs and
//! nothing of the command line's (clap, csv, tiny-skia, Parquet…), and a CPU-only build
//! (`default-features = false`) builds no GPU driver bindings. Read from `cargo tree`.

use std::collections::BTreeSet;
use std::process::Command;

/// The packages in `cargo tree -p rectcast -e normal` (target: this host), with `args` added.
fn tree(args: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "-p",
            "rectcast",
            "-e",
            "normal",
        ])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_library_depends_only_on_its_own_crates() {
    let direct = tree(&["--depth", "1"]);
    let expected = [
        "bytemuck",
        // The exact order of two targets' entries on a rounded tie (src/targets/entry_time.rs).
        "num-bigint",
        "pollster",
        "rayon",
        "rectcast",
        "robust",
        "thiserror",
        "wgpu",
    ];
    assert_eq!(
        direct,
        expected.map(String::from).into(),
        "the library's normal dependencies changed: the CLI's and the tests' belong to their own \
         packages (cli/, [dev-dependencies])"
    );
    let all = tree(&[]);
    let cli_only = [
        "clap",
        "csv",
        "indicatif",
        "tiny-skia",
        "font8x8",
        "tempfile",
        "parquet",
        "arrow-array",
        "arrow-schema",
        "pyo3",
    ];
    for name in cli_only {
        assert!(!all.contains(name), "the library pulls in {name}: {all:?}");
    }
}

#[test]
fn a_cpu_only_build_has_no_gpu_driver_bindings() {
    let all = tree(&[]);
    assert!(
        all.contains("ash"),
        "the default build has Vulkan (ash): {all:?}"
    );
    let cpu_only = tree(&["--no-default-features"]);
    for name in ["ash", "gpu-allocator", "gpu-descriptor", "metal", "windows"] {
        assert!(
            !cpu_only.contains(name),
            "a CPU-only build pulls in {name}: {cpu_only:?}"
        );
    }
}
