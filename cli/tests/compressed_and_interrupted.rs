//! What `--out` leaves on disk: a `.gz` name holds gzip (read back here with flate2, and by
//! rectcast itself), a compression the CLI does not write is refused with nothing written, and
//! a command ended by any signal whose default is to end it (SIGKILL aside) leaves no hidden
//! temporary file beside `--out`.

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

/// `rectcast pairs` of `segments` and `rects` into `out`, its stderr dropped: long enough
/// (a scene of 2,000,000 x 1,000) to be signalled while it writes.
fn long_job(segments: &Path, rects: &Path, out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rectcast"));
    command
        .args(["pairs", "--segments", segments.to_str().unwrap()])
        .args([
            "--rects",
            rects.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null());
    command
}

#[cfg(unix)]
#[test]
fn any_signal_that_ends_a_long_job_leaves_no_temporary_file() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = tempfile::tempdir().unwrap();
    let (s, r) = scene(dir.path(), 2_000_000, 1_000);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // `None`: not sent, but raised by the job's own write past a file size limit (ulimit -f).
    let sent = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGPIPE,
        libc::SIGALRM,
        libc::SIGXFSZ,
        libc::SIGRTMIN(),
    ];
    for signal in sent.into_iter().map(Some).chain([None]) {
        let mut command = long_job(&s, &r, &out.join("pairs.csv"));
        if signal.is_none() {
            // SAFETY: setrlimit is async-signal-safe, between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    let limit = libc::rlimit {
                        rlim_cur: 4 << 20,
                        rlim_max: 4 << 20,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let mut child = command.spawn().expect("spawn");
            let status = child.wait().unwrap();
            assert_eq!(
                status.signal(),
                Some(libc::SIGXFSZ),
                "a write past the limit ended it by {status:?}"
            );
            assert_eq!(
                entries(&out),
                Vec::<String>::new(),
                "left behind past the file size limit"
            );
            continue;
        }
        let signal = signal.unwrap();
        let mut child = command.spawn().expect("spawn");
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

/// A small scene as CSV: its segments and rects files, and the pairs table over them.
fn csv_scene(dir: &Path) -> (PathBuf, PathBuf, Vec<u8>) {
    let s = dir.join("s.csv");
    let r = dir.join("r.csv");
    std::fs::write(&s, "x0,y0,x1,y1\n0,0,10,10\n5,-1,5,11\n").unwrap();
    std::fs::write(&r, "min_x,min_y,max_x,max_y\n2,2,4,4\n6,0,8,1\n").unwrap();
    let table = ok(rectcast(&[
        "pairs",
        "--segments",
        s.to_str().unwrap(),
        "--rects",
        r.to_str().unwrap(),
    ]))
    .stdout;
    (s, r, table)
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (s, r, _) = csv_scene(dir.path());
    let before = std::fs::read(&s).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&s, dir.path().join("link.csv")).unwrap();
    let link = dir.path().join("link.csv");
    for (input, out) in [(&s, &s), (&r, &r), (&s, &link)] {
        let o = rectcast(&[
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "--out {}", out.display());
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!("is the input {}", input.display())),
            "{said}"
        );
    }
    assert_eq!(std::fs::read(&s).unwrap(), before, "the input was changed");
}

#[cfg(unix)]
#[test]
fn an_output_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let (s, r, table) = csv_scene(dir.path());
    let target = dir.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    let file = target.join("pairs.csv");
    std::fs::write(&file, "an earlier table\n").unwrap();
    let link = dir.path().join("pairs.csv");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    // A link to a file not there yet: the file is made where it points.
    let dangling = dir.path().join("new.csv");
    std::os::unix::fs::symlink(target.join("new.csv"), &dangling).unwrap();
    for (out, written) in [(&link, &file), (&dangling, &target.join("new.csv"))] {
        ok(rectcast(&[
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        assert!(
            std::fs::symlink_metadata(out)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{} is still a link",
            out.display()
        );
        assert_eq!(
            std::fs::read(written).unwrap(),
            table,
            "{} holds the table",
            written.display()
        );
    }
    assert_eq!(
        entries(&target),
        ["new.csv", "pairs.csv"],
        "nothing else left there"
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_or_dev_stdout_as_output_is_written_not_replaced() {
    use std::io::Read as _;
    let dir = tempfile::tempdir().unwrap();
    let (s, r, table) = csv_scene(dir.path());
    let pipe = dir.path().join("rows.csv");
    let made = Command::new("mkfifo").arg(&pipe).status().expect("mkfifo");
    assert!(made.success());
    let reader_pipe = pipe.clone();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        std::fs::File::open(&reader_pipe)
            .and_then(|mut p| p.read_to_end(&mut got))
            .map(|_| got)
    });
    ok(rectcast(&[
        "pairs",
        "--segments",
        s.to_str().unwrap(),
        "--rects",
        r.to_str().unwrap(),
        "--out",
        pipe.to_str().unwrap(),
    ]));
    assert_eq!(
        reader.join().unwrap().expect("the pipe read"),
        table,
        "what the pipe's reader got"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata(&pipe).unwrap().file_type().is_fifo(),
        "the pipe is still a pipe"
    );
    // /dev/stdout: the rows on this command's stdout, and the machine's /dev/stdout untouched.
    let stdout_before =
        std::fs::symlink_metadata("/dev/stdout").map(|m| m.file_type().is_symlink());
    let o = ok(rectcast(&[
        "pairs",
        "--segments",
        s.to_str().unwrap(),
        "--rects",
        r.to_str().unwrap(),
        "--out",
        "/dev/stdout",
    ]));
    assert_eq!(o.stdout, table);
    let stdout_after = std::fs::symlink_metadata("/dev/stdout").map(|m| m.file_type().is_symlink());
    assert_eq!(
        stdout_before.ok(),
        stdout_after.ok(),
        "/dev/stdout was replaced"
    );
}

#[cfg(unix)]
#[test]
fn a_signal_the_job_was_started_ignoring_stays_ignored() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = tempfile::tempdir().unwrap();
    let (s, r) = scene(dir.path(), 2_000_000, 1_000);
    let mut command = long_job(&s, &r, &dir.path().join("pairs.csv"));
    // As nohup starts it.
    // SAFETY: signal is async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = command.spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill with a valid pid of our own child and valid signals.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGHUP) }, 0);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP, ignored, ended the job"
    );
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
}

#[cfg(unix)]
#[test]
fn a_descriptors_name_is_written_as_opened_and_a_regular_file_under_dev_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (s, r, table) = csv_scene(dir.path());
    // >> log: /dev/stdout appends, as the shell opened it.
    let log = dir.path().join("log.csv");
    std::fs::write(&log, "earlier\n").unwrap();
    let command = format!(
        "{} pairs --segments {} --rects {} --out /dev/stdout >> {}",
        env!("CARGO_BIN_EXE_rectcast"),
        s.display(),
        r.display(),
        log.display()
    );
    for _ in 0..2 {
        let status = Command::new("sh").args(["-c", &command]).status().unwrap();
        assert!(status.success());
    }
    let mut want = b"earlier\n".to_vec();
    want.extend(&table);
    want.extend(&table);
    assert_eq!(std::fs::read(&log).unwrap(), want);
    // A regular file under /dev (tmpfs): replaced whole, a longer earlier one's tail gone.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let file = shm.join(format!("rectcast-test-{}.csv", std::process::id()));
        std::fs::write(&file, vec![b'x'; 10_000]).unwrap();
        ok(rectcast(&[
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ]));
        let written = std::fs::read(&file).unwrap();
        let _ = std::fs::remove_file(&file);
        assert_eq!(written, table);
    }
}
