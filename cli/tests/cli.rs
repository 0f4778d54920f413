//! The `rectcast` binary as a user runs it: columns, backends, and bad input that names
//! file:line:column, exits non-zero and leaves no output file behind.

mod common;

use common::{backends, rectcast, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rectcast::{Rect, Segment};

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().expect("temp dir"))
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    /// `rows` (segments or walls) written as CSV file `name`.
    fn segments(&self, name: &str, rows: &[Segment]) -> PathBuf {
        let mut text = String::from("x0,y0,x1,y1\n");
        for g in rows {
            text += &format!("{},{},{},{}\n", g.x0, g.y0, g.x1, g.y1);
        }
        self.file(name, &text)
    }
    /// A scene written as `s.csv` and `r.csv`.
    fn scene(&self, (segments, rects): (Vec<Segment>, Vec<Rect>)) -> (PathBuf, PathBuf) {
        let mut r = String::from("min_x,min_y,max_x,max_y\n");
        for b in &rects {
            r += &format!("{},{},{},{}\n", b.min_x, b.min_y, b.max_x, b.max_y);
        }
        (self.segments("s.csv", &segments), self.file("r.csv", &r))
    }
}

fn pairs(segments: &Path, rects: &Path, backend: &str, out: Option<&Path>) -> Output {
    let mut args = vec![
        "pairs",
        "--segments",
        segments.to_str().unwrap(),
        "--rects",
        rects.to_str().unwrap(),
        "--backend",
        backend,
    ];
    if let Some(out) = out {
        args.extend(["--out", out.to_str().unwrap()]);
    }
    rectcast(&args)
}

const SEGMENTS: &str = "x0,y0,x1,y1\n-5,2,15,8\n2,2,8,7\n-3,-4,0,0\n0.1,0,0.1,0\n";
const RECTS: &str = "min_x,min_y,max_x,max_y\n0,0,10,10\n20,20,30,30\n";
const EXPECTED: &str = "\
segment,rect,hit,kind,t_enter,t_exit,entry,exit
0,0,true,cross,0.25,0.75,min_x,max_x
0,1,false,miss,,,,
1,0,true,inside,0,1,,
1,1,false,miss,,,,
2,0,true,enter,1,1,min_x+min_y,
2,1,false,miss,,,,
3,0,true,inside,0,1,,
3,1,false,miss,,,,
";

#[test]
fn pairs_writes_every_pair_segment_major_with_the_documented_columns() {
    let dir = Dir::new();
    let (s, r, out) = (
        dir.file("s.csv", SEGMENTS),
        dir.file("r.csv", RECTS),
        dir.path("out.csv"),
    );
    let o = pairs(&s, &r, "cpu", Some(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), EXPECTED);
}

#[test]
fn pairs_without_out_writes_stdout() {
    let dir = Dir::new();
    let o = pairs(
        &dir.file("s.csv", SEGMENTS),
        &dir.file("r.csv", RECTS),
        "cpu",
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), EXPECTED);
}

#[test]
fn pairs_on_the_gpu_writes_the_same_file_as_the_cpu() {
    let dir = Dir::new();
    let (s, r) = dir.scene(rectcast::scene::random_batch(77, 300, 40, 64.0));
    let cpu = pairs(&s, &r, "cpu", None);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let gpu = pairs(&s, &r, "gpu", None);
    if !gpu.status.success() {
        assert_ne!(
            std::env::var("RECTCAST_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "gpu backend failed: {}",
            stderr(&gpu)
        );
        eprintln!(
            "SKIPPED pairs_on_the_gpu_writes_the_same_file_as_the_cpu: {}",
            stderr(&gpu)
        );
        return;
    }
    let (cpu, gpu) = (
        String::from_utf8(cpu.stdout).unwrap(),
        String::from_utf8(gpu.stdout).unwrap(),
    );
    if let Some((i, (c, g))) = cpu
        .lines()
        .zip(gpu.lines())
        .enumerate()
        .find(|(_, (c, g))| c != g)
    {
        panic!("first differing line {}:\n  cpu {c}\n  gpu {g}", i + 1);
    }
    assert_eq!(cpu.lines().count(), 1 + 300 * 40);
    assert_eq!(cpu, gpu);
}

/// Runs `pairs` on bad input: must fail, name `where_` in its message, and leave `--out` as it
/// was (absent, or an older file untouched).
fn assert_rejected(segments: &str, rects: &str, where_: &str, what: &str) {
    let dir = Dir::new();
    let (s, r) = (
        dir.file("segments.csv", segments),
        dir.file("rects.csv", rects),
    );
    let out = dir.path("out.csv");
    let o = pairs(&s, &r, "cpu", Some(&out));
    let message = stderr(&o);
    assert!(!o.status.success(), "accepted bad input; stderr: {message}");
    assert!(
        message.contains(where_) && message.contains(what),
        "expected {where_:?} and {what:?} in: {message}"
    );
    assert!(!out.exists(), "a partial output file was left behind");
    assert!(o.stdout.is_empty(), "wrote to stdout on failure");
    // An existing output is not touched either.
    std::fs::write(&out, "old").unwrap();
    assert!(!pairs(&s, &r, "cpu", Some(&out)).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    let leftovers = std::fs::read_dir(dir.0.path()).unwrap().count();
    assert_eq!(leftovers, 3, "temporary files left in the output folder");
}

#[test]
fn nan_in_segments_names_file_line_and_column() {
    assert_rejected(
        "x0,y0,x1,y1\n1,2,3,4\n1,NaN,3,4\n",
        RECTS,
        "segments.csv:3:2:",
        "y0 is NaN",
    );
}

#[test]
fn infinity_names_its_column() {
    assert_rejected(
        "x0,y0,x1,y1\n1,2,3,inf\n",
        RECTS,
        "segments.csv:2:4:",
        "y1 is infinite",
    );
}

#[test]
fn out_of_range_value_is_rejected() {
    assert_rejected(
        SEGMENTS,
        "min_x,min_y,max_x,max_y\n0,0,1e19,1\n",
        "rects.csv:2:3:",
        "max_x is 10000000000000000000, beyond",
    );
}

#[test]
fn a_finite_number_too_large_for_f32_is_out_of_range_not_infinite() {
    assert_rejected(
        "x0,y0,x1,y1\n1,2,1e39,4\n",
        RECTS,
        "segments.csv:2:3:",
        "x1 is 1e39, beyond the limit",
    );
}

#[test]
fn min_above_max_names_the_min_column() {
    assert_rejected(
        SEGMENTS,
        "min_x,min_y,max_x,max_y\n0,0,1,1\n5,0,1,1\n",
        "rects.csv:3:1:",
        "min_x is 5, greater than the max 1",
    );
}

#[test]
fn a_word_where_a_number_belongs_is_rejected() {
    assert_rejected(
        "x0,y0,x1,y1\n1,2,3,4\n1,2,three,4\n",
        RECTS,
        "segments.csv:3:3:",
        "x1: \"three\" is not a number",
    );
}

#[test]
fn a_row_with_missing_fields_is_rejected() {
    assert_rejected(
        "x0,y0,x1,y1\n1,2,3,4\n1,2,3\n",
        RECTS,
        "segments.csv:3:",
        "found record with 3 fields",
    );
}

#[test]
fn a_header_without_a_needed_column_names_it() {
    assert_rejected(
        "x,y0,x1,y1\n1,2,3,4\n",
        RECTS,
        "segments.csv:1:",
        "no column x0: the header needs x0,y0,x1,y1 (in any order; other columns are ignored), found x,y0,x1,y1",
    );
    assert_rejected(
        "x0,y0,x1,y1,x0\n1,2,3,4,5\n",
        RECTS,
        "segments.csv:1:",
        "column x0 appears twice",
    );
}

#[test]
fn csv_columns_are_found_by_name_in_any_order_among_others() {
    let dir = Dir::new();
    let (s, r) = (dir.file("s.csv", SEGMENTS), dir.file("r.csv", RECTS));
    // The same records with the columns shuffled and an id and a note beside them.
    let mut shuffled = String::from("id,y1,note,x0,x1,y0\n");
    for (i, line) in SEGMENTS.lines().skip(1).enumerate() {
        let v: Vec<&str> = line.split(',').collect();
        shuffled += &format!("{i},{},bullet {i},{},{},{}\n", v[3], v[0], v[2], v[1]);
    }
    let shuffled = dir.file("shuffled.csv", &shuffled);
    let rects = dir.file(
        "r2.csv",
        "max_y,min_x,team,max_x,min_y\n10,0,red,10,0\n30,20,blue,30,20\n",
    );
    let expected = pairs(&s, &r, "cpu", None);
    let got = pairs(&shuffled, &rects, "cpu", None);
    assert!(got.status.success(), "{}", stderr(&got));
    assert_eq!(
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(&expected.stdout)
    );
    // A bad value is reported at its own CSV column: y0 is column 6 here.
    let bad = dir.file("bad.csv", "id,y1,note,x0,x1,y0\n0,1,a,1,2,NaN\n");
    let o = pairs(&bad, &r, "cpu", None);
    assert!(
        stderr(&o).contains("bad.csv:2:6: y0 is NaN"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_file_is_rejected() {
    let dir = Dir::new();
    let out = dir.path("out.csv");
    let o = pairs(
        &dir.path("nope.csv"),
        &dir.file("r.csv", RECTS),
        "cpu",
        Some(&out),
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("nope.csv") && stderr(&o).contains("cannot open"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn demo_reports_backend_pairs_hits_and_time() {
    let o = rectcast(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "backend: ",
        "pairs: 4194304",
        "hits: ",
        "time: ",
        "game loop: 240 frames of first hits through FrameLoop on ",
        "  fixed cost: opening the engine ",
        "  a frame: median ",
        "  checked: the last frame's 8192 first hits are the CPU's, byte for byte",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    let demo_on_gpu = rectcast(&["demo", "--backend", "gpu", "--frames", "20"]);
    if std::env::var("RECTCAST_REQUIRE_GPU").as_deref() == Ok("1") {
        assert!(demo_on_gpu.status.success(), "{}", stderr(&demo_on_gpu));
        let text = String::from_utf8(demo_on_gpu.stdout).unwrap();
        assert!(
            text.contains("backend: gpu: ") && text.contains("pairs: 4194304"),
            "{text}"
        );
    }
}

#[test]
fn info_lists_the_adapters() {
    let o = rectcast(&["info"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("adapters found: ")
            && text.contains("gpu backend: ")
            && text.contains("auto backend: "),
        "{text}"
    );
}

const QUERY_SEGMENTS: &str = "x0,y0,x1,y1\n0,0.5,10,0.5\n0,5,10,5\n-5,5,15,5\n";
const QUERY_RECTS: &str = "min_x,min_y,max_x,max_y\n6,0,7,1\n2,0,3,1\n2,0,3,1\n";

fn query(command: &str, dir: &Dir, backend: &str) -> String {
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    let rects = dir.file("r.csv", QUERY_RECTS);
    let o = rectcast(&[
        command,
        "--segments",
        segments.to_str().unwrap(),
        "--rects",
        rects.to_str().unwrap(),
        "--backend",
        backend,
    ]);
    assert!(
        o.status.success(),
        "{command} --backend {backend}: {}",
        stderr(&o)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn first_hit_writes_one_row_per_segment_with_ties_to_the_lowest_rect() {
    let dir = Dir::new();
    for backend in backends() {
        assert_eq!(
            query("first-hit", &dir, backend),
            "segment,rect,kind,t_enter,t_exit,entry,exit\n\
             0,1,cross,0.2,0.3,min_x,max_x\n\
             1,,miss,,,,\n\
             2,,miss,,,,\n",
            "{backend}"
        );
    }
}

#[test]
fn hits_writes_only_the_hitting_pairs_in_order() {
    let dir = Dir::new();
    for backend in backends() {
        assert_eq!(
            query("hits", &dir, backend),
            "segment,rect,hit,kind,t_enter,t_exit,entry,exit\n\
             0,0,true,cross,0.6,0.7,min_x,max_x\n\
             0,1,true,cross,0.2,0.3,min_x,max_x\n\
             0,2,true,cross,0.2,0.3,min_x,max_x\n",
            "{backend}"
        );
    }
}

#[test]
fn count_writes_the_hits_of_every_rect() {
    let dir = Dir::new();
    for backend in backends() {
        assert_eq!(
            query("count", &dir, backend),
            "rect,hits\n0,1\n1,1\n2,1\n",
            "{backend}"
        );
    }
}

#[test]
fn clip_to_a_viewport_writes_the_clipped_ends_and_leaves_misses_empty() {
    let dir = Dir::new();
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    for backend in backends() {
        let o = rectcast(&[
            "clip",
            "--segments",
            segments.to_str().unwrap(),
            "--rect",
            "0,0,10,4",
            "--backend",
            backend,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            "segment,kind,x0,y0,x1,y1\n0,inside,0,0.5,10,0.5\n1,miss,,,,\n2,miss,,,,\n",
            "{backend}"
        );
    }
}

#[test]
fn clip_to_per_segment_rects_uses_row_i_for_segment_i() {
    let dir = Dir::new();
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    let rects = dir.file(
        "r.csv",
        "min_x,min_y,max_x,max_y\n2,0,3,1\n0,0,1,1\n0,0,10,10\n",
    );
    let o = rectcast(&[
        "clip",
        "--segments",
        segments.to_str().unwrap(),
        "--rects",
        rects.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "segment,kind,x0,y0,x1,y1\n0,cross,2,0.5,3,0.5\n1,miss,,,,\n2,cross,0,5,10,5\n"
    );
}

#[test]
fn clip_with_a_bad_rect_argument_fails_without_output() {
    let dir = Dir::new();
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    let out = dir.path("out.csv");
    for (rect, message) in [
        ("0,0,10", "expected 4 comma-separated numbers"),
        ("0,0,x,4", "max_x: \"x\" is not a number"),
        ("5,0,1,4", "min_x is 5, greater than the max 1"),
    ] {
        let o = rectcast(&[
            "clip",
            "--segments",
            segments.to_str().unwrap(),
            "--rect",
            rect,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!o.status.success(), "--rect {rect} succeeded");
        assert!(
            stderr(&o).contains(message),
            "--rect {rect}: {}",
            stderr(&o)
        );
        assert!(!out.exists(), "--rect {rect}: output written");
    }
}

#[test]
fn threads_and_simd_options_give_the_same_first_hits() {
    let dir = Dir::new();
    // A scene larger than one block of rects and one task of segments.
    let (s, r) = dir.scene(rectcast::scene::bullet_hell(9, 3000, 300));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "first-hit",
            "--backend",
            "cpu",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = rectcast(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let default = run(&[]);
    assert!(default.lines().count() == 3001, "{default}");
    assert!(
        default.lines().filter(|l| !l.contains(",miss,")).count() > 100,
        "too few hits to compare"
    );
    for simd in rectcast::Simd::available() {
        for threads in ["1", "3"] {
            assert_eq!(
                run(&["--threads", threads, "--simd", simd.name()]),
                default,
                "--threads {threads} --simd {simd}"
            );
        }
    }
}

#[test]
fn an_unsupported_simd_level_is_a_clear_error() {
    let unsupported = [
        rectcast::Simd::Avx512,
        rectcast::Simd::Avx2,
        rectcast::Simd::Portable,
    ]
    .into_iter()
    .find(|s| !s.is_supported());
    let Some(simd) = unsupported else {
        eprintln!("every SIMD level runs here: the error path is covered by tests/fast_cpu.rs");
        return;
    };
    let o = rectcast(&["bench", "--backend", "cpu", "--simd", simd.name()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not supported"), "{}", stderr(&o));
}

#[test]
fn bench_prints_a_table_with_the_scalar_reference_and_ratios() {
    let o = rectcast(&[
        "bench",
        "--query",
        "first-hit",
        "--segments",
        "512",
        "--rects",
        "64",
        "--iterations",
        "2",
        "--backend",
        "cpu",
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let row = |start: &str| {
        out.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no row {start:?} in\n{out}"))
            .to_string()
    };
    assert!(row("backend").contains("Mpairs/s") && row("backend").contains("vs scalar"));
    assert!(row("scalar reference").ends_with("1.0x"), "{out}");
    let simd = rectcast::Simd::detect();
    row(&format!("cpu: {simd}, 1 thread "));
    row(&format!("cpu: {simd}, 2 threads "));
}

/// Runs rectcast with `input` on its stdin; the output, and what it printed on stderr.
fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run rectcast");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from another thread, so a child that stops reading early cannot block the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for rectcast");
    writer.join().unwrap();
    output
}

/// A scene large enough to span several of the CLI's chunks, written as CSV.
fn big_scene(dir: &Dir) -> (PathBuf, PathBuf) {
    dir.scene(rectcast::scene::bullet_hell(11, 300_000, 40))
}

#[test]
fn segments_and_rects_can_come_from_a_pipe() {
    let dir = Dir::new();
    let (s, r) = big_scene(&dir);
    let (s, r) = (s.to_str().unwrap(), r.to_str().unwrap());
    for command in ["first-hit", "count"] {
        let from_file = rectcast(&[command, "--segments", s, "--rects", r, "--backend", "cpu"]);
        assert!(from_file.status.success(), "{}", stderr(&from_file));
        let piped = with_stdin(
            &[command, "--segments", "-", "--rects", r, "--backend", "cpu"],
            &std::fs::read(s).unwrap(),
        );
        assert!(piped.status.success(), "{command}: {}", stderr(&piped));
        assert!(
            piped.stdout == from_file.stdout,
            "{command}: stdin gives other rows"
        );
        let rects_piped = with_stdin(
            &[command, "--segments", s, "--rects", "-", "--backend", "cpu"],
            &std::fs::read(r).unwrap(),
        );
        assert!(
            rects_piped.stdout == from_file.stdout,
            "{command}: rects from stdin differ"
        );
    }
    let clip = ["clip", "--rect", "100,100,900,700", "--backend", "cpu"];
    let from_file = rectcast(&[&clip[..], &["--segments", s]].concat());
    let piped = with_stdin(
        &[&clip[..], &["--segments", "-"]].concat(),
        &std::fs::read(s).unwrap(),
    );
    assert!(
        piped.status.success() && piped.stdout == from_file.stdout,
        "clip from stdin differs"
    );
    let both = with_stdin(&["count", "--segments", "-", "--rects", "-"], b"");
    assert!(
        stderr(&both).contains("only one input can be stdin"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn a_bad_record_late_in_a_pipe_leaves_stdout_empty() {
    let dir = Dir::new();
    let (s, r) = big_scene(&dir);
    // The bad record comes after more than one chunk of rows has been computed.
    let mut input = std::fs::read_to_string(&s).unwrap();
    input += "1,NaN,3,4\n";
    let o = with_stdin(
        &[
            "first-hit",
            "--segments",
            "-",
            "--rects",
            r.to_str().unwrap(),
            "--backend",
            "cpu",
        ],
        input.as_bytes(),
    );
    assert!(!o.status.success());
    assert!(o.stdout.is_empty(), "{} bytes on stdout", o.stdout.len());
    assert!(
        stderr(&o).contains("stdin:300002:2: y0 is NaN"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn gzip_inputs_give_the_rows_of_the_plain_files() {
    use std::io::Write;
    let dir = Dir::new();
    let (s, r) = big_scene(&dir);
    let gzip = |from: &Path, name: &str| {
        let path = dir.path(name);
        let mut z = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        z.write_all(&std::fs::read(from).unwrap()).unwrap();
        z.finish().unwrap();
        path
    };
    let (sz, rz) = (gzip(&s, "s.csv.gz"), gzip(&r, "r.CSV.GZ"));
    let plain = pairs(&s, &r, "cpu", None);
    let zipped = pairs(&sz, &rz, "cpu", None);
    assert!(zipped.status.success(), "{}", stderr(&zipped));
    assert!(zipped.stdout == plain.stdout, "gzip input gives other rows");
    // A binary format inside gzip, streamed: its header's count is checked against the data.
    let npy = dir.path("npy");
    let generated = rectcast(&[
        "gen",
        "--segments",
        "1000",
        "--rects",
        "10",
        "--format",
        "npy",
        "--out-dir",
        npy.to_str().unwrap(),
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let segments = npy.join("segments.npy");
    let bytes = std::fs::read(&segments).unwrap();
    let rects = npy.join("rects.npy");
    let whole = gzip(&segments, "s.npy.gz");
    let cut = dir.path("cut.npy");
    std::fs::write(&cut, &bytes[..bytes.len() - 20]).unwrap();
    let cut = gzip(&cut, "cut.npy.gz");
    let count = |s: &Path| pairs(s, &rects, "cpu", None);
    assert!(
        count(&whole).stdout == count(&segments).stdout,
        "npy.gz differs"
    );
    let o = count(&cut);
    assert!(
        !o.status.success() && stderr(&o).contains("cut.npy.gz: row 998, record: the input ends inside this record, before the 1000 its header promises"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let dir = Dir::new();
    let (s, r) = big_scene(&dir);
    // Dense pairs: 12 million rows, far more than a pipe holds; read one line and close it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args([
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--rects",
            r.to_str().unwrap(),
        ])
        .args(["--backend", "cpu"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert_eq!(first, "segment,rect,hit,kind,t_enter,t_exit,entry,exit\n");
    let o = child.wait_with_output().unwrap();
    assert!(o.stderr.is_empty(), "printed: {}", stderr(&o));
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            o.status.signal(),
            Some(13),
            "ended by SIGPIPE: {:?}",
            o.status
        );
    }
}

#[test]
fn a_clean_run_prints_nothing_on_stderr_without_xdg_runtime_dir() {
    let dir = Dir::new();
    let (s, r) = (dir.file("s.csv", SEGMENTS), dir.file("r.csv", RECTS));
    // `auto` lists the adapters, which is where Mesa complains about XDG_RUNTIME_DIR.
    for backend in ["auto", "cpu"] {
        let o = Command::new(env!("CARGO_BIN_EXE_rectcast"))
            .args(["first-hit", "--segments", s.to_str().unwrap()])
            .args(["--rects", r.to_str().unwrap(), "--backend", backend])
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            o.stderr.is_empty(),
            "--backend {backend} printed: {}",
            stderr(&o)
        );
    }
}

#[test]
fn without_a_gpu_driver_the_reason_for_the_cpu_is_one_short_line() {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_rectcast"))
            .args(args)
            // The Vulkan loader finds no driver at all.
            .env("VK_DRIVER_FILES", "/nonexistent/rectcast.json")
            .env("VK_ICD_FILENAMES", "/nonexistent/rectcast.json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let line = |out: &str, start: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} line in:\n{out}"))
            .to_string()
    };
    // The demo's frame is sooner on the CPU than a GPU's opening: auto tries none.
    let demo = line(&run(&["demo", "--backend", "auto"]), "backend: ");
    assert!(demo.starts_with("backend: cpu: "), "{demo}");
    assert!(demo.len() <= 140, "{} characters: {demo}", demo.len());
    // `info` says which GPU auto would open: none, and why.
    let info = line(&run(&["info"]), "  the GPU auto would open: ");
    assert!(info.len() <= 140, "{} characters: {info}", info.len());
    if cfg!(target_os = "linux") {
        assert!(
            info.contains(
                "no Vulkan driver found; on Debian or Ubuntu: apt-get install mesa-vulkan-drivers"
            ),
            "{info}"
        );
    }
}

#[test]
fn pairs_with_walls_writes_segment_x_segment_rows_as_the_library_decides() {
    let dir = Dir::new();
    let (segments, walls) = (
        rectcast::scene::random_batch(71, 40, 30, 10.0).0,
        rectcast::scene::random_batch(72, 30, 30, 10.0).0,
    );
    let (s, w) = (
        dir.segments("s.csv", &segments),
        dir.segments("w.csv", &walls),
    );
    let o = rectcast(&[
        "pairs",
        "--segments",
        s.to_str().unwrap(),
        "--walls",
        w.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("segment,wall,hit,contact,t_enter,t_exit")
    );
    let want = rectcast::Engine::new(rectcast::Backend::Cpu)
        .unwrap()
        .wall_pairs(&segments, &walls)
        .unwrap();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), want.len());
    let mut hits = 0;
    for (i, (row, c)) in rows.iter().zip(&want).enumerate() {
        let t = |t: f32| {
            if c.hit() {
                t.to_string()
            } else {
                String::new()
            }
        };
        let expected = format!(
            "{},{},{},{},{},{}",
            i / walls.len(),
            i % walls.len(),
            c.hit(),
            c.contact().name(),
            t(c.t_enter),
            t(c.t_exit)
        );
        assert_eq!(*row, expected, "row {i}");
        hits += c.hit() as usize;
    }
    assert!(hits > 10 && hits < want.len(), "{hits} hits");
    // A bad wall names its file, line and column, and no output is left behind.
    let bad = dir.file("bad.csv", "x0,y0,x1,y1\n0,0,1,1\n0,nan,1,1\n");
    let out = dir.path("o.csv");
    let o = rectcast(&[
        "pairs",
        "--segments",
        s.to_str().unwrap(),
        "--walls",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.csv:3:2: y0 is NaN"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // first-hit, hits and count take walls too: the library's answers, row by row.
    let query = |q: &str| {
        let o = rectcast(&[
            q,
            "--segments",
            s.to_str().unwrap(),
            "--walls",
            w.to_str().unwrap(),
            "--backend",
            "cpu",
        ]);
        assert!(o.status.success(), "{q}: {}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let mut engine = rectcast::Engine::new(rectcast::Backend::Cpu).unwrap();
    let first = engine.shape_first_hits(&segments, &walls).unwrap();
    let mut expected = String::from("segment,wall,contact,t_enter,t_exit\n");
    for (i, f) in first.iter().enumerate() {
        expected += &match f {
            Some(h) => format!(
                "{i},{},{},{},{}\n",
                h.shape,
                h.contact.contact().name(),
                h.contact.t_enter,
                h.contact.t_exit
            ),
            None => format!("{i},,miss,,\n"),
        };
    }
    assert_eq!(query("first-hit"), expected);
    let hits = engine.shape_hits(&segments, &walls).unwrap();
    let mut expected = String::from("segment,wall,hit,contact,t_enter,t_exit\n");
    for h in &hits {
        let c = h.contact;
        expected += &format!(
            "{},{},true,{},{},{}\n",
            h.segment,
            h.shape,
            c.contact().name(),
            c.t_enter,
            c.t_exit
        );
    }
    assert_eq!(query("hits"), expected);
    let counts = engine.shape_counts(&segments, &walls).unwrap();
    let mut expected = String::from("wall,hits\n");
    for (w, n) in counts.per_target.iter().enumerate() {
        expected += &format!("{w},{n}\n");
    }
    assert_eq!(query("count"), expected);
    // With the broad phase on or off: the same bytes.
    for broad_phase in ["on", "off"] {
        let o = rectcast(&[
            "count",
            "--segments",
            s.to_str().unwrap(),
            "--walls",
            w.to_str().unwrap(),
            "--broad-phase",
            broad_phase,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            expected,
            "--broad-phase {broad_phase}"
        );
    }
}

#[test]
fn pairs_with_circles_writes_segment_x_circle_rows_as_the_library_decides() {
    let dir = Dir::new();
    let segments = rectcast::scene::random_batch(73, 40, 30, 10.0).0;
    let mut rng = rectcast::scene::SplitMix64::new(74);
    let circles: Vec<rectcast::Circle> = (0..25)
        .map(|_| {
            rectcast::Circle::new(
                rng.range(0.0, 10.0),
                rng.range(0.0, 10.0),
                rng.range(0.0, 3.0),
            )
        })
        .collect();
    let s = dir.segments("s.csv", &segments);
    // Columns in any order, with another one ignored.
    let mut text = String::from("r,name,cy,cx\n");
    for c in &circles {
        text += &format!("{},enemy,{},{}\n", c.r, c.cy, c.cx);
    }
    let c = dir.file("c.csv", &text);
    let run = |circles: &std::path::Path, out: &std::path::Path| {
        rectcast(&[
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--circles",
            circles.to_str().unwrap(),
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let out = dir.path("o.csv");
    let o = run(&c, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("segment,circle,hit,kind,t_enter,t_exit"));
    let want = rectcast::Engine::new(rectcast::Backend::Cpu)
        .unwrap()
        .circle_pairs(&segments, &circles)
        .unwrap();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), want.len());
    let mut hits = 0;
    for (i, (row, c)) in rows.iter().zip(&want).enumerate() {
        let t = |t: f32| {
            if c.hit() {
                t.to_string()
            } else {
                String::new()
            }
        };
        let expected = format!(
            "{},{},{},{},{},{}",
            i / circles.len(),
            i % circles.len(),
            c.hit(),
            c.kind().name(),
            t(c.t_enter),
            t(c.t_exit)
        );
        assert_eq!(*row, expected, "row {i}");
        hits += c.hit() as usize;
    }
    assert!(hits > 10 && hits < want.len(), "{hits} hits");
    // The same circles as .f32 (3 values a record) and .npy (shape [N, 3]): the same rows.
    let raw: Vec<u8> = circles
        .iter()
        .flat_map(|c| [c.cx, c.cy, c.r])
        .flat_map(f32::to_le_bytes)
        .collect();
    let f32_file = dir.path("c.f32");
    std::fs::write(&f32_file, &raw).unwrap();
    let out_f32 = dir.path("o2.csv");
    let o = run(&f32_file, &out_f32);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out_f32).unwrap(), text);
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, 3), }}",
        circles.len()
    );
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let padded = (10 + dict.len() + 1).next_multiple_of(64) - 10;
    npy.extend_from_slice(&(padded as u16).to_le_bytes());
    npy.extend_from_slice(format!("{dict:<width$}\n", width = padded - 1).as_bytes());
    npy.extend_from_slice(&raw);
    let npy_file = dir.path("c.npy");
    std::fs::write(&npy_file, &npy).unwrap();
    let out_npy = dir.path("o3.csv");
    let o = run(&npy_file, &out_npy);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out_npy).unwrap(), text);
    // A negative radius names its file, line and column, and no output is left behind.
    let bad = dir.file("bad.csv", "cx,cy,r\n0,0,1\n0,0,-2\n");
    let out = dir.path("o4.csv");
    let o = run(&bad, &out);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.csv:3:3: r is -2, below 0"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // A rects-shaped .npy is not circles.
    let o = run(&dir.file("four.f32", "0123456789abcdef"), &out);
    assert!(
        !o.status.success() && stderr(&o).contains("12 bytes each"),
        "{}",
        stderr(&o)
    );
    // first-hit and count take circles too.
    let mut engine = rectcast::Engine::new(rectcast::Backend::Cpu).unwrap();
    let first = engine.shape_first_hits(&segments, &circles).unwrap();
    let o = rectcast(&[
        "first-hit",
        "--segments",
        s.to_str().unwrap(),
        "--circles",
        c.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("segment,circle,kind,t_enter,t_exit"));
    for (i, (line, f)) in lines.zip(&first).enumerate() {
        let want = match f {
            Some(h) => format!(
                "{i},{},{},{},{}",
                h.shape,
                h.contact.kind().name(),
                h.contact.t_enter,
                h.contact.t_exit
            ),
            None => format!("{i},,miss,,"),
        };
        assert_eq!(line, want, "segment {i}");
    }
    let counts = engine.shape_counts(&segments, &circles).unwrap();
    let o = rectcast(&[
        "count",
        "--segments",
        s.to_str().unwrap(),
        "--circles",
        c.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want: String = std::iter::once("circle,hits".to_string())
        .chain(
            counts
                .per_target
                .iter()
                .enumerate()
                .map(|(k, n)| format!("{k},{n}")),
        )
        .map(|l| l + "\n")
        .collect();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), want);
}

/// The rows `pairs --polygons` writes for a pair, as the library decides it.
/// A pair's row, its edges' rings read from `polygons`.
fn polygon_row(
    polygons: &rectcast::Polygons,
    segment: usize,
    polygon: usize,
    c: &rectcast::PolygonContact,
) -> String {
    let t = |t: f32| {
        if c.hit() {
            t.to_string()
        } else {
            String::new()
        }
    };
    let edge = |e: u32| {
        if e == rectcast::NO_EDGE {
            String::new()
        } else {
            e.to_string()
        }
    };
    let ring = |e: u32| {
        if e == rectcast::NO_EDGE {
            String::new()
        } else {
            polygons.edge_ring(polygon, e as usize).0.to_string()
        }
    };
    format!(
        "{segment},{polygon},{},{},{},{},{},{},{},{}",
        c.hit(),
        c.kind().name(),
        t(c.t_enter),
        t(c.t_exit),
        edge(c.entry_edge),
        edge(c.exit_edge),
        ring(c.entry_edge),
        ring(c.exit_edge)
    )
}

#[test]
fn pairs_with_polygons_from_wkt_geojson_and_the_flat_form_write_the_same_rows() {
    let dir = Dir::new();
    let segments = rectcast::scene::random_batch(91, 30, 1, 10.0).0;
    let rings: Vec<Vec<[f32; 2]>> = vec![
        vec![[1.0, 1.0], [6.0, 1.0], [6.0, 6.0], [1.0, 6.0]],
        vec![[5.0, 5.0], [9.0, 5.0], [9.0, 9.0], [7.0, 6.5], [5.0, 9.0]],
        vec![[0.5, 7.0], [3.0, 9.5], [0.5, 9.5]],
    ];
    let s = dir.segments("s.csv", &segments);
    let coords = |ring: &Vec<[f32; 2]>, sep: &str, pair: &dyn Fn(f32, f32) -> String| {
        let mut closed = ring.clone();
        closed.push(ring[0]);
        closed
            .iter()
            .map(|&[x, y]| pair(x, y))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let wkt: String = rings
        .iter()
        .map(|r| {
            format!(
                "POLYGON (({}))\n",
                coords(r, ", ", &|x, y| format!("{x} {y}"))
            )
        })
        .collect();
    let geojson = format!(
        r#"{{"type": "FeatureCollection", "features": [{}]}}"#,
        rings
            .iter()
            .map(|r| format!(
                r#"{{"type": "Feature", "properties": {{}}, "geometry": {{"type": "Polygon", "coordinates": [[{}]]}}}}"#,
                coords(r, ", ", &|x, y| format!("[{x}, {y}]"))
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut flat = String::from("x,y\n");
    let mut offsets = vec![0i64];
    for r in &rings {
        for [x, y] in r {
            flat += &format!("{x},{y}\n");
        }
        offsets.push(offsets.last().unwrap() + r.len() as i64);
    }
    let dict = format!(
        "{{'descr': '<i8', 'fortran_order': False, 'shape': ({},), }}",
        offsets.len()
    );
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let padded = (10 + dict.len() + 1).next_multiple_of(64) - 10;
    npy.extend_from_slice(&(padded as u16).to_le_bytes());
    npy.extend_from_slice(format!("{dict:<width$}\n", width = padded - 1).as_bytes());
    npy.extend(offsets.iter().flat_map(|o| o.to_le_bytes()));
    let offsets_file = dir.path("o.npy");
    std::fs::write(&offsets_file, &npy).unwrap();
    let inputs = [
        (dir.file("p.wkt", &wkt), None),
        (dir.file("p.geojson", &geojson), None),
        (dir.file("v.csv", &flat), Some(&offsets_file)),
    ];
    let polygons = rectcast::Polygons::from_rings(&rings).unwrap();
    let want = common_cpu().polygon_pairs(&segments, &polygons).unwrap();
    let mut expected = String::from(
        "segment,polygon,hit,kind,t_enter,t_exit,entry_edge,exit_edge,entry_ring,exit_ring\n",
    );
    for (i, c) in want.iter().enumerate() {
        expected += &polygon_row(&polygons, i / rings.len(), i % rings.len(), c);
        expected += "\n";
    }
    assert!(want.iter().filter(|c| c.hit()).count() > 10);
    // Every format on the CPU, and one on each backend: a process compiles the polygons' GPU
    // kernels afresh, about 20 s on lavapipe, and the format is read before any backend runs.
    let runs = backends()
        .into_iter()
        .map(|backend| (backend, &inputs[0]))
        .chain(inputs[1..].iter().map(|input| ("cpu", input)));
    for (backend, (file, offsets)) in runs {
        let mut args = vec![
            "pairs",
            "--segments",
            s.to_str().unwrap(),
            "--polygons",
            file.to_str().unwrap(),
            "--backend",
            backend,
        ];
        if let Some(o) = offsets {
            args.extend(["--polygon-offsets", o.to_str().unwrap()]);
        }
        let o = rectcast(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            expected,
            "{file:?} on {backend}"
        );
    }
}

fn common_cpu() -> rectcast::Engine {
    rectcast::Engine::new(rectcast::Backend::Cpu).unwrap()
}

#[test]
fn a_polygon_that_is_not_simple_names_its_line_and_leaves_no_output() {
    let dir = Dir::new();
    let s = dir.file("s.csv", "x0,y0,x1,y1\n0,0,1,1\n");
    let p = dir.file(
        "p.wkt",
        "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))\n\n  POLYGON ((0 0, 2 2, 2 0, 0 2, 0 0))\n",
    );
    let out = dir.path("o.csv");
    let run = |p: &Path, extra: &[&str]| {
        let mut args = vec![
            "hits",
            "--segments",
            s.to_str().unwrap(),
            "--polygons",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        rectcast(&args)
    };
    let o = run(&p, &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("p.wkt:3:3: polygon 1: ring is not simple: edges 0 and 2 meet"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // Skipped, it is counted, and polygon ids stay those of the file.
    let o = run(&p, &["--skip-invalid"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipped 1"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "segment,polygon,hit,kind,t_enter,t_exit,entry_edge,exit_edge,entry_ring,exit_ring\n\
         0,0,true,inside,0,1,,,,\n"
    );
    std::fs::remove_file(&out).unwrap();
    // A ring that does not end where it starts: GEOS refuses it, and so does rectcast.
    let open = dir.file("open.wkt", "POLYGON ((0 0, 4 0, 4 4, 0 4))\n");
    let o = run(&open, &[]);
    let said = "open.wkt:1:1: polygon 0: ring 0 is not closed: it ends at 0 4, not at its first vertex 0 0";
    assert!(
        !o.status.success() && stderr(&o).contains(said),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // A bad hole (a bow tie) is named by its polygon's line, its edges numbered as the
    // polygon's.
    let holes = dir.file(
        "h.wkt",
        "POLYGON ((0 0, 9 0, 9 9, 0 9, 0 0), (1 1, 2 2, 2 1, 1 2, 1 1))\n",
    );
    let o = run(&holes, &[]);
    assert!(
        stderr(&o).contains("h.wkt:1:1: polygon 0: ring is not simple: edges 4 and 6 meet"),
        "{}",
        stderr(&o)
    );
    // A repeated vertex is dropped, as GEOS drops it: the polygon is the one without it.
    let repeated = dir.file("r.wkt", "POLYGON ((0 0, 4 0, 4 0, 4 4, 0 4, 0 0))\n");
    let plain = dir.file("q.wkt", "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))\n");
    let (o, want) = (run(&repeated, &[]), std::fs::read(&out).ok());
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&out).unwrap();
    assert!(run(&plain, &[]).status.success());
    assert_eq!(std::fs::read(&out).ok(), want);
    std::fs::remove_file(&out).unwrap();
    let line = dir.file(
        "l.geojson",
        r#"{"type": "LineString", "coordinates": [[0, 0], [1, 1]]}"#,
    );
    let o = run(&line, &[]);
    assert!(
        stderr(&o).contains("a LineString, not a Polygon or MultiPolygon"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn polygons_with_holes_and_multipolygons_from_wkt_and_geojson_answer_alike() {
    let dir = Dir::new();
    // In the hole (a miss), across the hole, from one part of the multipolygon to the other,
    // from outside into the hole (its exit edge the hole's first, on ring 1), and into the
    // multipolygon's second part (edge 3 of polygon 1, on ring 1; of polygon 0, on ring 0).
    let s = dir.file(
        "s.csv",
        "x0,y0,x1,y1\n1.25,1.25,1.5,1.5\n-1,1.5,3,1.5\n8,8,21,21\n1.5,-1,1.5,1.5\n21,19,21,21\n",
    );
    let wkt = dir.file(
        "p.wkt",
        "POLYGON ((0 0, 9 0, 9 9, 0 9, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1))\n\
         MULTIPOLYGON (((7 7, 9 7, 9 9, 7 7)), ((20 20, 22 20, 22 22, 20 22, 20 20)))\n",
    );
    let geojson = dir.file(
        "p.geojson",
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates":
                [[[0, 0], [9, 0], [9, 9], [0, 9], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]}},
            {"type": "Feature", "properties": {}, "geometry": {"type": "MultiPolygon", "coordinates":
                [[[[7, 7], [9, 7], [9, 9], [7, 7]]], [[[20, 20], [22, 20], [22, 22], [20, 22], [20, 20]]]]}}
        ]}"#,
    );
    let want = "segment,polygon,hit,kind,t_enter,t_exit,entry_edge,exit_edge,entry_ring,exit_ring\n\
         1,0,true,enter,0.25,1,3,,0,\n\
         2,0,true,exit,0,0.07692308,,1,,0\n\
         2,1,true,inside,0,1,,,,\n\
         3,0,true,cross,0.4,0.8,0,4,0,1\n\
         4,1,true,enter,0.5,1,3,,1,\n";
    // Every pair's rows, the hitting ones kept, are the hits'.
    for (query, p) in [("hits", &wkt), ("hits", &geojson), ("pairs", &wkt)] {
        let o = rectcast(&[
            query,
            "--segments",
            s.to_str().unwrap(),
            "--polygons",
            p.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = String::from_utf8(o.stdout).unwrap();
        let hitting: Vec<&str> = rows.lines().filter(|r| !r.contains(",false,")).collect();
        assert_eq!(hitting, want.lines().collect::<Vec<_>>(), "{query} {p:?}");
    }
    // First hits name their rings too: the hole's, and the second part's.
    let o = rectcast(&[
        "first-hit",
        "--segments",
        s.to_str().unwrap(),
        "--polygons",
        wkt.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        rows.lines().skip(4).collect::<Vec<_>>(),
        ["3,0,cross,0.4,0.8,0,4,0,1", "4,1,enter,0.5,1,3,,1,"],
        "{rows}"
    );
}

#[test]
fn overlaps_lists_the_overlapping_pairs_of_polygons() {
    let dir = Dir::new();
    let a = dir.file(
        "a.wkt",
        "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))\nPOLYGON ((10 10, 12 10, 11 12, 10 10))\n",
    );
    let b = dir.file(
        "b.wkt",
        "POLYGON ((1 1, 2 1, 2 2, 1 1))\nPOLYGON ((4 4, 6 4, 6 6, 4 4))\nPOLYGON ((12 10, 14 10, 14 12, 12 10))\nPOLYGON ((20 20, 21 20, 21 21, 20 20))\n",
    );
    for backend in backends() {
        let o = rectcast(&[
            "overlaps",
            "--polygons",
            a.to_str().unwrap(),
            "--other",
            b.to_str().unwrap(),
            "--backend",
            backend,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        // Containment (0, 0), a shared corner (0, 1) and (1, 2); apart (x, 3).
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            "polygon,other\n0,0\n0,1\n1,2\n",
            "{backend}"
        );
    }
}

#[test]
fn ewkt_srid_prefixes_are_read_and_reported_and_z_coordinates_refused() {
    let dir = Dir::new();
    let s = dir.file("s.csv", "x0,y0,x1,y1\n-1,1,5,1\n");
    let run = |p: &Path| {
        rectcast(&[
            "hits",
            "--segments",
            s.to_str().unwrap(),
            "--polygons",
            p.to_str().unwrap(),
        ])
    };
    // PostGIS's EWKT: the SRID is said once and ignored; the rows are the plain WKT's.
    let ewkt = dir.file(
        "e.wkt",
        "SRID=4326;POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))\nsrid=4326 ; MULTIPOLYGON (((10 10, 11 10, 11 11, 10 10)))\n",
    );
    let plain = dir.file(
        "p.wkt",
        "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))\nMULTIPOLYGON (((10 10, 11 10, 11 11, 10 10)))\n",
    );
    let (o, want) = (run(&ewkt), run(&plain));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, want.stdout);
    assert!(
        stderr(&o).contains("e.wkt: EWKT SRID=4326, ignored: coordinates are used as given"),
        "{}",
        stderr(&o)
    );
    for (text, message) in [
        (
            "SRID=4326;POLYGON ((0 0, 4 0, 4 4, 0 0))\nSRID=3857;POLYGON ((0 0, 4 0, 4 4, 0 0))\n",
            "b.wkt:2:1: SRID=3857, but line 1 has SRID=4326",
        ),
        (
            "SRID=x;POLYGON ((0 0, 4 0, 4 4, 0 0))\n",
            "b.wkt:1:1: an EWKT prefix \"SRID=x\" whose SRID is not an integer",
        ),
        (
            "POLYGON ((0 0, 4 0, 4 4, 0 0))\n  POLYGON Z ((0 0 1, 4 0 1, 4 4 1, 0 0 1))\n",
            "b.wkt:2:3: polygon 1: a POLYGON Z: rectcast is 2-d",
        ),
        // Text that is not WKT: the column of its first token that does not fit.
        (
            "POLYGON ((0 0, 4 0, 4 4, 0 0))\n  POLYGON ((0 0, 4 0, 4 x4, 0 0))\n",
            "b.wkt:2:25: polygon 1: not WKT: ",
        ),
    ] {
        let bad = dir.file("b.wkt", text);
        let o = run(&bad);
        assert!(
            !o.status.success() && stderr(&o).contains(message),
            "{}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn polylines_from_wkt_and_geojson_are_their_segments_with_their_line_and_place() {
    let dir = Dir::new();
    let boxes = dir.file(
        "r.csv",
        "min_x,min_y,max_x,max_y\n1,0,2,1\n2.5,2,4,4\n1,-1,2,0\n",
    );
    // A repeated vertex (dropped), a MULTILINESTRING of three parts, one of them a point.
    let wkt = dir.file(
        "roads.wkt",
        "LINESTRING (0 0.5, 3 0.5, 3 0.5, 3 3)\n\n\
         MULTILINESTRING ((-1 -1, -0.5 -0.5), (5 5), (1.5 -2, 1.5 2, 1.75 0.5))\n",
    );
    let geojson = dir.file(
        "roads.geojson",
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {"name": "a"}, "geometry": {"type": "LineString",
                "coordinates": [[0, 0.5], [3, 0.5], [3, 0.5], [3, 3]]}},
            {"type": "Feature", "properties": {"name": "b"}, "geometry": {"type": "MultiLineString",
                "coordinates": [[[-1, -1], [-0.5, -0.5]], [[5, 5]], [[1.5, -2], [1.5, 2], [1.75, 0.5]]]}}
        ]}"#,
    );
    // The same segments as records, and each one's line and place in it.
    let csv = dir.file(
        "s.csv",
        "x0,y0,x1,y1\n0,0.5,3,0.5\n3,0.5,3,3\n-1,-1,-0.5,-0.5\n5,5,5,5\n1.5,-2,1.5,2\n1.5,2,1.75,0.5\n",
    );
    let lines = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)];
    for query in ["hits", "first-hit"] {
        for backend in backends() {
            let run = |segments: &Path| {
                let o = rectcast(&[
                    query,
                    "--segments",
                    segments.to_str().unwrap(),
                    "--rects",
                    boxes.to_str().unwrap(),
                    "--backend",
                    backend,
                ]);
                assert!(o.status.success(), "{}", stderr(&o));
                String::from_utf8(o.stdout).unwrap()
            };
            let records = run(&csv);
            let mut want = records.lines();
            let header = want
                .next()
                .unwrap()
                .replacen("segment,", "segment,line,line_segment,", 1);
            let mut want: Vec<String> = want
                .map(|row| {
                    let (segment, rest) = row.split_once(',').unwrap();
                    let (line, within) = lines[segment.parse::<usize>().unwrap()];
                    format!("{segment},{line},{within},{rest}")
                })
                .collect();
            want.insert(0, header);
            for file in [&wkt, &geojson] {
                let got = run(file);
                for (row, (got, want)) in got.lines().zip(&want).enumerate() {
                    assert_eq!(got, want, "{query} on {backend}, {file:?}, row {row}");
                }
                assert_eq!(
                    got.lines().count(),
                    want.len(),
                    "{query} on {backend}, {file:?}"
                );
            }
        }
    }
}

#[test]
fn a_geometry_that_is_not_a_line_in_segments_names_its_place_or_is_skipped() {
    let dir = Dir::new();
    let boxes = dir.file("r.csv", "min_x,min_y,max_x,max_y\n0,0,1,1\n");
    let run = |segments: &Path, extra: &[&str]| {
        let out = dir.path("out.csv");
        let mut args = vec![
            "hits",
            "--segments",
            segments.to_str().unwrap(),
            "--rects",
            boxes.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = rectcast(&args);
        let written = std::fs::read_to_string(&out).ok();
        let _ = std::fs::remove_file(&out);
        (o, written)
    };
    let wkt = dir.file(
        "b.wkt",
        "LINESTRING (-1 0.5, 2 0.5)\n  POLYGON ((0 0, 1 0, 1 1, 0 0))\nLINESTRING EMPTY\n\
         LINESTRING (-1 0.25, 2 0.25)\n",
    );
    let geojson = dir.file(
        "b.geojson",
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {}, "geometry": {"type": "LineString",
                "coordinates": [[-1, 0.5], [2, 0.5]]}},
            {"type": "Feature", "properties": {}, "geometry": {"type": "Point",
                "coordinates": [0, 0]}}
        ]}"#,
    );
    for (file, message) in [
        (
            &wkt,
            "b.wkt:2:3: a POLYGON, not a LINESTRING or MULTILINESTRING",
        ),
        (&geojson, "b.geojson: feature 1: a Point, not a LineString"),
    ] {
        let (o, written) = run(file, &[]);
        assert!(!o.status.success(), "{file:?}");
        assert!(stderr(&o).contains(message), "{}", stderr(&o));
        assert_eq!(written, None, "an output file after an error");
    }
    // Skipped: each bad line is one record, so the ids after it still count every line.
    let (o, written) = run(&wkt, &["--skip-invalid"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipped 2 invalid records of")
            && stderr(&o).contains("b.wkt:3:1: an empty line"),
        "{}",
        stderr(&o)
    );
    let rows: Vec<&str> = written.as_deref().unwrap().lines().collect();
    assert_eq!(
        rows,
        [
            "segment,line,line_segment,rect,hit,kind,t_enter,t_exit,entry,exit",
            "0,0,0,0,true,cross,0.33333334,0.6666667,min_x,max_x",
            "3,3,0,0,true,cross,0.33333334,0.6666667,min_x,max_x",
        ]
    );
    // Lines are segments only: not rects, and no table is written as WKT or GeoJSON.
    let o = rectcast(&[
        "hits",
        "--segments",
        wkt.to_str().unwrap(),
        "--rects",
        wkt.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("line strings are read as --segments"),
        "{}",
        stderr(&o)
    );
    let geojson_out = dir.path("out.geojson");
    let o = rectcast(&[
        "hits",
        "--segments",
        wkt.to_str().unwrap(),
        "--rects",
        boxes.to_str().unwrap(),
        "--skip-invalid",
        "--out",
        geojson_out.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && !geojson_out.exists());
    assert!(stderr(&o).contains("not written"), "{}", stderr(&o));
}

/// `first-hit` on `QUERY_SEGMENTS` × `QUERY_RECTS` with `--backend auto --verbose` and `env`.
fn auto_first_hit(dir: &Dir, env: &[(&str, &str)], out: Option<&Path>) -> Output {
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    let rects = dir.file("r.csv", QUERY_RECTS);
    let mut command = Command::new(env!("CARGO_BIN_EXE_rectcast"));
    command
        .args(["first-hit", "--segments", segments.to_str().unwrap()])
        .args([
            "--rects",
            rects.to_str().unwrap(),
            "--backend",
            "auto",
            "--verbose",
        ])
        .env_remove("RECTCAST_AUTO_COSTS")
        .envs(env.iter().copied());
    if let Some(out) = out {
        command.args(["--out", out.to_str().unwrap()]);
    }
    command.output().unwrap()
}

#[test]
fn verbose_says_a_tiny_auto_job_ran_on_the_cpu_and_why() {
    let dir = Dir::new();
    let o = auto_first_hit(&dir, &[], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    let line = said
        .lines()
        .find(|l| l.starts_with("rectcast: backend: "))
        .unwrap_or_else(|| panic!("no backend line in: {said}"));
    assert!(
        line.starts_with("rectcast: backend: cpu: ")
            && line.contains("auto: first_hits, ")
            && line.contains("the CPU's "),
        "{line}"
    );
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        query("first-hit", &dir, "cpu")
    );
}

#[test]
fn a_bad_rectcast_auto_costs_names_the_item_and_writes_nothing() {
    let dir = Dir::new();
    let out = dir.0.path().join("first.csv");
    let o = auto_first_hit(
        &dir,
        &[("RECTCAST_AUTO_COSTS", "gpu_open_ms=10, hitz=1/2")],
        Some(&out),
    );
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim(),
        "rectcast: error: auto backend: RECTCAST_AUTO_COSTS: item 2 `hitz=1/2`: unknown cost hitz (known: gpu_open_ms, gpu_call_ms, gpu_segment_ns, pairs, first_hits, grid_first_hits, hits, grid_hits, walls, circles, polygons)"
    );
    assert!(!out.exists(), "a partial output was left");
}

#[test]
fn costs_that_make_the_gpu_sooner_open_it_with_the_same_rows() {
    let dir = Dir::new();
    let costs = "gpu_open_ms=0,gpu_call_ms=0,first_hits=1000000/1";
    // WGPU_ADAPTER_NAME lets auto take a software GPU (lavapipe in CI).
    let name = rectcast::GpuContext::new().map(|c| c.adapter_info().name.clone());
    let Ok(name) = name else {
        assert_ne!(
            std::env::var("RECTCAST_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "no GPU: {name:?}"
        );
        eprintln!("SKIPPED costs_that_make_the_gpu_sooner_open_it: no GPU ({name:?})");
        return;
    };
    let env = [("RECTCAST_AUTO_COSTS", costs), ("WGPU_ADAPTER_NAME", &name)];
    let o = auto_first_hit(&dir, &env, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("rectcast: backend: gpu: ") && said.contains(&name),
        "{said}"
    );
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        query("first-hit", &dir, "cpu")
    );
}

#[test]
fn bench_auto_prints_every_familys_costs_as_rectcast_auto_costs_reads_them() {
    let o = rectcast(&[
        "bench",
        "--query",
        "auto",
        "--segments",
        "2048",
        "--rects",
        "512",
        "--iterations",
        "1",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let last = text.lines().last().unwrap_or_default();
    let costs = last
        .strip_prefix("RECTCAST_AUTO_COSTS=")
        .unwrap_or_else(|| panic!("no costs line at the end of:\n{text}"));
    let costs = rectcast::AutoCosts::parse(costs).unwrap_or_else(|e| panic!("{e}: {last}"));
    for family in rectcast::Family::ALL {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{} (", family.name())))
            .unwrap_or_else(|| panic!("no {} row in:\n{text}", family.name()));
        // Measured here: the CPU's cost is no longer the H100's default.
        let cost = costs.test(family);
        let default = rectcast::AutoCosts::default().test(family);
        assert!(cost.cpu_ns > 0.0 && cost.cpu_ns != default.cpu_ns, "{row}");
        assert_eq!(cost.gpu_ns, default.gpu_ns, "no GPU measured: {row}");
    }
}

/// `first-hit --backend gpu` on the query scene with `env`: its stdout, or `None` without a GPU.
fn gpu_first_hit(dir: &Dir, env: &[(&str, &std::ffi::OsStr)]) -> Option<String> {
    let segments = dir.file("s.csv", QUERY_SEGMENTS);
    let rects = dir.file("r.csv", QUERY_RECTS);
    let o = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(["first-hit", "--segments", segments.to_str().unwrap()])
        .args(["--rects", rects.to_str().unwrap(), "--backend", "gpu"])
        .env_remove("RECTCAST_PIPELINE_CACHE")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    if !o.status.success() {
        assert_ne!(
            std::env::var("RECTCAST_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "gpu backend failed: {}",
            stderr(&o)
        );
        eprintln!("SKIPPED: no GPU: {}", stderr(&o));
        return None;
    }
    Some(String::from_utf8(o.stdout).unwrap())
}

/// The files in `dir`.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn compiled_kernels_are_kept_between_runs_and_a_corrupt_cache_file_is_ignored_and_rewritten() {
    let dir = Dir::new();
    let cache = dir.0.path().join("cache");
    let env = [("RECTCAST_CACHE_DIR", cache.as_os_str())];
    let Some(want) = gpu_first_hit(&dir, &env) else {
        return;
    };
    assert_eq!(want, query("first-hit", &dir, "cpu"));
    let files = files_in(&cache);
    let [file] = &files[..] else {
        // A driver without application pipeline caches (wgpu keeps none for it) writes none.
        assert!(files.is_empty(), "{files:?}");
        eprintln!("SKIPPED the cache's checks: this adapter keeps no pipeline cache");
        return;
    };
    let written = std::fs::read(file).unwrap();
    assert!(
        written.starts_with(b"rectcast pipeline cache\n"),
        "{file:?}"
    );
    for (what, bytes) in [
        ("garbage", b"not a cache".to_vec()),
        ("cut short", written[..written.len() / 2].to_vec()),
        ("a flipped byte", {
            let mut flipped = written.clone();
            *flipped.last_mut().unwrap() ^= 0x55;
            flipped
        }),
    ] {
        std::fs::write(file, &bytes).unwrap();
        assert_eq!(gpu_first_hit(&dir, &env).as_deref(), Some(&*want), "{what}");
        let again = std::fs::read(file).unwrap();
        assert!(
            again.starts_with(b"rectcast pipeline cache\n"),
            "{what}: not rewritten"
        );
        assert_eq!(files_in(&cache), files, "{what}: a temporary file was left");
    }
    // Off: nothing written.
    let off = dir.0.path().join("off");
    let env = [
        ("RECTCAST_CACHE_DIR", off.as_os_str()),
        ("RECTCAST_PIPELINE_CACHE", "off".as_ref()),
    ];
    assert_eq!(gpu_first_hit(&dir, &env).as_deref(), Some(&*want));
    assert!(files_in(&off).is_empty());
}

/// Segment `i` from (x0, y0) by (dx, dy), coprime, u·dx − v·dy = 1: it crosses the line
/// x = x0 + v at t = v / dx, 1 / (dx·dy) (about 2^-26) before the line y = y0 + u at u / dy,
/// often at the same f32. Each line holds a wall (and a triangle's edge), the later-entered one
/// at the lower index: walls 2i (y) and 2i + 1 (x), and triangles alike.
fn near_ties_within_a_kind(count: usize) -> (Vec<Segment>, Vec<Segment>, Vec<Vec<[f32; 2]>>) {
    let mut rng = rectcast::scene::SplitMix64::new(72);
    let (mut segments, mut walls, mut triangles) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..count as i64 {
        let (dx, dy) = loop {
            let (dx, dy) = (4096 + rng.below(4096) as i64, 4096 + rng.below(4096) as i64);
            if (2..dx.min(dy) + 1).all(|d| dx % d != 0 || dy % d != 0) {
                break (dx, dy);
            }
        };
        let u = (1..dy).find(|u| u * dx % dy == 1).unwrap();
        let v = (u * dx - 1) / dy;
        let (x0, y0) = (i * 20_000, -(rng.below(4096) as i64));
        let f = |v: i64| v as f32;
        segments.push(Segment::new(f(x0), f(y0), f(x0 + dx), f(y0 + dy)));
        let (bx, by) = (f(x0 + v), f(y0 + u));
        walls.push(Segment::new(bx - 5.0, by, bx + 5.0, by));
        walls.push(Segment::new(bx, by - 5.0, bx, by + 5.0));
        triangles.push(vec![[bx - 5.0, by], [bx + 5.0, by], [bx, by + 5.0]]);
        triangles.push(vec![[bx, by - 5.0], [bx + 5.0, by], [bx, by + 5.0]]);
    }
    (segments, walls, triangles)
}

#[test]
fn first_hit_over_walls_and_polygons_picks_the_exact_earliest_on_near_ties() {
    let dir = Dir::new();
    let (segments, walls, triangles) = near_ties_within_a_kind(120);
    // Enough segments whose two entries round alike, where only the exact order picks.
    let alike = segments
        .iter()
        .enumerate()
        .filter(|&(i, s)| {
            let t = |w: &Segment| rectcast::segment_segment(s, w).t_enter;
            t(&walls[2 * i]) == t(&walls[2 * i + 1])
        })
        .count();
    assert!(alike > 20, "{alike} rounded ties");
    let (s, w) = (
        dir.segments("s.csv", &segments),
        dir.segments("w.csv", &walls),
    );
    let wkt: String = triangles
        .iter()
        .map(|t| {
            let ring: Vec<String> = t
                .iter()
                .chain(&t[..1])
                .map(|[x, y]| format!("{x} {y}"))
                .collect();
            format!("POLYGON (({}))\n", ring.join(", "))
        })
        .collect();
    let p = dir.file("p.wkt", &wkt);
    let mut targets = rectcast::Targets::new();
    targets.set_walls(&walls).unwrap();
    let want_walls = rectcast::Engine::cpu()
        .target_first_hits(&rectcast::TargetBatch::over(&segments, &targets))
        .unwrap();
    let mut targets = rectcast::Targets::new();
    targets.set_polygons(
        rectcast::Polygons::from_polygons(
            triangles
                .iter()
                .map(|t| vec![t.clone()])
                .collect::<Vec<_>>(),
        )
        .unwrap(),
    );
    let want_polygons = rectcast::Engine::cpu()
        .target_first_hits(&rectcast::TargetBatch::over(&segments, &targets))
        .unwrap();
    for backend in backends() {
        for (flag, file, want) in [
            ("--walls", &w, &want_walls),
            ("--polygons", &p, &want_polygons),
        ] {
            let o = rectcast(&[
                "first-hit",
                "--segments",
                s.to_str().unwrap(),
                flag,
                file.to_str().unwrap(),
                "--backend",
                backend,
            ]);
            assert!(o.status.success(), "{flag}: {}", stderr(&o));
            let rows = String::from_utf8(o.stdout).unwrap();
            let rows: Vec<&str> = rows.lines().skip(1).collect();
            assert_eq!(rows.len(), segments.len(), "{flag} on the {backend}");
            for (i, (row, want)) in rows.iter().zip(want.iter()).enumerate() {
                let hit = want.expect("every segment hits both");
                // The target entered first, exactly: the line x = bx, at the higher index.
                assert_eq!(
                    hit.target as usize,
                    2 * i + 1,
                    "{flag}: the library, segment {i}"
                );
                let cells: Vec<&str> = row.split(',').collect();
                let expected = [
                    i.to_string(),
                    hit.target.to_string(),
                    hit.contact.t_enter().to_string(),
                ];
                assert_eq!(
                    [cells[0], cells[1], cells[3]],
                    [&*expected[0], &*expected[1], &*expected[2]],
                    "{flag} on the {backend}: segment {i} {:?}: row {row}",
                    segments[i]
                );
            }
        }
    }
}

/// Parcels (integer squares) and roads running 0.2 beside their bottom or top edges, or
/// across them, as WKT (roads) and GeoJSON (parcels), every coordinate less `origin`, from a
/// scene at web mercator's magnitudes (x near -8.24e6, where f32's spacing is 0.5); and the
/// parcels' bounds' centre there, in whole units.
fn far_files(dir: &Dir, name: &str, origin: [f64; 2]) -> (PathBuf, PathBuf, [f64; 2]) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let at = |x: f64, y: f64| (x - 8_240_000.0 - origin[0], y + 4_970_000.0 - origin[1]);
    let mut parcels = Vec::new();
    let mut roads = String::new();
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for i in 0..40 {
        let (x, y, size) = (next(300) as f64, next(300) as f64, (3 + next(9)) as f64);
        let ((x0, y0), (x1, y1)) = (at(x, y), at(x + size, y + size));
        bounds = [
            bounds[0].min(x0),
            bounds[1].min(y0),
            bounds[2].max(x1),
            bounds[3].max(y1),
        ];
        let ring: Vec<String> = [
            (x, y),
            (x + size, y),
            (x + size, y + size),
            (x, y + size),
            (x, y),
        ]
        .iter()
        .map(|&(x, y)| {
            let (x, y) = at(x, y);
            format!("[{x:?}, {y:?}]")
        })
        .collect();
        parcels.push(format!(
            r#"{{"type": "Feature", "properties": {{}}, "geometry": {{"type": "Polygon", "coordinates": [[{}]]}}}}"#,
            ring.join(", ")
        ));
        for road in 0..4 {
            let y = match road {
                0 => y - 0.2,
                1 => y + size + 0.2,
                _ => y + next(100) as f64 / 10.0,
            };
            let ((x0, y0), (x1, y1)) = (at(x - 2.0 - i as f64 / 10.0, y), at(x + size + 2.0, y));
            roads += &format!("LINESTRING ({x0:?} {y0:?}, {x1:?} {y1:?})\n");
        }
    }
    let parcels = format!(
        r#"{{"type": "FeatureCollection", "features": [{}]}}"#,
        parcels.join(",\n")
    );
    (
        dir.file(&format!("{name}.wkt"), &roads),
        dir.file(&format!("{name}.geojson"), &parcels),
        [
            ((bounds[0] + bounds[2]) / 2.0).round(),
            ((bounds[1] + bounds[3]) / 2.0).round(),
        ],
    )
}

#[test]
fn wkt_and_geojson_far_from_the_origin_answer_as_the_same_scene_shifted_near_it() {
    let dir = Dir::new();
    // The parcels' bounds' centre, in whole units: what --origin auto takes.
    let (roads, parcels, origin) = far_files(&dir, "far", [0.0; 2]);
    let (near_roads, near_parcels, _) = far_files(&dir, "near", origin);
    let at = format!("{},{}", origin[0], origin[1]);
    // The shift is the host's: one query on every backend is enough.
    let mut runs: Vec<_> = backends().into_iter().map(|b| ("hits", b)).collect();
    runs.extend([("first-hit", "cpu"), ("count", "cpu")]);
    for (query, backend) in runs {
        let run = |roads: &Path, parcels: &Path, more: &[&str]| {
            let mut args = vec![
                query,
                "--segments",
                roads.to_str().unwrap(),
                "--polygons",
                parcels.to_str().unwrap(),
                "--backend",
                backend,
            ];
            args.extend(more);
            let o = rectcast(&args);
            assert!(o.status.success(), "{}", stderr(&o));
            let said = stderr(&o);
            (String::from_utf8(o.stdout).unwrap(), said)
        };
        let (near, _) = run(&near_roads, &near_parcels, &[]);
        let (far, said) = run(&roads, &parcels, &[]);
        assert!(
            said.contains(&format!("shifted by origin {at} before rounding")),
            "{said}"
        );
        assert_eq!(far, near, "{query} {backend}: far against near");
        let given = run(&roads, &parcels, &["--origin", &at]).0;
        assert_eq!(given, near, "{query} {backend}: a given origin");
        // Rounded where they lie, the roads 0.2 beside a parcel touch it: other rows, said.
        let (there, said) = run(&roads, &parcels, &["--origin", "none"]);
        assert_ne!(there, near, "{query} {backend}: no origin");
        assert!(
            said.contains("far.wkt: rounding to f32 at origin 0,0 moved a vertex by 0.2"),
            "{said}"
        );
        if query == "hits" {
            assert!(
                near.lines().count() + 40 < there.lines().count(),
                "{near}\n{there}"
            );
        }
    }
    // A given origin would shift geometry text but not records, which are f32 already.
    let csv = dir.segments("s.csv", &[Segment::new(0.0, 0.0, 1.0, 1.0)]);
    let o = rectcast(&[
        "hits",
        "--segments",
        csv.to_str().unwrap(),
        "--polygons",
        parcels.to_str().unwrap(),
        "--origin",
        "1,2",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("s.csv is records, f32 already"),
        "{}",
        stderr(&o)
    );
    let o = rectcast(&[
        "overlaps",
        "--polygons",
        parcels.to_str().unwrap(),
        "--other",
        parcels.to_str().unwrap(),
        "--origin",
        "1,x",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("expected auto, none or two finite numbers X,Y"),
        "{}",
        stderr(&o)
    );
}
