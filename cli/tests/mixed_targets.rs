//! A job over several kinds of target at once: `--rects`, `--circles`, `--walls` and
//! `--polygons` together. Its first hits are the library's scene's (`Targets`), element by
//! element on every backend, and its rows of each kind are that kind's own job's.

mod common;

use std::collections::BTreeMap;

use common::{backends, ok, rectcast, s, stderr};
use rectcast::{Circle, Engine, Polygons, Rect, Segment, TargetBatch, TargetKind, Targets};

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    /// An integer coordinate on a 0..=20 grid: many exact ties between kinds.
    fn at(&mut self) -> f32 {
        self.below(21) as f32
    }
}

/// A scene on a small integer grid, written as the CLI reads it.
struct Scene {
    dir: tempfile::TempDir,
    segments: Vec<Segment>,
    rects: Vec<Rect>,
    circles: Vec<Circle>,
    walls: Vec<Segment>,
    polygons: Vec<Vec<[f32; 2]>>,
}

impl Scene {
    fn new(seed: u64) -> Self {
        let mut g = Lcg(seed);
        let segment = |g: &mut Lcg| Segment::new(g.at(), g.at(), g.at(), g.at());
        let segments: Vec<Segment> = (0..300).map(|_| segment(&mut g)).collect();
        let rects = (0..12)
            .map(|_| {
                let (x, y) = (g.at(), g.at());
                Rect::new(
                    x,
                    y,
                    x + 1.0 + g.below(4) as f32,
                    y + 1.0 + g.below(4) as f32,
                )
            })
            .collect();
        let circles = (0..8)
            .map(|_| Circle::new(g.at(), g.at(), 1.0 + g.below(3) as f32))
            .collect();
        let walls = (0..12).map(|_| segment(&mut g)).collect();
        let polygons = (0..6)
            .map(|_| {
                let (x, y) = (g.at(), g.at());
                let (w, h) = (1.0 + g.below(4) as f32, 1.0 + g.below(4) as f32);
                vec![[x, y], [x + w, y], [x + w / 2.0, y + h]]
            })
            .collect();
        let scene = Self {
            dir: tempfile::tempdir().unwrap(),
            segments,
            rects,
            circles,
            walls,
            polygons,
        };
        let csv = |name: &str, header: &str, rows: Vec<String>| {
            std::fs::write(scene.path(name), format!("{header}\n{}\n", rows.join("\n"))).unwrap()
        };
        let segment_rows = |v: &[Segment]| {
            v.iter()
                .map(|s| format!("{},{},{},{}", s.x0, s.y0, s.x1, s.y1))
                .collect()
        };
        csv("s.csv", "x0,y0,x1,y1", segment_rows(&scene.segments));
        csv("w.csv", "x0,y0,x1,y1", segment_rows(&scene.walls));
        let rects = scene.rects.iter();
        let rows = rects.map(|r| format!("{},{},{},{}", r.min_x, r.min_y, r.max_x, r.max_y));
        csv("r.csv", "min_x,min_y,max_x,max_y", rows.collect());
        let rows = scene
            .circles
            .iter()
            .map(|c| format!("{},{},{}", c.cx, c.cy, c.r));
        csv("c.csv", "cx,cy,r", rows.collect());
        let wkt: Vec<String> = scene
            .polygons
            .iter()
            .map(|ring| {
                let mut points: Vec<String> =
                    ring.iter().map(|[x, y]| format!("{x} {y}")).collect();
                points.push(points[0].clone());
                format!("POLYGON (({}))", points.join(", "))
            })
            .collect();
        std::fs::write(scene.path("p.wkt"), wkt.join("\n") + "\n").unwrap();
        scene
    }

    fn path(&self, name: &str) -> String {
        s(&self.dir.path().join(name)).to_owned()
    }

    /// The flags of every kind.
    fn all(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for (flag, file) in KINDS {
            flags.push(format!("--{flag}"));
            flags.push(self.path(file));
        }
        flags
    }

    fn targets(&self) -> Targets {
        let mut targets = Targets::new();
        targets.set_rects(&self.rects).unwrap();
        targets.set_circles(&self.circles).unwrap();
        targets.set_walls(&self.walls).unwrap();
        targets.set_polygons(Polygons::from_rings(&self.polygons).unwrap());
        targets
    }
}

/// Each kind's flag and file, in the library's kind order.
const KINDS: [(&str, &str); 4] = [
    ("rects", "r.csv"),
    ("circles", "c.csv"),
    ("walls", "w.csv"),
    ("polygons", "p.wkt"),
];

/// What a mixed job's rows call each kind.
fn kind_name(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Rect => "rect",
        TargetKind::Circle => "circle",
        TargetKind::Wall => "wall",
        TargetKind::Polygon => "polygon",
    }
}

/// A CSV table's rows, each a map of column name to field.
fn rows(csv: &[u8]) -> Vec<BTreeMap<String, String>> {
    let text = std::str::from_utf8(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|line| {
            let fields = line.split(',');
            header
                .iter()
                .map(|h| h.to_string())
                .zip(fields.map(String::from))
                .collect()
        })
        .collect()
}

fn run(command: &str, flags: &[String], backend: &str) -> Vec<u8> {
    let mut args: Vec<&str> = vec![command, "--backend", backend];
    args.extend(flags.iter().map(String::as_str));
    ok(&args).stdout
}

#[test]
fn a_mixed_first_hit_is_the_scenes_first_hit_on_every_backend_element_by_element() {
    for seed in [1, 2, 3] {
        let scene = Scene::new(seed);
        let mut flags = vec!["--segments".to_string(), scene.path("s.csv")];
        flags.extend(scene.all());
        let targets = scene.targets();
        let batch = TargetBatch::over(&scene.segments, &targets);
        let want = Engine::new(rectcast::Backend::Cpu)
            .unwrap()
            .target_first_hits(&batch)
            .unwrap();
        let (mut hits, mut across) = (0, std::collections::BTreeSet::new());
        for backend in backends() {
            let got = rows(&run("first-hit", &flags, backend));
            assert_eq!(got.len(), want.len());
            for (i, (row, want)) in got.iter().zip(&want).enumerate() {
                let expected = match want {
                    Some(hit) => [
                        kind_name(hit.kind()).to_string(),
                        hit.target.to_string(),
                        hit.contact.t_enter().to_string(),
                        hit.contact.t_exit().to_string(),
                    ],
                    None => Default::default(),
                };
                let fields = ["target_kind", "target", "t_enter", "t_exit"].map(|c| row[c].clone());
                assert_eq!(
                    fields, expected,
                    "seed {seed}, {backend}: segment {i} {:?}, first difference; its row {row:?}",
                    scene.segments[i]
                );
                if let Some(hit) = want {
                    hits += 1;
                    across.insert(hit.kind());
                }
            }
        }
        // The scene tests what it says: hits of every kind.
        assert!(
            hits > 100 && across.len() == 4,
            "seed {seed}: {hits} hits, kinds {across:?}"
        );
    }
}

/// Along y = 0 from x = 0 to 3, a wall crossed at x = 1 − 2^-27 and a rect entered at x = 1:
/// 5/12 of an ulp apart, the same f32 t. The wall is entered first in exact arithmetic, so it
/// is the first hit though rects come first among kinds; reversed, the rect is met first.
#[test]
fn a_wall_crossed_under_half_an_ulp_before_a_rect_is_the_first_hit_though_both_round_alike() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let low = 1.0 - 2f32.powi(-24);
    let flags = [
        "--segments".to_string(),
        write("s.csv", "x0,y0,x1,y1\n0,0,3,0\n3,0,0,0\n"),
        "--rects".to_string(),
        write("r.csv", "min_x,min_y,max_x,max_y\n1,-1,2,1\n"),
        "--walls".to_string(),
        write("w.csv", &format!("x0,y0,x1,y1\n5,5,6,6\n1,-1,{low},7\n")),
    ];
    for backend in backends() {
        let got = rows(&run("first-hit", &flags, backend));
        let first: Vec<[&str; 3]> = got
            .iter()
            .map(|row| [&row["target_kind"], &row["target"], &row["t_enter"]].map(String::as_str))
            .collect();
        assert_eq!(
            first,
            [["wall", "1", "0.33333334"], ["rect", "0", "0.33333334"]],
            "{backend}: {got:?}"
        );
    }
}

#[test]
fn a_mixed_jobs_rows_of_each_kind_are_that_kinds_own_jobs_rows() {
    let scene = Scene::new(7);
    let segments = ["--segments".to_string(), scene.path("s.csv")];
    for command in ["pairs", "hits", "count"] {
        let mixed = rows(&run(
            command,
            &[&segments[..], &scene.all()].concat(),
            "cpu",
        ));
        let mut seen = 0;
        for (kind, (flag, file)) in TargetKind::ALL.iter().zip(KINDS) {
            let one = [&segments[..], &[format!("--{flag}"), scene.path(file)]].concat();
            let own = rows(&run(command, &one, "cpu"));
            let name = kind_name(*kind);
            let of_kind: Vec<_> = mixed.iter().filter(|r| r["target_kind"] == name).collect();
            assert_eq!(of_kind.len(), own.len(), "{command} --{flag}: rows");
            for (m, o) in of_kind.iter().zip(&own) {
                // Every column of the kind's own row, the id under `target`, the same; every
                // other column of the mixed row absent.
                for (column, value) in o {
                    let at = if column == name {
                        "target"
                    } else {
                        column.as_str()
                    };
                    assert_eq!(
                        &m[at], value,
                        "{command} --{flag}: column {column}, rows {o:?} and {m:?}"
                    );
                }
                for (column, value) in m.iter() {
                    let own_column =
                        o.contains_key(column) || column == "target" || column == "target_kind";
                    assert!(
                        own_column || value.is_empty(),
                        "{command} --{flag}: {column} in {m:?}"
                    );
                }
            }
            seen += own.len();
        }
        assert_eq!(seen, mixed.len(), "{command}: rows of no kind");
        assert!(seen > 0);
    }
}

#[test]
fn a_mixed_job_skips_invalid_targets_and_numbers_rows_by_their_file_records() {
    let scene = Scene::new(11);
    // An invalid rect (min above max) and circle (NaN radius) at record 1 of each file.
    let edit = |name: &str, bad: &str| {
        let path = scene.path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(2, bad);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    };
    edit("r.csv", "5,5,1,1");
    edit("c.csv", "1,1,NaN");
    let mut flags = vec![
        "--segments".to_string(),
        scene.path("s.csv"),
        "--skip-invalid".into(),
    ];
    flags.extend(scene.all());
    let mixed = rows(&run("count", &flags, "cpu"));
    let ids = |kind: &str| -> Vec<String> {
        mixed
            .iter()
            .filter(|r| r["target_kind"] == kind)
            .map(|r| r["target"].clone())
            .collect()
    };
    let expected =
        |n: usize| -> Vec<String> { (0..=n).filter(|&i| i != 1).map(|i| i.to_string()).collect() };
    assert_eq!(ids("rect"), expected(scene.rects.len()));
    assert_eq!(ids("circle"), expected(scene.circles.len()));
    // Without --skip-invalid the job fails, naming the file and line.
    flags.retain(|f| f != "--skip-invalid");
    let mut args = vec!["count"];
    args.extend(flags.iter().map(String::as_str));
    let o = rectcast(&args);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("r.csv:3"), "{}", stderr(&o));
}

#[test]
fn a_mixed_job_writes_npy_with_the_target_kind_as_its_code() {
    let scene = Scene::new(5);
    let out = scene.dir.path().join("o.npy");
    let mut flags = vec![
        "--segments".to_string(),
        scene.path("s.csv"),
        "--out".into(),
        s(&out).into(),
    ];
    flags.extend(scene.all());
    run("first-hit", &flags, "cpu");
    let bytes = std::fs::read(&out).unwrap();
    let header = String::from_utf8_lossy(&bytes[10..128]);
    assert!(
        header.contains("('target_kind', '|u1'), ('target', '<i8')"),
        "{header}"
    );
}

#[test]
fn a_mixed_job_keeps_the_segments_columns_and_refuses_a_targets() {
    let scene = Scene::new(3);
    let mut flags = vec!["--segments".to_string(), scene.path("s.csv")];
    flags.extend(scene.all());
    let refused = |command: &str, keep: &str| {
        let args = [
            &[command.to_string()],
            &flags[..],
            &["--keep".into(), keep.into()],
        ]
        .concat();
        let o = rectcast(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(!o.status.success(), "{command} --keep {keep} accepted");
        assert!(
            stderr(&o).contains("several kinds of target"),
            "{}",
            stderr(&o)
        );
    };
    refused("hits", "rects:min_x");
    refused("count", "x0");
    let kept = rows(&run(
        "hits",
        &[&flags[..], &["--keep".into(), "segments:x0".into()]].concat(),
        "cpu",
    ));
    let x0 = |row: &BTreeMap<String, String>| {
        row["segment"]
            .parse::<usize>()
            .map(|i| scene.segments[i].x0)
    };
    assert!(
        kept.iter()
            .all(|r| r["segments:x0"].parse::<f32>().ok() == x0(r).ok())
    );
    assert!(!kept.is_empty());
}
