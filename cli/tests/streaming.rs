//! Offscreen batch jobs through the binary: every query and format, streaming beyond one chunk
//! in bounded memory, invalid records (stop or skip), atomic output, progress on stderr only,
//! `gen`, and `render` checked pixel by pixel.

mod common;

use common::{ok, rectcast, s, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

use rectcast::{Backend, Batch, ClipTo, Engine, Rect, Segment};

/// `rectcast gen` into `dir/format/`: (segments, rects).
fn generate(dir: &Path, kind: &str, n: u64, m: u64, format: &str) -> (PathBuf, PathBuf) {
    let out = dir.join(format);
    ok(&[
        "gen",
        "--kind",
        kind,
        "--segments",
        &n.to_string(),
        "--rects",
        &m.to_string(),
        "--out-dir",
        s(&out),
        "--format",
        format,
    ]);
    (
        out.join(format!("segments.{format}")),
        out.join(format!("rects.{format}")),
    )
}

/// The records of a `[N, 4]` float32 NPY file.
fn read_npy_f32(path: &Path) -> Vec<[f32; 4]> {
    let bytes = std::fs::read(path).unwrap();
    let header = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    bytes[header..]
        .chunks_exact(16)
        .map(|r| {
            std::array::from_fn(|i| f32::from_le_bytes(r[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}

/// The rows of a structured NPY result file, each `itemsize` bytes.
fn read_npy_rows(path: &Path, itemsize: usize) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    let header = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let text = String::from_utf8_lossy(&bytes[10..header]).into_owned();
    let rows: Vec<Vec<u8>> = bytes[header..]
        .chunks(itemsize)
        .map(<[u8]>::to_vec)
        .collect();
    assert!(
        text.contains(&format!("({:>20},)", rows.len())),
        "header shape vs {} rows: {text}",
        rows.len()
    );
    assert!(rows.iter().all(|r| r.len() == itemsize), "a partial row");
    rows
}

fn u64_at(row: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(row[at..at + 8].try_into().unwrap())
}

#[test]
fn every_query_gives_the_same_rows_from_csv_npy_and_f32_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let formats = ["csv", "npy", "f32"];
    let inputs: Vec<_> = formats
        .iter()
        .map(|f| generate(dir.path(), "bullet-hell", 3000, 200, f))
        .collect();
    for query in ["pairs", "first-hit", "hits", "count"] {
        let outputs: Vec<Vec<u8>> = inputs
            .iter()
            .map(|(segments, rects)| {
                ok(&[
                    query,
                    "--backend",
                    "cpu",
                    "--segments",
                    s(segments),
                    "--rects",
                    s(rects),
                ])
                .stdout
            })
            .collect();
        assert!(outputs[0].len() > 100, "{query}: too little output");
        for (format, out) in formats.iter().zip(&outputs) {
            assert!(out == &outputs[0], "{query} from {format} differs from csv");
        }
    }
    let clips: Vec<Vec<u8>> = inputs
        .iter()
        .map(|(segments, _)| {
            ok(&[
                "clip",
                "--segments",
                s(segments),
                "--rect",
                "100,100,900,700",
            ])
            .stdout
        })
        .collect();
    assert!(clips.iter().all(|c| c == &clips[0] && c.len() > 100));
}

#[test]
fn npy_results_hold_the_csv_rows_and_f32_clips_hold_the_clipped_ends() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "random", 2000, 100, "npy");
    // First hit: segment u64, rect i64, kind u8, t_enter, t_exit f32, entry, exit u8 = 27 bytes.
    let out = dir.path().join("first.npy");
    ok(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
    ]);
    let csv = ok(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ])
    .stdout;
    let csv = String::from_utf8(csv).unwrap();
    let rows = read_npy_rows(&out, 27);
    assert_eq!(rows.len() + 1, csv.lines().count());
    for (row, line) in rows.iter().zip(csv.lines().skip(1)) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(u64_at(row, 0).to_string(), fields[0]);
        let rect = u64_at(row, 8) as i64;
        assert_eq!(
            if rect < 0 {
                String::new()
            } else {
                rect.to_string()
            },
            fields[1],
            "{line}"
        );
    }
    assert!(
        rows.iter().any(|r| (u64_at(r, 8) as i64) >= 0),
        "no hits to compare"
    );
    // Clip to a viewport: .f32 holds x0,y0,x1,y1 per segment, NaN on a miss.
    let f32_out = dir.path().join("clip.f32");
    ok(&[
        "clip",
        "--segments",
        s(&segments),
        "--rect",
        "100,100,600,700",
        "--out",
        s(&f32_out),
    ]);
    let clipped = read_npy_f32_raw(&f32_out);
    let inputs = read_npy_f32(&segments);
    let expected = Engine::cpu()
        .clip(
            &inputs
                .iter()
                .map(|v| Segment::new(v[0], v[1], v[2], v[3]))
                .collect::<Vec<_>>(),
            ClipTo::Rect(Rect::new(100.0, 100.0, 600.0, 700.0)),
        )
        .unwrap();
    assert_eq!(clipped.len(), expected.len());
    for (i, (got, want)) in clipped.iter().zip(&expected).enumerate() {
        let want = want
            .segment
            .map_or([f32::NAN; 4], |p| [p.x0, p.y0, p.x1, p.y1]);
        assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "segment {i}");
    }
}

/// The `descr` of an NPY file's header, as written.
fn npy_descr(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let header = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let text = String::from_utf8_lossy(&bytes[10..header]).into_owned();
    let start = text.find("'descr': ").expect("a descr") + "'descr': ".len();
    let end = text
        .find(", 'fortran_order'")
        .expect("fortran_order after descr");
    text[start..end].to_string()
}

#[test]
fn npy_results_declare_the_documented_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "random", 50, 10, "npy");
    assert_eq!(
        npy_descr(&segments),
        "'<f4'",
        "gen writes plain float32 records"
    );
    let expected = [
        (
            "pairs",
            "[('segment', '<u8'), ('rect', '<u8'), ('hit', '|b1'), ('kind', '|u1'), \
             ('t_enter', '<f4'), ('t_exit', '<f4'), ('entry', '|u1'), ('exit', '|u1')]",
        ),
        (
            "first-hit",
            "[('segment', '<u8'), ('rect', '<i8'), ('kind', '|u1'), ('t_enter', '<f4'), \
             ('t_exit', '<f4'), ('entry', '|u1'), ('exit', '|u1')]",
        ),
        ("count", "[('rect', '<u8'), ('hits', '<u8')]"),
        (
            "clip",
            "[('segment', '<u8'), ('kind', '|u1'), ('x0', '<f4'), ('y0', '<f4'), \
             ('x1', '<f4'), ('y1', '<f4')]",
        ),
    ];
    for (command, descr) in expected {
        let out = dir.path().join(format!("{command}.npy"));
        let inputs = ["--segments", s(&segments), "--out", s(&out)];
        let against = if command == "clip" {
            ["--rect", "0,0,500,500"]
        } else {
            ["--rects", s(&rects)]
        };
        ok(&[&[command][..], &inputs, &against].concat());
        assert_eq!(npy_descr(&out), descr, "{command}");
    }
}

fn read_npy_f32_raw(path: &Path) -> Vec<[f32; 4]> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(16)
        .map(|r| {
            std::array::from_fn(|i| f32::from_le_bytes(r[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}

/// Runs rectcast to success and returns its own peak resident memory in bytes, from the
/// rusage `wait4` reports for exactly that child (other tests' children run meanwhile).
#[allow(
    clippy::zombie_processes,
    reason = "reaped by wait4, which also gives its rusage"
)]
fn peak_rss(args: &[&str]) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run rectcast");
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: waits for our own child, once; wait4 fills both out-parameters.
    let usage = unsafe {
        let waited = libc::wait4(
            child.id() as libc::pid_t,
            &mut status,
            0,
            usage.as_mut_ptr(),
        );
        assert_eq!(waited, child.id() as libc::pid_t, "wait4 failed");
        usage.assume_init()
    };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "rectcast {} failed: status {status}",
        args.join(" ")
    );
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn a_job_larger_than_a_chunk_streams_in_bounded_memory_and_equals_the_in_memory_result() {
    let dir = tempfile::tempdir().unwrap();
    // What the same command takes on one segment (the binary, its libraries, the threads),
    // which grows with the program, not the job. Measured first: a child's peak counts the
    // test's own memory at the fork, before the exec.
    let apart = dir.path().join("one");
    std::fs::create_dir_all(&apart).unwrap();
    let (one, one_rect) = generate(&apart, "bullet-hell", 1, 64, "npy");
    let small_out = dir.path().join("first_one.npy");
    let baseline = peak_rss(&[
        "first-hit",
        "--backend",
        "cpu",
        "--segments",
        s(&one),
        "--rects",
        s(&one_rect),
        "--out",
        s(&small_out),
    ]);
    // 1,200,000 segments: several chunks of 262,144.
    let (segments, rects) = generate(dir.path(), "bullet-hell", 1_200_000, 64, "npy");
    let out = dir.path().join("first.npy");
    let peak_large = peak_rss(&[
        "first-hit",
        "--backend",
        "cpu",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
    ]);
    // The in-memory path: the library on the whole input at once.
    let seg: Vec<Segment> = read_npy_f32(&segments)
        .iter()
        .map(|v| Segment::new(v[0], v[1], v[2], v[3]))
        .collect();
    let rect: Vec<Rect> = read_npy_f32(&rects)
        .iter()
        .map(|v| Rect::new(v[0], v[1], v[2], v[3]))
        .collect();
    let expected = Engine::new(Backend::Cpu)
        .unwrap()
        .first_hit(&Batch::new(&seg, &rect))
        .unwrap();
    let rows = read_npy_rows(&out, 27);
    assert_eq!(rows.len(), expected.len());
    let mut hits = 0;
    for (i, (row, want)) in rows.iter().zip(&expected).enumerate() {
        let rect = u64_at(row, 8) as i64;
        let t_enter = f32::from_le_bytes(row[17..21].try_into().unwrap());
        assert_eq!(u64_at(row, 0), i as u64);
        assert_eq!(rect, want.rect().map_or(-1, i64::from), "segment {i}");
        if rect >= 0 {
            hits += 1;
            assert_eq!(
                t_enter.to_bits(),
                want.result.t_enter.to_bits(),
                "segment {i}"
            );
        }
    }
    assert!(hits > 1000, "{hits} hits");
    // Memory: 1.2 million segments are 19 MB of input and 32 MB of results; streamed, the job
    // holds at most three chunks (one being read, one on the engine, one being written: about
    // 20 MB in all here), never the whole input. Holding the input whole (a chunk of 2^24)
    // measured 52 MB. Counted past the baseline.
    let input = std::fs::metadata(&segments).unwrap().len();
    let output = std::fs::metadata(&out).unwrap().len();
    eprintln!(
        "peak RSS {} MB ({} MB on one segment) for {} MB in, {} MB out",
        peak_large >> 20,
        baseline >> 20,
        input >> 20,
        output >> 20
    );
    assert!(
        peak_large < baseline + input + (8 << 20),
        "peak RSS {peak_large} bytes ({baseline} on one segment): not bounded by a chunk ({input} in, {output} out)"
    );
}

#[test]
fn an_invalid_record_stops_the_job_at_its_place_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,10,10\n").unwrap();
    let out = dir.path().join("out.csv");
    std::fs::write(&out, "an earlier result\n").unwrap();
    let csv = dir.path().join("s.csv");
    std::fs::write(&csv, "x0,y0,x1,y1\n1,1,2,2\n1,nan,2,2\n1,x,2,2\n").unwrap();
    for query in ["pairs", "first-hit", "hits", "count"] {
        let o = rectcast(&[
            query,
            "--segments",
            s(&csv),
            "--rects",
            s(&rects),
            "--out",
            s(&out),
        ]);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains("s.csv:3:2: y0 is NaN"),
            "{query}: {}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "an earlier result\n",
            "{query}"
        );
        // To stdout too: nothing written before the error.
        let o = rectcast(&[query, "--segments", s(&csv), "--rects", s(&rects)]);
        assert!(!o.status.success() && o.stdout.is_empty(), "{query}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".rectcast"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // Binary inputs say the row and field.
    let npy = generate(dir.path(), "random", 10, 2, "npy").0;
    let mut bytes = std::fs::read(&npy).unwrap();
    let at = bytes.len() - 10 * 16 + 7 * 16 + 8; // row 7, x1
    bytes[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(&npy, bytes).unwrap();
    let o = rectcast(&["first-hit", "--segments", s(&npy), "--rects", s(&rects)]);
    assert!(
        stderr(&o).contains("segments.npy: row 7, x1: x1 is infinite"),
        "{}",
        stderr(&o)
    );
    let f32_file = dir.path().join("cut.f32");
    std::fs::write(&f32_file, [0u8; 20]).unwrap();
    let o = rectcast(&[
        "first-hit",
        "--segments",
        s(&f32_file),
        "--rects",
        s(&rects),
    ]);
    assert!(
        stderr(&o).contains("20 bytes is not a whole number of records"),
        "{}",
        stderr(&o)
    );
    let o = rectcast(&[
        "first-hit",
        "--segments",
        s(&rects),
        "--rects",
        s(&rects),
        "--out",
        s(&dir.path().join("x.f32")),
    ]);
    assert!(stderr(&o).contains("only clip writes"), "{}", stderr(&o));
}

#[test]
fn skip_invalid_counts_the_bad_records_and_keeps_the_input_row_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(
        &rects,
        "min_x,min_y,max_x,max_y\n0,0,10,10\n5,5,1,1\n20,0,30,10\n",
    )
    .unwrap();
    let segments = dir.path().join("s.csv");
    std::fs::write(
        &segments,
        "x0,y0,x1,y1\n-1,5,35,5\n1,nan,2,2\n1,2\n25,5,26,5\n",
    )
    .unwrap();
    let o = ok(&[
        "first-hit",
        "--skip-invalid",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ]);
    assert_eq!(
        String::from_utf8(o.stdout.clone()).unwrap(),
        "segment,rect,kind,t_enter,t_exit,entry,exit\n\
         0,0,cross,0.027777778,0.30555555,min_x,max_x\n\
         3,2,inside,0,1,,\n"
    );
    let report = stderr(&o);
    assert!(report.contains("skipped 1 invalid record of"), "{report}");
    assert!(report.contains("r.csv:3:1: min_x"), "{report}");
    assert!(report.contains("skipped 2 invalid records of"), "{report}");
    assert!(
        report.contains("s.csv:3:2") && report.contains("s.csv:4:"),
        "{report}"
    );
}

#[test]
fn binary_inputs_read_in_blocks_keep_each_records_row_across_block_and_chunk_ends() {
    // Binary files are read 65,536 records at a time: invalid records on both sides of a
    // block's end, and at the end of the file, are skipped with their own row numbers, and
    // every other record keeps its index.
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "random", 70_000, 20, "f32");
    let mut bytes = std::fs::read(&segments).unwrap();
    let bad = [65_535usize, 65_536, 69_999];
    for row in bad {
        let at = row * 16 + 4; // y0
        bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    }
    std::fs::write(&segments, bytes).unwrap();
    let o = ok(&[
        "first-hit",
        "--skip-invalid",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ]);
    let rows: Vec<usize> = String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap().parse().unwrap())
        .collect();
    let expected: Vec<usize> = (0..70_000).filter(|i| !bad.contains(i)).collect();
    if let Some(i) = (0..rows.len().max(expected.len())).find(|&i| rows.get(i) != expected.get(i)) {
        panic!(
            "row {i}: segment {:?} written, {:?} expected",
            rows.get(i),
            expected.get(i)
        );
    }
    let report = stderr(&o);
    assert!(report.contains("skipped 3 invalid records of"), "{report}");
    for row in bad {
        assert!(report.contains(&format!("row {row}, y0")), "{report}");
    }
    // Without --skip-invalid, the first one stops the job, named.
    let o = rectcast(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ]);
    assert!(!o.status.success() && o.stdout.is_empty());
    assert!(stderr(&o).contains("row 65535, y0"), "{}", stderr(&o));
}

#[test]
fn progress_goes_to_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "bullet-hell", 5000, 50, "csv");
    let args = ["count", "--segments", s(&segments), "--rects", s(&rects)];
    let quiet = ok(&args);
    assert!(quiet.stderr.is_empty(), "not a terminal: no bar");
    let shown = ok(&[&args[..], &["--progress"]].concat());
    assert_eq!(shown.stdout, quiet.stdout);
    assert!(
        stderr(&shown).contains("5000 records"),
        "{}",
        stderr(&shown)
    );
    // Each redraw is a line of its own, the last one ended too: the next output (a shell
    // prompt, an error) starts on a line of its own.
    assert!(
        stderr(&shown).ends_with('\n'),
        "the progress bar's last line has no newline: {:?}",
        stderr(&shown)
    );
}

#[test]
fn gen_is_deterministic_per_seed_and_writes_each_kind() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ["bullet-hell", "random", "adversarial"] {
        let a = generate(&dir.path().join("a").join(kind), kind, 300, 40, "npy");
        let b = generate(&dir.path().join("b").join(kind), kind, 300, 40, "npy");
        assert_eq!(
            std::fs::read(&a.0).unwrap(),
            std::fs::read(&b.0).unwrap(),
            "{kind}"
        );
        assert_eq!(read_npy_f32(&a.0).len(), 300);
        assert_eq!(read_npy_f32(&a.1).len(), 40);
        // Every record is valid input.
        ok(&["count", "--segments", s(&a.0), "--rects", s(&a.1)]);
    }
}

/// RGB of a pixel of a PNG written by rectcast (opaque: the background is white), as i32: a
/// u8 sum such as `r + 20` would wrap, and pass for white.
fn pixel(png: &tiny_skia::Pixmap, x: u32, y: u32) -> [i32; 3] {
    let p = png.pixel(x, y).unwrap();
    [p.red(), p.green(), p.blue()].map(i32::from)
}

/// The pixel of scene point (x, y) in a 400 x 400 render of `--view -100,-100,300,300`: the
/// plot area inside render's margins (64 px left, 12 right, 44 above for the legend, 36
/// below) is 324 x 320, so the view's 400 units take 320 px (0.8 a unit), centred: x from
/// pixel 66, y from pixel 44 (down, with --y-down) or up from pixel 364.
fn at_400(png: &tiny_skia::Pixmap, x: i32, y: i32, y_down: bool) -> [i32; 3] {
    let px = 66.0 + (x + 100) as f32 * 0.8;
    let py = if y_down {
        44.0 + (y + 100) as f32 * 0.8
    } else {
        364.0 - (y + 100) as f32 * 0.8
    };
    pixel(png, px.round() as u32, py.round() as u32)
}

#[test]
fn render_draws_rects_hits_misses_and_the_inside_part_where_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    // A crossing through the rect, a miss below it, a vertical one entering a second rect.
    std::fs::write(
        &segments,
        "x0,y0,x1,y1\n-50,50,150,50\n-50,150,150,150\n200,-50,200,60\n",
    )
    .unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(
        &rects,
        "min_x,min_y,max_x,max_y\n0,0,100,100\n180,0,220,100\n",
    )
    .unwrap();
    let out = dir.path().join("scene.png");
    // Screen coordinates (--y-down); `at` finds a scene point's pixel.
    ok(&[
        "render",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
        "--size",
        "400x400",
        "--view",
        "-100,-100,300,300",
        "--y-down",
        "--backend",
        "cpu",
    ]);
    let png = tiny_skia::Pixmap::load_png(&out).unwrap();
    assert_eq!((png.width(), png.height()), (400, 400));
    let at = |x: i32, y: i32| at_400(&png, x, y, true);
    let [r, g, b] = at(50, 20); // inside the rect, away from every segment: its fill
    assert!(b > r + 20 && b > 200 && g > r, "rect fill {:?}", [r, g, b]);
    assert_eq!(at(260, 200), [255, 255, 255], "background"); // empty space
    let [r, g, b] = at(50, 50); // the crossing, inside the rect: red
    assert!(r > 180 && g < 80 && b < 100, "inside part {:?}", [r, g, b]);
    let [r, g, b] = at(125, 50); // the crossing, outside the rect: orange (it hits)
    assert!(
        r > 200 && (100..190).contains(&g) && b < 80,
        "hit segment {:?}",
        [r, g, b]
    );
    let [r, g, b] = at(50, 150); // the miss: grey
    assert!(
        r == g && g == b && (120..200).contains(&r),
        "miss {:?}",
        [r, g, b]
    );
    let [r, g, b] = at(0, 50); // entry point on min_x: green
    assert!(g > 120 && r < 80 && b < 120, "entry {:?}", [r, g, b]);
    let [r, g, b] = at(100, 50); // exit point on max_x: purple
    assert!(r > 90 && b > 140 && g < 90, "exit {:?}", [r, g, b]);
    // demo --render draws the demo frame.
    let demo = dir.path().join("demo.png");
    ok(&["demo", "--backend", "cpu", "--render", s(&demo)]);
    let png = tiny_skia::Pixmap::load_png(&demo).unwrap();
    assert_eq!((png.width(), png.height()), (1920, 1080));
}

#[test]
fn render_draws_circles_and_walls_with_their_hits() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    // Through a circle; across a wall; past both.
    std::fs::write(
        &segments,
        "x0,y0,x1,y1\n-50,50,150,50\n150,80,250,80\n-50,180,250,180\n",
    )
    .unwrap();
    let circles = dir.path().join("c.csv");
    std::fs::write(&circles, "cx,cy,r\n50,50,30\n").unwrap();
    let walls = dir.path().join("w.csv");
    std::fs::write(&walls, "x0,y0,x1,y1\n200,0,200,100\n").unwrap();
    let out = dir.path().join("shapes.png");
    // Screen coordinates (--y-down); `at` finds a scene point's pixel.
    ok(&[
        "render",
        "--segments",
        s(&segments),
        "--circles",
        s(&circles),
        "--walls",
        s(&walls),
        "--out",
        s(&out),
        "--size",
        "400x400",
        "--view",
        "-100,-100,300,300",
        "--y-down",
        "--backend",
        "cpu",
        "--query",
        "pairs",
    ]);
    let png = tiny_skia::Pixmap::load_png(&out).unwrap();
    let at = |x: i32, y: i32| at_400(&png, x, y, true);
    let [r, g, b] = at(50, 70); // inside the circle, away from the segment: its fill
    assert!(
        b > r + 20 && b > 200 && g > r,
        "circle fill {:?}",
        [r, g, b]
    );
    let [r, g, b] = at(50, 50); // the crossing, inside the circle: red
    assert!(r > 180 && g < 80 && b < 100, "inside part {:?}", [r, g, b]);
    let [r, g, b] = at(20, 50); // where it enters the circle: green
    assert!(g > 120 && r < 80 && b < 120, "entry {:?}", [r, g, b]);
    let [r, g, b] = at(80, 50); // where it leaves: purple
    assert!(r > 90 && b > 140 && g < 90, "exit {:?}", [r, g, b]);
    let [r, g, b] = at(200, 20); // the wall
    assert!(r < 90 && g < 90 && b < 100, "wall {:?}", [r, g, b]);
    let [r, g, b] = at(200, 80); // where the second segment meets the wall: green
    assert!(g > 120 && r < 80 && b < 120, "contact {:?}", [r, g, b]);
    let [r, g, b] = at(100, 180); // the miss: grey
    assert!(
        r == g && g == b && (120..200).contains(&r),
        "miss {:?}",
        [r, g, b]
    );
}

#[test]
fn render_draws_polygons_as_their_rings_with_their_hits() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    // Across both arms of a U; past it.
    std::fs::write(&segments, "x0,y0,x1,y1\n-50,60,150,60\n-50,180,250,180\n").unwrap();
    let polygons = dir.path().join("u.wkt");
    std::fs::write(
        &polygons,
        "POLYGON ((0 0, 100 0, 100 100, 70 100, 70 30, 30 30, 30 100, 0 100, 0 0))\n",
    )
    .unwrap();
    let out = dir.path().join("u.png");
    ok(&[
        "render",
        "--segments",
        s(&segments),
        "--polygons",
        s(&polygons),
        "--out",
        s(&out),
        "--size",
        "400x400",
        "--view",
        "-100,-100,300,300",
        "--y-down",
        "--backend",
        "cpu",
    ]);
    let png = tiny_skia::Pixmap::load_png(&out).unwrap();
    let at = |x: i32, y: i32| at_400(&png, x, y, true);
    let [r, g, b] = at(15, 85); // in the left arm, away from the segment: the fill
    assert!(
        b > r + 20 && b > 200 && g > r,
        "polygon fill {:?}",
        [r, g, b]
    );
    assert_eq!(at(50, 85), [255, 255, 255], "the notch is not the polygon");
    let [r, g, b] = at(15, 60); // the segment in the left arm: red
    assert!(r > 180 && g < 80 && b < 100, "inside part {:?}", [r, g, b]);
    let [r, g, b] = at(85, 60); // and in the right arm: red
    assert!(r > 180 && g < 80 && b < 100, "inside part {:?}", [r, g, b]);
    let [r, g, b] = at(50, 60); // across the notch, outside the polygon: orange, not red
    assert!(
        r > 200 && (100..190).contains(&g) && b < 80,
        "the stretch across the notch {:?}",
        [r, g, b]
    );
    let [r, g, b] = at(0, 60); // where it enters, on edge 7: green
    assert!(g > 120 && r < 80 && b < 120, "entry {:?}", [r, g, b]);
    let [r, g, b] = at(100, 60); // where it leaves, on edge 1: purple
    assert!(r > 90 && b > 140 && g < 90, "exit {:?}", [r, g, b]);
    let [r, g, b] = at(100, 180); // the miss: grey
    assert!(
        r == g && g == b && (120..200).contains(&r),
        "miss {:?}",
        [r, g, b]
    );
}

#[test]
fn clip_of_per_segment_rects_with_fewer_rects_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, _) = generate(dir.path(), "random", 10, 2, "f32");
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,10,10\n").unwrap();
    let out = dir.path().join("c.csv");
    let o = rectcast(&[
        "clip",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("needs as many rects as segments"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // From stdin, the message says stdin, as every other message does.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(["clip", "--segments", "-", "--rects", s(&rects)])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    use std::io::Write as _;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"x0,y0,x1,y1\n0,0,1,1\n0,0,2,2\n").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(stderr(&o).contains("stdin has 2 records"), "{}", stderr(&o));
}

#[cfg(not(feature = "parquet"))]
#[test]
fn parquet_files_need_the_parquet_feature() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "random", 10, 2, "csv");
    let parquet = dir.path().join("s.parquet");
    std::fs::write(&parquet, b"PAR1").unwrap();
    let o = rectcast(&["count", "--segments", s(&parquet), "--rects", s(&rects)]);
    assert!(
        stderr(&o).contains("built without Parquet"),
        "{}",
        stderr(&o)
    );
    let out = dir.path().join("out.parquet");
    let o = rectcast(&[
        "count",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
    ]);
    assert!(
        stderr(&o).contains("built without Parquet"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_inputs_and_outputs_hold_the_csv_rows() {
    use arrow_array::{Array, Float32Array, RecordBatch, UInt64Array};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let (csv_segments, csv_rects) = generate(dir.path(), "bullet-hell", 5000, 300, "npy");
    // The same records as Parquet columns, written with the parquet crate, in two row groups.
    let write = |from: &Path, names: [&str; 4], to: &Path| {
        let records = read_npy_f32(from);
        let schema = Arc::new(arrow_schema::Schema::new(
            names
                .iter()
                .map(|n| arrow_schema::Field::new(*n, arrow_schema::DataType::Float32, false))
                .collect::<Vec<_>>(),
        ));
        let file = std::fs::File::create(to).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), None).unwrap();
        for part in records.chunks(records.len().div_ceil(2)) {
            let columns = (0..4)
                .map(|c| {
                    Arc::new(Float32Array::from_iter_values(part.iter().map(|r| r[c])))
                        as arrow_array::ArrayRef
                })
                .collect();
            w.write(&RecordBatch::try_new(schema.clone(), columns).unwrap())
                .unwrap();
        }
        w.close().unwrap();
    };
    let segments = dir.path().join("s.parquet");
    let rects = dir.path().join("r.parquet");
    write(&csv_segments, ["x0", "y0", "x1", "y1"], &segments);
    write(&csv_rects, ["min_x", "min_y", "max_x", "max_y"], &rects);
    let from_npy = ok(&[
        "first-hit",
        "--segments",
        s(&csv_segments),
        "--rects",
        s(&csv_rects),
    ]);
    let from_parquet = ok(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ]);
    assert!(
        from_npy.stdout == from_parquet.stdout,
        "parquet input differs"
    );
    // Parquet output: the first-hit columns, rect null on a miss.
    let out = dir.path().join("first.parquet");
    ok(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
    ]);
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&out).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let csv = String::from_utf8(from_npy.stdout).unwrap();
    let mut lines = csv.lines().skip(1);
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap();
        let rect = batch.column_by_name("rect").unwrap();
        let rect = rect.as_any().downcast_ref::<UInt64Array>().unwrap();
        for i in 0..batch.num_rows() {
            let fields: Vec<&str> = lines.next().unwrap().split(',').collect();
            let got = if rect.is_null(i) {
                String::new()
            } else {
                rect.value(i).to_string()
            };
            assert_eq!(got, fields[1], "row {rows}");
            rows += 1;
        }
    }
    assert_eq!(rows, 5000);
}

#[test]
fn an_invalid_record_in_a_later_chunk_stops_the_pipelined_job_and_leaves_no_output() {
    // Queries read chunk k + 2 while the engine runs chunk k + 1 and chunk k's rows are
    // written: an invalid record found by that read (row 290,000, in the third chunk of
    // 131,072) must still stop the job, name its row, and leave no file behind.
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "random", 300_000, 50, "f32");
    let mut bytes = std::fs::read(&segments).unwrap();
    let at = 290_000 * 16 + 8; // x1
    bytes[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(&segments, bytes).unwrap();
    for query in ["first-hit", "hits", "count", "pairs"] {
        let out = dir.path().join(format!("{query}.npy"));
        let o = rectcast(&[
            query,
            "--segments",
            s(&segments),
            "--rects",
            s(&rects),
            "--out",
            s(&out),
        ]);
        assert!(!o.status.success(), "{query}: succeeded");
        assert!(
            stderr(&o).contains("row 290000, x1"),
            "{query}: {}",
            stderr(&o)
        );
        assert!(!out.exists(), "{query}: left {}", out.display());
    }
}

#[test]
fn render_draws_data_y_up_by_default_and_screen_y_down_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    std::fs::write(&segments, "x0,y0,x1,y1\n-50,250,-40,250\n").unwrap();
    let rects = dir.path().join("r.csv");
    // A rect high in the scene (y 200..280).
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,200,100,280\n").unwrap();
    for y_down in [false, true] {
        let out = dir.path().join(format!("up-{y_down}.png"));
        let mut args = vec![
            "render",
            "--segments",
            s(&segments),
            "--rects",
            s(&rects),
            "--out",
            s(&out),
            "--size",
            "400x400",
            "--view",
            "-100,-100,300,300",
            "--backend",
            "cpu",
        ];
        if y_down {
            args.push("--y-down");
        }
        ok(&args);
        let png = tiny_skia::Pixmap::load_png(&out).unwrap();
        let [r, g, b] = at_400(&png, 50, 240, y_down);
        assert!(
            b > r + 20 && b > 200,
            "y_down {y_down}: the rect's fill {:?}",
            [r, g, b]
        );
        // In pixels: y up puts the rect in the image's top half, y down in its bottom half.
        let top_half = if y_down { 330 } else { 90 };
        let [r, g, b] = pixel(&png, 186, top_half);
        assert!(
            b > r + 20 && b > 200,
            "y_down {y_down}: pixel row {top_half} {:?}",
            [r, g, b]
        );
    }
}

#[test]
fn render_refuses_an_empty_view_and_formats_it_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    std::fs::write(&segments, "x0,y0,x1,y1\n0,0,1,1\n").unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,1,1\n").unwrap();
    let png = dir.path().join("r.png");
    let args = ["render", "--segments", s(&segments), "--rects", s(&rects)];
    let o = rectcast(&[&args[..], &["--out", s(&png), "--view", "5,5,5,5"]].concat());
    assert!(
        !o.status.success() && stderr(&o).contains("--view: expected min_x < max_x"),
        "{}",
        stderr(&o)
    );
    let jpg = dir.path().join("r.jpg");
    let o = rectcast(&[&args[..], &["--out", s(&jpg)]].concat());
    assert!(
        !o.status.success()
            && stderr(&o)
                .contains("render writes PNG or SVG: name the file .png or .svg (found .jpg)"),
        "{}",
        stderr(&o)
    );
    assert!(!png.exists() && !jpg.exists(), "an image was written");
}

/// The `class` attributes of an SVG's elements named `tag`, with each element's text.
fn svg_elements<'a>(svg: &'a str, tag: &str, class: &str) -> Vec<&'a str> {
    let open = format!("<{tag} class=\"{class}\"");
    svg.lines().filter(|l| l.starts_with(&open)).collect()
}

/// Attribute `name`'s number in an SVG element's text.
fn attribute(element: &str, name: &str) -> f32 {
    let from = element
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {element}"))
        + name.len()
        + 3;
    let to = from + element[from..].find('"').unwrap();
    element[from..to].parse().unwrap()
}

#[test]
fn render_to_svg_draws_the_pngs_marks_as_classed_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let segments = dir.path().join("s.csv");
    // The scene of the PNG test above: a crossing through the first rect, a miss, a vertical
    // segment entering the second rect.
    std::fs::write(
        &segments,
        "x0,y0,x1,y1\n-50,50,150,50\n-50,150,150,150\n200,-50,200,60\n",
    )
    .unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(
        &rects,
        "min_x,min_y,max_x,max_y\n0,0,100,100\n180,0,220,100\n",
    )
    .unwrap();
    let args = |out: &Path| {
        ok(&[
            "render",
            "--segments",
            s(&segments),
            "--rects",
            s(&rects),
            "--out",
            s(out),
            "--size",
            "400x400",
            "--view",
            "-100,-100,300,300",
            "--y-down",
            "--backend",
            "cpu",
        ])
    };
    let out = dir.path().join("scene.svg");
    args(&out);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    assert!(svg.contains(r#"width="400" height="400""#));
    // Scene point to pixel, as at_400 computes it (y down).
    let px = |x: f32| 66.0 + (x + 100.0) * 0.8;
    let py = |y: f32| 44.0 + (y + 100.0) * 0.8;
    let shapes = svg_elements(&svg, "rect", "shape");
    assert_eq!(shapes.len(), 2, "{shapes:?}");
    assert_eq!(attribute(shapes[0], "x"), px(0.0));
    assert_eq!(attribute(shapes[0], "width"), 80.0);
    let misses = svg_elements(&svg, "line", "miss");
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(attribute(misses[0], "y1"), py(150.0));
    assert_eq!(svg_elements(&svg, "line", "hit").len(), 2);
    // The crossing's part inside the first rect runs from its min_x edge to its max_x edge;
    // the vertical one's from the second rect's min_y edge to its end.
    let inside = svg_elements(&svg, "line", "inside");
    let spans: Vec<[f32; 4]> = inside
        .iter()
        .map(|e| ["x1", "y1", "x2", "y2"].map(|a| attribute(e, a)))
        .collect();
    assert_eq!(
        spans,
        vec![
            [px(0.0), py(50.0), px(100.0), py(50.0)],
            [px(200.0), py(0.0), px(200.0), py(60.0)]
        ]
    );
    assert_eq!(svg_elements(&svg, "circle", "entry").len(), 2);
    assert_eq!(svg_elements(&svg, "circle", "exit").len(), 1);
    // The legend's words are text, not pixels.
    assert!(svg.contains(">segment, no hit</text>"), "{svg}");
    // The PNG of the same scene draws the same hits: the same pixel classes at the marks.
    let png_out = dir.path().join("scene.png");
    args(&png_out);
    let png = tiny_skia::Pixmap::load_png(&png_out).unwrap();
    let [r, g, b] = at_400(&png, 50, 50, true);
    assert!(r > 180 && g < 80 && b < 100, "inside part {:?}", [r, g, b]);
    // A density picture embeds its image as a PNG of the whole picture's size.
    let dense = dir.path().join("dense.svg");
    ok(&[
        "render",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&dense),
        "--size",
        "400x400",
        "--style",
        "density",
        "--backend",
        "cpu",
    ]);
    let svg = std::fs::read_to_string(&dense).unwrap();
    let images = svg_elements(&svg, "image", "density");
    assert_eq!(images.len(), 1);
    assert!(
        images[0].contains("href=\"data:image/png;base64,iVBORw0KGgo"),
        "{}",
        images[0]
    );
    assert_eq!(
        svg_elements(&svg, "line", "miss").len(),
        0,
        "no lines in a density picture"
    );
}

#[test]
fn render_of_many_segments_is_a_density_image_with_hits_apart_from_misses() {
    let dir = tempfile::tempdir().unwrap();
    // 30,000 horizontal segments across x -100..300 at y 0..100 (above: a band of misses,
    // y 150..250), and one rect over x 0..100, y 0..100: inside it the hits' ramp shows, left
    // and right of it (and in the band of misses) the grey one.
    let mut text = String::from("x0,y0,x1,y1\n");
    for i in 0..30_000 {
        let y = if i % 2 == 0 {
            (i % 1000) as f32 / 10.0
        } else {
            150.0 + (i % 1000) as f32 / 10.0
        };
        text += &format!("-90,{y},290,{y}\n");
    }
    let segments = dir.path().join("s.csv");
    std::fs::write(&segments, text).unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,100,100\n").unwrap();
    let out = dir.path().join("dense.png");
    ok(&[
        "render",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--out",
        s(&out),
        "--size",
        "400x400",
        "--view",
        "-100,-100,300,300",
        "--backend",
        "cpu",
    ]);
    let png = tiny_skia::Pixmap::load_png(&out).unwrap();
    let at = |x, y| at_400(&png, x, y, false);
    let [r, g, b] = at(50, 50); // inside the rect: the hits' ramp (orange to dark red)
    assert!(
        r > 150 && b < 140 && r > g + 40,
        "inside the rect {:?}",
        [r, g, b]
    );
    for (x, y) in [(200, 50), (50, 200)] {
        let [r, g, b] = at(x, y); // past the rect, and the band of misses: grey
        assert!(r == g && g == b && r < 230, "({x}, {y}): {:?}", [r, g, b]);
    }
    assert_eq!(at(50, -50), [255, 255, 255], "where no segment passes");
    // The frame just left of the plot area (pixel column 63) is drawn: the axes.
    let [r, g, b] = pixel(&png, 63, 200);
    assert!(r < 100 && g < 100 && b < 100, "the frame {:?}", [r, g, b]);
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_float64_columns_convert_exactly_or_name_the_value() {
    use arrow_array::{Float64Array, RecordBatch};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let write = |rows: &[[f64; 4]], to: &Path| {
        let names = ["x0", "y0", "x1", "y1"];
        let schema = Arc::new(arrow_schema::Schema::new(
            names
                .iter()
                .map(|n| arrow_schema::Field::new(*n, arrow_schema::DataType::Float64, false))
                .collect::<Vec<_>>(),
        ));
        let columns = (0..4)
            .map(|c| {
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r[c])))
                    as arrow_array::ArrayRef
            })
            .collect();
        let file = std::fs::File::create(to).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), None).unwrap();
        w.write(&RecordBatch::try_new(schema, columns).unwrap())
            .unwrap();
        w.close().unwrap();
    };
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,10,10\n").unwrap();
    let exact = dir.path().join("s.parquet");
    write(&[[-5.0, 2.0, 15.0, 8.0], [2.0, 2.0, 3.0, 3.0]], &exact);
    let o = ok(&["first-hit", "--segments", s(&exact), "--rects", s(&rects)]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "segment,rect,kind,t_enter,t_exit,entry,exit\n0,0,cross,0.25,0.75,min_x,max_x\n1,0,inside,0,1,,\n"
    );
    let inexact = dir.path().join("bad.parquet");
    write(&[[-5.0, 2.0, 15.0, 8.0], [2.0, 0.1, 3.0, 3.0]], &inexact);
    let o = rectcast(&["first-hit", "--segments", s(&inexact), "--rects", s(&rects)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "bad.parquet: row 1, y0: y0 is 0.1 (float64), which float32 cannot hold exactly"
        ),
        "{}",
        stderr(&o)
    );
}

/// A structured NPY file's rows, each field as a number (`None`: -1 in an `<i8` index, NaN in
/// an `<f4`), with the fields' names; categories (`|u1`) and booleans as their codes.
fn npy_fields(path: &Path) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
    let descr = npy_descr(path);
    let fields: Vec<(String, String)> = descr
        .trim_matches(|c| c == '[' || c == ']')
        .split("), (")
        .map(|f| {
            let f = f.trim_matches(|c| c == '(' || c == ')');
            let (name, ty) = f.split_once(", ").unwrap();
            (name.trim_matches('\'').into(), ty.trim_matches('\'').into())
        })
        .collect();
    let width = |ty: &str| match ty {
        "<u8" | "<i8" => 8,
        "<f4" => 4,
        _ => 1,
    };
    let itemsize = fields.iter().map(|(_, ty)| width(ty)).sum();
    let rows = read_npy_rows(path, itemsize);
    let values = rows
        .iter()
        .map(|row| {
            let mut at = 0;
            let row = fields.iter().map(|(_, ty)| {
                let b = &row[at..at + width(ty)];
                at += width(ty);
                match ty.as_str() {
                    "<u8" => Some(u64::from_le_bytes(b.try_into().unwrap()) as f64),
                    "<i8" => Some(i64::from_le_bytes(b.try_into().unwrap()))
                        .filter(|&v| v >= 0)
                        .map(|v| v as f64),
                    "<f4" => Some(f32::from_le_bytes(b.try_into().unwrap()) as f64)
                        .filter(|v| !v.is_nan()),
                    _ => Some(b[0] as f64),
                }
            });
            row.collect()
        })
        .collect();
    (fields.into_iter().map(|(name, _)| name).collect(), values)
}

#[test]
fn the_widest_rows_polylines_over_polygons_with_rings_fit_in_npy() {
    // Rows over polylines and polygons carry the most columns: segment, line, line_segment,
    // polygon, the result, and entry and exit edges and rings (74 bytes a pairs row).
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("roads.wkt");
    std::fs::write(
        &lines,
        "LINESTRING (-1 0.5, 5 0.5, 5 3)\nMULTILINESTRING ((1.5 -1, 1.5 1.5), (9 9, 9 10))\n",
    )
    .unwrap();
    let polygons = dir.path().join("p.wkt");
    std::fs::write(
        &polygons,
        "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1))\n",
    )
    .unwrap();
    for query in ["pairs", "hits", "first-hit"] {
        let out = dir.path().join(format!("{query}.npy"));
        let args = ["--segments", s(&lines), "--polygons", s(&polygons)];
        ok(&[&[query][..], &args, &["--out", s(&out)]].concat());
        let csv = String::from_utf8(ok(&[&[query][..], &args].concat()).stdout).unwrap();
        let (names, rows) = npy_fields(&out);
        let mut csv = csv.lines();
        let header: Vec<&str> = csv.next().unwrap().split(',').collect();
        assert_eq!(names, header, "{query}");
        let csv: Vec<&str> = csv.collect();
        assert_eq!(rows.len(), csv.len(), "{query}");
        for (row, line) in rows.iter().zip(&csv) {
            for ((value, field), name) in row.iter().zip(line.split(',')).zip(&names) {
                // Categories and sides are codes in NPY, names in CSV.
                if ["hit", "kind"].contains(&name.as_str()) {
                    continue;
                }
                let want = (!field.is_empty()).then(|| field.parse::<f32>().unwrap() as f64);
                assert_eq!(*value, want, "{query}: {name} of {line}");
            }
        }
        let ring = header.iter().position(|&h| h == "exit_ring").unwrap();
        assert!(
            csv.iter().any(|l| l.split(',').nth(ring) == Some("1")),
            "{query}: no row leaves through the hole's ring"
        );
    }
}

/// The segments and rects of a scene as they are read: float32 records.
fn read_scene(segments: &Path, rects: &Path) -> (Vec<Segment>, Vec<Rect>) {
    let seg = read_npy_f32(segments)
        .iter()
        .map(|v| Segment::new(v[0], v[1], v[2], v[3]))
        .collect();
    let rect = read_npy_f32(rects)
        .iter()
        .map(|v| Rect::new(v[0], v[1], v[2], v[3]))
        .collect();
    (seg, rect)
}

/// Runs rectcast to success within `limit`; a job still running then is killed, and fails
/// the test as a hang rather than hanging it.
fn ok_within(args: &[&str], limit: std::time::Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run rectcast");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "rectcast {} still ran after {limit:?}: a hang",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "rectcast {}: {err}", args.join(" "));
}

#[test]
fn hits_found_in_pieces_equal_the_librarys_hits_row_by_row() {
    // Hits are found a piece of a chunk at a time (pieces of 1,024, 4,096, 16,384 segments and
    // on, across chunks of 131,072): the rows must be the library's, in order. Four chunks:
    // the reader is two chunks ahead of the worker while the writer takes each piece (a job of
    // three chunks or more once hung there).
    let dir = tempfile::tempdir().unwrap();
    let (segments, rects) = generate(dir.path(), "bullet-hell", 400_000, 300, "npy");
    let out = dir.path().join("hits.npy");
    let args = ["hits", "--backend", "cpu", "--segments", s(&segments)];
    let args = [&args[..], &["--rects", s(&rects), "--out", s(&out)]].concat();
    ok_within(&args, std::time::Duration::from_secs(120));
    let (seg, rect) = read_scene(&segments, &rects);
    let want = Engine::new(Backend::Cpu)
        .unwrap()
        .hits(&Batch::new(&seg, &rect))
        .unwrap();
    // segment, rect u64, hit bool, kind u8, t_enter, t_exit f32, entry, exit u8: 28 bytes.
    let rows = read_npy_rows(&out, 28);
    assert_eq!(rows.len(), want.len());
    assert!(rows.len() > 10_000, "{} hits", rows.len());
    for (i, (row, hit)) in rows.iter().zip(&want).enumerate() {
        let t_enter = f32::from_le_bytes(row[18..22].try_into().unwrap());
        let got = (u64_at(row, 0), u64_at(row, 8), t_enter.to_bits());
        let expected = (
            hit.segment as u64,
            hit.rect as u64,
            hit.result.t_enter.to_bits(),
        );
        assert_eq!(got, expected, "row {i}");
    }
}

#[test]
fn hits_of_segments_that_each_hit_every_rect_stay_in_bounded_memory() {
    // 20,000 segments across 2,000 rects: 40 million hits, 1 GB as rows in memory at once
    // (1.5 GB peak, measured, when a chunk's hits were held whole). In pieces of about 2
    // million hits the job stays under a few hundred MB (174 MB measured).
    let dir = tempfile::tempdir().unwrap();
    let mut segments = String::from("x0,y0,x1,y1\n");
    for i in 0..20_000 {
        let y = i as f32 * 0.05;
        segments += &format!("-1,{y},1001,{y}\n");
    }
    let mut rects = String::from("min_x,min_y,max_x,max_y\n");
    for k in 0..2_000 {
        let x = k as f32 * 0.5;
        rects += &format!("{x},0,{},1000\n", x + 0.25);
    }
    let (segments_path, rects_path) = (dir.path().join("s.csv"), dir.path().join("r.csv"));
    std::fs::write(&segments_path, segments).unwrap();
    std::fs::write(&rects_path, rects).unwrap();
    let inputs = ["--segments", s(&segments_path), "--rects", s(&rects_path)];
    let peak = peak_rss(&[&["hits", "--backend", "cpu"][..], &inputs].concat());
    eprintln!("peak RSS {} MB for 40 million hits", peak >> 20);
    assert!(
        peak < 600 << 20,
        "peak RSS {} MB: the hits are not held in pieces",
        peak >> 20
    );
    // Every rect is hit by every segment.
    let counts = ok(&[&["count", "--backend", "cpu"][..], &inputs].concat()).stdout;
    let counts = String::from_utf8(counts).unwrap();
    assert_eq!(counts.lines().count(), 2_001);
    assert!(
        counts.lines().skip(1).all(|l| l.ends_with(",20000")),
        "{}",
        &counts[..200]
    );
}
