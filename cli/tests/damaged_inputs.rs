//! Inputs read exactly or refused: decimal text read to the nearest float32 in every format, a
//! damaged gzip stream an error naming its file (never records read as good), a WKT nested
//! thousands deep an error at its line, and a named pipe read to its end.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{ok, rectcast, s, stderr};

fn file(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    out.write_all(bytes).expect("gzip");
    out.finish().expect("gzip")
}

#[test]
fn a_midpoint_vertex_reads_alike_from_wkt_geojson_and_csv() {
    // 116.939853668212890625 lies halfway between two float32 values: to nearest, ties to
    // even, it is 116.93984985351562, where the segment runs along the polygon's left edge.
    let dir = tempfile::tempdir().unwrap();
    let mid = "116.939853668212890625";
    let wkt = file(
        dir.path(),
        "p.wkt",
        format!("POLYGON (({mid} -10, 200 -10, 200 10, {mid} 10, {mid} -10))\n"),
    );
    let geojson = file(
        dir.path(),
        "p.geojson",
        format!(
            r#"{{"type": "Polygon", "coordinates": [[[{mid}, -10], [200, -10], [200, 10], [{mid}, 10], [{mid}, -10]]]}}"#
        ),
    );
    let segments = file(
        dir.path(),
        "s.csv",
        "x0,y0,x1,y1\n116.93984985351562,-1,116.93984985351562,1\n",
    );
    let from_text = file(
        dir.path(),
        "m.csv",
        format!("x0,y0,x1,y1\n{mid},-1,{mid},1\n"),
    );
    let pairs = |segments: &Path, polygons: &Path| {
        let o = ok(&[
            "pairs",
            "--segments",
            s(segments),
            "--polygons",
            s(polygons),
        ]);
        String::from_utf8(o.stdout).unwrap()
    };
    let expected = pairs(&segments, &wkt);
    let row = expected.lines().nth(1).expect("a row");
    assert!(row.starts_with("0,0,true,"), "a hit on the edge: {row}");
    for (segments, polygons) in [
        (&segments, &geojson),
        (&from_text, &wkt),
        (&from_text, &geojson),
    ] {
        assert_eq!(
            pairs(segments, polygons),
            expected,
            "{} against {}",
            segments.display(),
            polygons.display()
        );
    }
}

#[test]
fn a_gzip_stream_with_a_bad_crc_cut_short_or_trailing_garbage_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "gen",
        "--kind",
        "random",
        "--segments",
        "300",
        "--rects",
        "20",
        "--format",
        "npy",
        "--out-dir",
        s(dir.path()),
        "--seed",
        "3",
    ]);
    let rects = dir.path().join("rects.npy");
    let npy = std::fs::read(dir.path().join("segments.npy")).unwrap();
    // The same records as .f32 (after the NPY header) and as CSV.
    let header = 10 + u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let raw = &npy[header..];
    let csv: String = std::iter::once("x0,y0,x1,y1\n".to_string())
        .chain(raw.chunks_exact(16).map(|r| {
            let v: Vec<String> = (r.chunks_exact(4))
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()).to_string())
                .collect();
            v.join(",") + "\n"
        }))
        .collect();
    for (name, plain) in [
        ("s.npy", &npy[..]),
        ("s.f32", raw),
        ("s.csv", csv.as_bytes()),
    ] {
        let good = gzip(plain);
        let out = dir.path().join("out.csv");
        let gz = format!("{name}.gz");
        let run = |bytes: &[u8]| {
            let input = file(dir.path(), &gz, bytes);
            rectcast(&[
                "first-hit",
                "--segments",
                s(&input),
                "--rects",
                s(&rects),
                "--out",
                s(&out),
            ])
        };
        ok(&[
            "first-hit",
            "--segments",
            s(&file(dir.path(), &gz, &good)),
            "--rects",
            s(&rects),
        ]);
        let mut bad_crc = good.clone();
        let crc = bad_crc.len() - 8;
        bad_crc[crc] ^= 0xff;
        let cut = &good[..good.len() - 4];
        let mut trailing = good.clone();
        trailing.extend_from_slice(b"garbage after the member");
        for (damage, bytes) in [
            ("a bad CRC", &bad_crc[..]),
            ("cut short", cut),
            ("trailing garbage", &trailing),
        ] {
            let o = run(bytes);
            assert!(!o.status.success(), "{gz} with {damage} was read");
            assert!(
                stderr(&o).contains(&gz),
                "{gz} with {damage}: {}",
                stderr(&o)
            );
            assert!(!out.exists(), "{gz} with {damage} left an output");
        }
    }
}

#[test]
fn wkt_nested_thousands_deep_is_an_error_at_its_line_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = file(
        dir.path(),
        "deep.wkt",
        format!(
            "{}POLYGON ((0 0, 1 0, 1 1, 0 0)){}\n",
            "GEOMETRYCOLLECTION (".repeat(10_000),
            ")".repeat(10_000)
        ),
    );
    let segments = file(dir.path(), "s.csv", "x0,y0,x1,y1\n0,0,1,1\n");
    let rects = file(dir.path(), "r.csv", "min_x,min_y,max_x,max_y\n0,0,1,1\n");
    for args in [
        ["pairs", "--segments", s(&segments), "--polygons", s(&deep)],
        ["pairs", "--segments", s(&deep), "--rects", s(&rects)],
    ] {
        let o = rectcast(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let said = stderr(&o);
        assert!(said.contains("deep.wkt:1:1300"), "{said}");
        assert!(said.contains("nested over 64 deep"), "{said}");
    }
}

#[cfg(unix)]
#[test]
fn a_named_pipe_of_f32_records_is_read_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "gen",
        "--kind",
        "random",
        "--segments",
        "1000",
        "--rects",
        "50",
        "--format",
        "f32",
        "--out-dir",
        s(dir.path()),
        "--seed",
        "5",
    ]);
    let (segments, rects) = (
        dir.path().join("segments.f32"),
        dir.path().join("rects.f32"),
    );
    let expected = ok(&[
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
    ])
    .stdout;
    assert_eq!(String::from_utf8_lossy(&expected).lines().count(), 1001);
    for (flag, pipe_of) in [("--segments", &segments), ("--rects", &rects)] {
        let pipe = dir.path().join("p.f32");
        let _ = std::fs::remove_file(&pipe);
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        assert!(made.expect("mkfifo").success());
        let bytes = std::fs::read(pipe_of).unwrap();
        let writer_pipe = pipe.clone();
        let writer = std::thread::spawn(move || {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&writer_pipe)
                .and_then(|mut p| p.write_all(&bytes))
        });
        let (segments, rects) = if flag == "--segments" {
            (pipe.as_path(), rects.as_path())
        } else {
            (segments.as_path(), pipe.as_path())
        };
        let o = ok(&["first-hit", "--segments", s(segments), "--rects", s(rects)]);
        writer.join().unwrap().expect("the pipe written");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&expected),
            "{flag} through a pipe"
        );
    }
}
