//! The command line's surface as a new user meets it: options that do not apply are refused,
//! errors name every way out and their place once, and hints say what to do instead.

mod common;

use common::{rectcast, stderr};
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn failed_saying(o: &Output, says: &[&str]) -> String {
    let err = stderr(o);
    assert!(!o.status.success(), "accepted; stderr: {err}");
    for s in says {
        assert!(err.contains(s), "expected {s:?} in: {err}");
    }
    err
}

struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.csv"), "x0,y0,x1,y1\n0,0,5,5\n1,1,2,2\n").unwrap();
        std::fs::write(
            dir.path().join("r.csv"),
            "min_x,min_y,max_x,max_y\n1,1,3,3\n",
        )
        .unwrap();
        Self { dir }
    }
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }
}

#[test]
fn pairs_refuses_a_broad_phase_it_would_ignore() {
    let scene = Scene::new();
    let (s, r) = (scene.path("s.csv"), scene.path("r.csv"));
    for setting in ["on", "off", "auto"] {
        let o = rectcast(&[
            "pairs",
            "--segments",
            &s,
            "--rects",
            &r,
            "--broad-phase",
            setting,
        ]);
        failed_saying(&o, &["--broad-phase applies to first-hit, hits and count"]);
    }
    assert!(
        rectcast(&[
            "hits",
            "--segments",
            &s,
            "--rects",
            &r,
            "--broad-phase",
            "on"
        ])
        .status
        .success()
    );
}

#[test]
fn a_query_without_targets_names_every_kind_of_target() {
    let scene = Scene::new();
    for command in ["pairs", "first-hit", "hits", "count"] {
        let o = rectcast(&[command, "--segments", &scene.path("s.csv")]);
        failed_saying(&o, &["--rects", "--walls", "--circles", "--polygons"]);
    }
    let o = rectcast(&[
        "render",
        "--segments",
        &scene.path("s.csv"),
        "--out",
        &scene.path("x.png"),
    ]);
    failed_saying(&o, &["--rects", "--walls", "--circles", "--polygons"]);
}

/// What `help` must say of shape `S`'s flag: its record and its rows, from the library.
fn says_what_its_flag_reads<S: rectcast::ShapeRecord>(help: &str) {
    let name = S::NAME;
    let category = <S::Contact as rectcast::ShapeContact>::CATEGORY;
    for said in [
        format!("--{} <{}>", S::PLURAL, S::PLURAL.to_uppercase()),
        format!("({}: columns {} in CSV", S::ABOUT, S::FIELDS.join(",")),
        format!("segment × {name}"),
        format!("Rows (segment, {name}, hit, {category}, t_enter, t_exit) for pairs and hits"),
        format!("({name}, hits) for count"),
    ] {
        assert!(help.contains(&said), "expected {said:?} in:\n{help}");
    }
}

#[test]
fn each_registered_shape_has_a_flag_whose_help_the_library_describes() {
    for command in ["pairs", "first-hit", "hits", "count"] {
        let o = rectcast(&[command, "--help"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let help = String::from_utf8_lossy(&o.stdout);
        says_what_its_flag_reads::<rectcast::Segment>(&help);
        says_what_its_flag_reads::<rectcast::Circle>(&help);
        // Every shape the library holds as records, registered here too.
        for shape in rectcast::registry::SHAPES.iter().filter(|s| s.records) {
            let flag = format!("--{} <", shape.name);
            assert!(help.contains(&flag), "{command}: no {flag:?} in:\n{help}");
        }
    }
}

#[test]
fn an_npy_piped_into_stdin_gets_a_hint_to_name_the_file() {
    let scene = Scene::new();
    let npy = scene.path("s.npy");
    let generated = rectcast(&[
        "gen",
        "--segments",
        "10",
        "--rects",
        "2",
        "--format",
        "npy",
        "--out-dir",
        &scene.path(""),
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let bytes = std::fs::read(scene.path("segments.npy")).unwrap();
    std::fs::write(&npy, &bytes).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(["hits", "--segments", "-", "--rects", &scene.path("r.csv")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(&bytes);
    let o = child.wait_with_output().unwrap();
    failed_saying(
        &o,
        &["stdin:", "not UTF-8", "stdin is read as CSV", "not `-`"],
    );
}

#[test]
fn a_ragged_row_names_its_place_once() {
    let scene = Scene::new();
    std::fs::write(
        scene.dir.path().join("bad.csv"),
        "x0,y0,x1,y1\n1,2,3,4\n1,2,3\n",
    )
    .unwrap();
    let o = rectcast(&[
        "hits",
        "--segments",
        &scene.path("bad.csv"),
        "--rects",
        &scene.path("r.csv"),
    ]);
    let err = failed_saying(
        &o,
        &["bad.csv:3:4: found record with 3 fields, but the header has 4"],
    );
    assert!(
        !err.contains("line:") && !err.contains("byte"),
        "the place twice: {err}"
    );
}

#[test]
fn an_out_into_a_missing_folder_names_the_folder_not_a_hidden_file() {
    let scene = Scene::new();
    let out = scene.path("no/such/folder/hits.csv");
    let o = rectcast(&[
        "hits",
        "--segments",
        &scene.path("s.csv"),
        "--rects",
        &scene.path("r.csv"),
        "--out",
        &out,
    ]);
    let err = failed_saying(
        &o,
        &["hits.csv: no folder", "no/such/folder to write it in"],
    );
    assert!(
        !err.contains(".rectcast-"),
        "names the temporary file: {err}"
    );
}

#[test]
fn bench_keeps_to_the_backends_asked_for() {
    let o = rectcast(&[
        "bench",
        "--query",
        "broad-phase",
        "--segments",
        "2000",
        "--rects",
        "300",
        "--iterations",
        "1",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("brute force"), "{out}");
    assert!(out.contains("gpu: skipped (not asked for"), "{out}");
    assert!(
        !out.contains("llvmpipe") && !out.contains("Vulkan"),
        "a GPU row with --backend cpu: {out}"
    );
    let o = rectcast(&["bench", "--query", "frames", "--backend", "cpu"]);
    failed_saying(&o, &["--query frames measures the GPU", "does not apply"]);
}

/// An NPY file of float64 rows (numpy's `<f8`), written as numpy does.
fn npy_f64(path: &std::path::Path, rows: &[[f64; 4]]) {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, 4), }}",
        rows.len()
    );
    let padding = (10 + dict.len() + 1).next_multiple_of(64) - (10 + dict.len() + 1);
    let text = format!("{dict}{}\n", " ".repeat(padding));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    for row in rows {
        for v in row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn npy_float64_inputs_convert_exactly_or_name_the_value_float32_cannot_hold() {
    let scene = Scene::new();
    let exact = scene.dir.path().join("s8.npy");
    npy_f64(&exact, &[[0.0, 0.0, 5.0, 5.0], [1.0, 1.0, 2.0, 2.0]]);
    let from_f64 = rectcast(&[
        "first-hit",
        "--segments",
        exact.to_str().unwrap(),
        "--rects",
        &scene.path("r.csv"),
    ]);
    let from_csv = rectcast(&[
        "first-hit",
        "--segments",
        &scene.path("s.csv"),
        "--rects",
        &scene.path("r.csv"),
    ]);
    assert!(from_f64.status.success(), "{}", stderr(&from_f64));
    assert_eq!(from_f64.stdout, from_csv.stdout);
    let inexact = scene.dir.path().join("bad8.npy");
    npy_f64(&inexact, &[[0.0, 0.0, 5.0, 5.0], [1.0, 0.1, 2.0, 2.0]]);
    let o = rectcast(&[
        "first-hit",
        "--segments",
        inexact.to_str().unwrap(),
        "--rects",
        &scene.path("r.csv"),
    ]);
    failed_saying(
        &o,
        &[
            "bad8.npy: row 1",
            "value 1 is 0.1 (float64), which float32 cannot hold exactly",
        ],
    );
    let skipped = rectcast(&[
        "first-hit",
        "--segments",
        inexact.to_str().unwrap(),
        "--rects",
        &scene.path("r.csv"),
        "--skip-invalid",
    ]);
    assert!(skipped.status.success(), "{}", stderr(&skipped));
    assert_eq!(
        String::from_utf8_lossy(&skipped.stdout).lines().count(),
        2,
        "the header and row 0"
    );
}
