//! `--keep COLUMN…`: input columns (CSV, Parquet, GeoJSON properties) carried into the rows of
//! every query, checked row by row against the same job without them, and the refusals.

mod common;

use common::{backends, ok, rectcast, s, stderr};
use std::path::{Path, PathBuf};

/// A CSV output's header and rows, read with the csv crate (so quoting is read as a reader
/// reads it).
fn table(csv: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(csv);
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// Roads with names that need quoting, and two parcels: one with a hole, its properties a
/// string, a number and a null; one without `area`, its id a number.
struct Scene {
    dir: tempfile::TempDir,
    roads: PathBuf,
    parcels: PathBuf,
}

const ROAD_NAMES: [&str; 5] = ["Main St, north", "Elm", "say \"hi\"", " spaced ", "far"];

fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let roads = dir.path().join("roads.csv");
    std::fs::write(
        &roads,
        "x0,y0,x1,y1,name\n\
         -1,0.5,5,0.5,\"Main St, north\"\n\
         9,9,9,10,Elm\n\
         1.5,-1,1.5,1.5,\"say \"\"hi\"\"\"\n\
         8.5,-1,8.5,12,\" spaced \"\n\
         20,20,30,30,far\n",
    )
    .unwrap();
    let parcels = dir.path().join("parcels.geojson");
    std::fs::write(
        &parcels,
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "id": "p0", "properties": {"owner": "Ann", "area": 15, "tags": null},
             "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]],
                                                              [[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]}},
            {"type": "Feature", "id": 7, "properties": {"owner": "Bob, Jr."},
             "geometry": {"type": "Polygon", "coordinates": [[[8, 8], [10, 8], [10, 10], [8, 10], [8, 8]]]}}
        ]}"#,
    )
    .unwrap();
    Scene {
        dir,
        roads,
        parcels,
    }
}

/// Each parcel's kept values: owner, area, tags, id.
fn parcel(i: usize) -> [&'static str; 4] {
    [["Ann", "15", "", "p0"], ["Bob, Jr.", "", "", "7"]][i]
}

#[test]
fn kept_columns_follow_each_rows_segment_and_polygon_in_every_query() {
    let scene = scene();
    let inputs = [
        "--segments",
        s(&scene.roads),
        "--polygons",
        s(&scene.parcels),
    ];
    let (mut polygon_rows, mut misses) = (0, 0);
    // The kept values are the host's: every query on the CPU, and hits (whose order the
    // backend's hit list decides) on the GPU too.
    let gpu = backends()
        .into_iter()
        .filter(|&b| b == "gpu")
        .map(|b| (b, "hits"));
    let cpu = ["pairs", "hits", "first-hit", "count"].map(|q| ("cpu", q));
    for (backend, query) in cpu.into_iter().chain(gpu) {
        {
            let run = |keep: &[&str]| {
                let args = [&[query][..], &inputs, &["--backend", backend], keep].concat();
                table(&ok(&args).stdout)
            };
            let (header, rows) = run(&[]);
            let keep = if query == "count" {
                "owner,area,tags,id"
            } else {
                "name,owner,area,tags,id"
            };
            let (kept_header, kept_rows) = run(&["--keep", keep]);
            let names: Vec<&str> = keep.split(',').collect();
            assert_eq!(
                kept_header,
                [
                    header.clone(),
                    names.iter().map(|n| n.to_string()).collect()
                ]
                .concat()
            );
            assert_eq!(kept_rows.len(), rows.len(), "{query} on {backend}");
            let at = |name: &str| header.iter().position(|h| h == name);
            for (row, kept) in rows.iter().zip(&kept_rows) {
                let polygon = at("polygon").and_then(|c| row[c].parse::<usize>().ok());
                let mut want = row.clone();
                if let Some(c) = at("segment") {
                    want.push(ROAD_NAMES[row[c].parse::<usize>().unwrap()].to_string());
                }
                // A first-hit miss has no polygon: its columns are empty.
                let values = polygon.map_or([""; 4], parcel);
                want.extend(values.iter().map(|v| v.to_string()));
                assert_eq!(kept, &want, "{query} on {backend}");
                polygon_rows += polygon.is_some_and(|p| p == 1) as usize;
                misses += (query == "first-hit" && polygon.is_none()) as usize;
            }
        }
    }
    assert!(polygon_rows > 0, "no row of the second parcel");
    assert!(misses > 0, "no first-hit miss");
}

#[test]
fn polyline_properties_and_prefixed_ids_are_kept_per_line() {
    let scene = scene();
    let lines = scene.dir.path().join("roads.geojson");
    std::fs::write(
        &lines,
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "id": 40, "properties": {"lanes": 2, "meta": {"a": [1, "x"]}},
             "geometry": {"type": "LineString", "coordinates": [[-1, 0.5], [5, 0.5], [3, 3]]}},
            {"type": "Feature", "id": 41, "properties": {"lanes": null},
             "geometry": {"type": "MultiLineString", "coordinates": [[[1.5, -1], [1.5, 1.5]], [[9, 9], [9, 10]]]}}
        ]}"#,
    )
    .unwrap();
    let args = [
        "hits",
        "--segments",
        s(&lines),
        "--polygons",
        s(&scene.parcels),
        "--keep",
        "lanes",
        "meta",
        "segments:id",
        "polygons:id",
    ];
    let (header, rows) = table(&ok(&args).stdout);
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        &header[at("lanes")..],
        ["lanes", "meta", "segments:id", "polygons:id"]
    );
    assert!(rows.len() >= 3, "{rows:?}");
    for row in &rows {
        let line: usize = row[at("line")].parse().unwrap();
        let polygon: usize = row[at("polygon")].parse().unwrap();
        let (lanes, meta) = [("2", r#"{"a":[1,"x"]}"#), ("", "")][line];
        assert_eq!(row[at("lanes")], lanes, "{row:?}");
        assert_eq!(row[at("meta")], meta, "{row:?}");
        assert_eq!(row[at("segments:id")], ["40", "41"][line], "{row:?}");
        assert_eq!(row[at("polygons:id")], parcel(polygon)[3], "{row:?}");
    }
}

#[test]
fn a_kept_name_that_is_ambiguous_missing_clashing_or_unwritable_is_refused_without_output() {
    let scene = scene();
    let wkt = scene.dir.path().join("roads.wkt");
    std::fs::write(&wkt, "LINESTRING (0 0, 1 1)\n").unwrap();
    let roads_with_owner = scene.dir.path().join("owned.csv");
    std::fs::write(&roads_with_owner, "x0,y0,x1,y1,owner\n0,0,1,1,me\n").unwrap();
    let cases: [(&str, &Path, &str, &str); 7] = [
        ("hits", &roads_with_owner, "owner", "--keep owner: both"),
        (
            "hits",
            &scene.roads,
            "nope",
            "--keep nope: no column nope in",
        ),
        (
            "hits",
            &scene.roads,
            "kind",
            "write segments:kind or polygons:kind",
        ),
        (
            "hits",
            &scene.roads,
            "rects:id",
            "this job's targets are --polygons",
        ),
        ("count", &scene.roads, "name", "count rows are per polygon"),
        (
            "hits",
            &wkt,
            "segments:name",
            "which has no columns to keep",
        ),
        (
            "first-hit",
            &scene.roads,
            "name",
            "kept columns (--keep) are text",
        ),
    ];
    for (query, segments, keep, message) in cases {
        let out = scene.dir.path().join(if message.contains("text") {
            "out.npy"
        } else {
            "out.csv"
        });
        let o = rectcast(&[
            query,
            "--segments",
            s(segments),
            "--polygons",
            s(&scene.parcels),
            "--keep",
            keep,
            "--out",
            s(&out),
        ]);
        assert!(!o.status.success(), "--keep {keep}: succeeded");
        assert!(
            stderr(&o).contains(message),
            "--keep {keep}: {}",
            stderr(&o)
        );
        assert!(!out.exists(), "--keep {keep}: left {}", out.display());
    }
}

/// `batch` as a Parquet file at `path`.
#[cfg(feature = "parquet")]
fn write_parquet(path: &Path, batch: &arrow_array::RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_columns_are_kept_as_text_and_written_as_nullable_strings() {
    use arrow_array::{Array, ArrayRef, Float32Array, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;

    let scene = scene();
    // Roads as Parquet: their coordinates, an integer id with a null, and a label.
    let x = |v: [f32; 4]| Arc::new(Float32Array::from(v.to_vec())) as ArrayRef;
    let columns = vec![
        ("x0", x([-1.0, 9.0, 1.5, 8.5])),
        ("y0", x([0.5, 9.0, -1.0, -1.0])),
        ("x1", x([5.0, 9.0, 1.5, 8.5])),
        ("y1", x([0.5, 10.0, 1.5, 12.0])),
        (
            "road",
            Arc::new(Int64Array::from(vec![
                Some(12),
                None,
                Some(-3),
                Some(1 << 40),
            ])) as ArrayRef,
        ),
        (
            "label",
            Arc::new(StringArray::from(vec![
                Some("a,b"),
                Some("c"),
                None,
                Some(""),
            ])) as ArrayRef,
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let roads = scene.dir.path().join("roads.parquet");
    write_parquet(&roads, &batch);
    let road = ["12", "", "-3", "1099511627776"];
    let label = [Some("a,b"), Some("c"), None, Some("")];
    let out = scene.dir.path().join("hits.parquet");
    let args = [
        "hits",
        "--segments",
        s(&roads),
        "--polygons",
        s(&scene.parcels),
        "--keep",
        "road,label,owner",
    ];
    let (header, rows) = table(&ok(&args).stdout);
    ok(&[&args[..], &["--out", s(&out)]].concat());
    let batches = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&out).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut csv_rows = rows.iter();
    for batch in batches {
        let batch = batch.unwrap();
        let text = |name: &str| {
            let column = batch.column_by_name(name).unwrap();
            assert!(batch.schema().field_with_name(name).unwrap().is_nullable());
            column
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .clone()
        };
        let (road_column, label_column, owner) = (text("road"), text("label"), text("owner"));
        for i in 0..batch.num_rows() {
            let row = csv_rows.next().unwrap();
            let segment: usize = row[at("segment")].parse().unwrap();
            let polygon: usize = row[at("polygon")].parse().unwrap();
            let value = |a: &StringArray| (!a.is_null(i)).then(|| a.value(i).to_string());
            let want_road = Some(road[segment]).filter(|r| !r.is_empty());
            assert_eq!(value(&road_column).as_deref(), want_road, "{row:?}");
            assert_eq!(value(&label_column).as_deref(), label[segment], "{row:?}");
            assert_eq!(
                value(&owner).as_deref(),
                Some(parcel(polygon)[0]),
                "{row:?}"
            );
            assert_eq!(row[at("road")], road[segment], "{row:?}");
            assert_eq!(row[at("label")], label[segment].unwrap_or(""), "{row:?}");
        }
    }
    assert!(csv_rows.next().is_none(), "Parquet has fewer rows than CSV");
    let segments: Vec<&str> = rows.iter().map(|r| r[at("segment")].as_str()).collect();
    assert!(
        segments.contains(&"1") && segments.contains(&"3"),
        "{segments:?}"
    );
}

#[test]
fn kept_values_stay_with_their_segment_across_chunks_and_skipped_records() {
    // More segments than a chunk (131,072), some invalid and skipped: each row's kept tag must
    // be its own segment's.
    let dir = tempfile::tempdir().unwrap();
    let n: usize = 140_000;
    let mut text = String::from("tag,x0,y0,x1,y1\n");
    for i in 0..n {
        let x = (i % 1000) as f32;
        let x0 = if i % 10_007 == 5 {
            "nan".to_string()
        } else {
            x.to_string()
        };
        text += &format!("\"t {i}, ok\",{x0},0,{},1\n", x + 0.5);
    }
    let segments = dir.path().join("s.csv");
    std::fs::write(&segments, text).unwrap();
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y,name\n0,0,500,2,west\n").unwrap();
    let args = [
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--keep",
        "tag,name",
        "--skip-invalid",
    ];
    let (header, rows) = table(&ok(&args).stdout);
    assert_eq!(header[header.len() - 2..], ["tag", "name"]);
    assert_eq!(rows.len(), (0..n).filter(|i| i % 10_007 != 5).count());
    for row in &rows {
        let segment: usize = row[0].parse().unwrap();
        assert_eq!(row[header.len() - 2], format!("t {segment}, ok"), "{row:?}");
        let hit = (segment % 1000) <= 500; // 500 touches the rect's max_x
        assert_eq!(
            row[header.len() - 1],
            if hit { "west" } else { "" },
            "{row:?}"
        );
    }
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_values_of_any_displayable_type_stay_with_their_row_across_batches() {
    use arrow_array::types::Int32Type;
    use arrow_array::{ArrayRef, Date32Array, DictionaryArray, Float32Array, RecordBatch};
    use std::sync::Arc;

    // More rows than a Parquet read batch (65,536), a null coordinate now and then (skipped),
    // a categorical (dictionary) column and a date column.
    let dir = tempfile::tempdir().unwrap();
    let n: usize = 70_000;
    let coordinate = |f: fn(usize) -> Option<f32>| {
        Arc::new(Float32Array::from((0..n).map(f).collect::<Vec<_>>())) as ArrayRef
    };
    let kinds: DictionaryArray<Int32Type> = (0..n).map(|i| ["bus", "car", "bike"][i % 3]).collect();
    let columns = vec![
        ("x0", coordinate(|i| (i % 9_001 != 7).then_some(0.0))),
        ("y0", coordinate(|_| Some(0.0))),
        ("x1", coordinate(|_| Some(1.0))),
        ("y1", coordinate(|_| Some(1.0))),
        ("vehicle", Arc::new(kinds) as ArrayRef),
        (
            "day",
            Arc::new(Date32Array::from((0..n as i32).collect::<Vec<_>>())) as ArrayRef,
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let segments = dir.path().join("s.parquet");
    write_parquet(&segments, &batch);
    let rects = dir.path().join("r.csv");
    std::fs::write(&rects, "min_x,min_y,max_x,max_y\n0,0,1,1\n").unwrap();
    let args = [
        "first-hit",
        "--segments",
        s(&segments),
        "--rects",
        s(&rects),
        "--keep",
        "vehicle,day",
        "--skip-invalid",
    ];
    let (header, rows) = table(&ok(&args).stdout);
    let (vehicle, day) = (header.len() - 2, header.len() - 1);
    assert_eq!(rows.len(), (0..n).filter(|i| i % 9_001 != 7).count());
    for row in &rows {
        let segment: usize = row[0].parse().unwrap();
        assert_eq!(row[vehicle], ["bus", "car", "bike"][segment % 3], "{row:?}");
    }
    let day_of = |segment: &str| rows.iter().find(|r| r[0] == segment).unwrap()[day].clone();
    assert_eq!(day_of("0"), "1970-01-01");
    assert_eq!(day_of("365"), "1971-01-01");
    assert_eq!(day_of("69999"), "2161-08-26");
}

#[test]
fn clip_keeps_the_segments_and_their_rects_columns_row_by_row_across_chunks() {
    // 140,000 segments and as many rects read side by side (row i for segment i), past a
    // chunk of 131,072, an invalid record now and then on either side (the pair skipped).
    let dir = tempfile::tempdir().unwrap();
    let n: usize = 140_000;
    let (mut segments, mut rects) = (
        String::from("x0,y0,x1,y1,name\n"),
        String::from("owner,min_x,min_y,max_x,max_y\n"),
    );
    for i in 0..n {
        let y1 = if i % 9_973 == 3 { "nan" } else { "1" };
        segments += &format!("0,0,2,{y1},\"s {i}, road\"\n");
        let min_x = if i % 7_919 == 11 { "inf" } else { "0.5" };
        rects += &format!("r{i},{min_x},0,1.5,1\n");
    }
    let segments_path = dir.path().join("s.csv");
    let rects_path = dir.path().join("r.csv");
    std::fs::write(&segments_path, segments).unwrap();
    std::fs::write(&rects_path, rects).unwrap();
    let args = [
        "clip",
        "--segments",
        s(&segments_path),
        "--rects",
        s(&rects_path),
        "--skip-invalid",
        "--keep",
        "name,owner",
    ];
    let (header, rows) = table(&ok(&args).stdout);
    assert_eq!(
        header,
        ["segment", "kind", "x0", "y0", "x1", "y1", "name", "owner"]
    );
    let valid = |i: &usize| i % 9_973 != 3 && i % 7_919 != 11;
    assert_eq!(rows.len(), (0..n).filter(valid).count());
    for row in &rows {
        let segment: usize = row[0].parse().unwrap();
        assert_eq!(row[6], format!("s {segment}, road"), "{row:?}");
        assert_eq!(row[7], format!("r{segment}"), "{row:?}");
        assert_eq!(
            (row[2].as_str(), row[4].as_str()),
            ("0.5", "1.5"),
            "{row:?}"
        );
    }
    // To one rect: the segments' columns only.
    let one = ["clip", "--segments", s(&segments_path), "--rect", "0,0,1,1"];
    let (header, rows) =
        table(&ok(&[&one[..], &["--skip-invalid", "--keep", "name"]].concat()).stdout);
    assert_eq!(header.last().unwrap(), "name");
    for row in &rows {
        assert_eq!(row[6], format!("s {}, road", row[0]), "{row:?}");
    }
    let o = rectcast(&[&one[..], &["--keep", "owner"]].concat());
    assert!(
        !o.status.success() && stderr(&o).contains("no column owner"),
        "{}",
        stderr(&o)
    );
}
