//! What `--out` leaves on disk: a `.gz` name holds gzip (read back here with flate2, and by
//! rectcast itself), a compression the CLI does not write is refused with nothing written, and
//! a command ended by SIGINT or SIGTERM leaves no hidden temporary file beside `--out`.

mod common;

use common::rectcast;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("open"))
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("{}: not gzip: {e}", path.display()));
    bytes
}

/// Every entry of `dir`, names only, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn scene(dir: &Path, segments: u32, rects: u32) -> (PathBuf, PathBuf) {
    let n = segments.to_string();
    let m = rects.to_string();
    let out = dir.to_str().unwrap();
    ok(rectcast(&[
        "gen",
        "--kind",
        "random",
        "--segments",
        &n,
        "--rects",
        &m,
        "--format",
        "npy",
        "--out-dir",
        out,
        "--seed",
        "7",
    ]));
    (dir.join("segments.npy"), dir.join("rects.npy"))
}

#[test]
fn gz_outputs_are_gzip_holding_the_plain_outputs_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (s, r) = scene(dir.path(), 500, 40);
    let (s, r) = (s.to_str().unwrap(), r.to_str().unwrap());
    for (args, plain, gz) in [
        (
            vec!["clip", "--segments", s, "--rect", "0,0,500,500"],
            "c.csv",
            "c.csv.gz",
        ),
        (
            vec!["clip", "--segments", s, "--rect", "0,0,500,500"],
            "c.f32",
            "c.F32.GZ",
        ),
        (
            vec!["first-hit", "--segments", s, "--rects", r],
            "f.npy",
            "f.npy.gz",
        ),
        (
            vec!["hits", "--segments", s, "--rects", r],
            "h.csv",
            "h.csv.gz",
        ),
    ] {
        let (plain, gz) = (dir.path().join(plain), dir.path().join(gz));
        ok(rectcast(
            &[&args[..], &["--out", plain.to_str().unwrap()]].concat(),
        ));
        ok(rectcast(
            &[&args[..], &["--out", gz.to_str().unwrap()]].concat(),
        ));
        let want = std::fs::read(&plain).unwrap();
        assert!(!want.is_empty());
        assert!(
            gunzip(&gz) == want,
            "{}: its content differs from {}",
            gz.display(),
            plain.display()
        );
    }
    // And rectcast reads its own .gz output back: clipped segments (of a clip that hits them
    // all) as the segments of another query.
    let whole = dir.path().join("whole.f32.gz");
    ok(rectcast(&[
        "clip",
        "--segments",
        s,
        "--rect",
        "-1e9,-1e9,1e9,1e9",
        "--out",
        whole.to_str().unwrap(),
    ]));
    let from_gz = ok(rectcast(&[
        "count",
        "--segments",
        whole.to_str().unwrap(),
        "--rects",
        r,
    ]));
    let from_npy = ok(rectcast(&["count", "--segments", s, "--rects", r]));
    assert_eq!(from_gz.stdout, from_npy.stdout);
}

#[test]
fn compressions_that_are_not_written_are_refused_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (s, r) = scene(dir.path(), 50, 5);
    let before = entries(dir.path());
    for (out, says) in [
        ("h.csv.zst", ".zst output is not written: gzip (.gz)"),
        ("h.csv.bz2", ".bz2 output is not written"),
        ("h.parquet.gz", "write .parquet, not .parquet.gz"),
    ] {
        let path = dir.path().join(out);
        let o = rectcast(&[
            "hits",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
            "--out",
            path.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{out}: accepted");
        assert!(err.contains(says) && err.contains(out), "{out}: {err}");
        assert_eq!(entries(dir.path()), before, "{out}: something was left");
    }
}

#[cfg(unix)]
#[test]
fn sigint_and_sigterm_during_a_long_job_leave_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let (s, r) = scene(dir.path(), 2_000_000, 1_000);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let target = out.join("pairs.csv");
        let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
            .args([
                "pairs",
                "--segments",
                s.to_str().unwrap(),
                "--rects",
                r.to_str().unwrap(),
            ])
            .args(["--out", target.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Until the temporary file beside --out has data in it (the job is writing).
        let started = std::time::Instant::now();
        loop {
            let writing = std::fs::read_dir(&out).unwrap().any(|e| {
                let e = e.unwrap();
                e.file_name().to_string_lossy().starts_with(".rectcast-")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            });
            if writing {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the job ended before it was interrupted: make it longer"
            );
            assert!(
                started.elapsed().as_secs() < 60,
                "no temporary file appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // SAFETY: kill with a valid pid of our own child and a valid signal.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal().or(status.code().map(|c| c - 128)),
            Some(signal),
            "ended by {status:?}, not by signal {signal}"
        );
        assert_eq!(
            entries(&out),
            Vec::<String>::new(),
            "left behind after signal {signal}"
        );
    }
}
