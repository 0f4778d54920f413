//! `--keep COLUMN…`: input columns carried into the query rows, so that a row says which road
//! hit which parcel without a join. A column is looked for in both inputs: a CSV header's
//! columns, a Parquet file's, a GeoJSON feature's properties (and its `id`). A name both
//! inputs have is ambiguous, and one the rows have already (`kind`) would clash: either is
//! written `segments:NAME` or `TARGETS:NAME` (`rects:`, `polygons:`, …), and the output column
//! is named as written. WKT, NPY and `.f32` hold values only: they have no column to keep.
//!
//! A kept value is text: a CSV field as written (untrimmed), a Parquet value as arrow
//! displays it (any type it can), a GeoJSON string as it is and any other JSON value as JSON
//! text (serde_json's: an object's keys sorted, numbers as it writes them). A missing value (a
//! Parquet null, a JSON null, a feature without the property) is an absent cell: empty in
//! CSV, null in Parquet; an empty CSV field is empty text, `""` in Parquet. A first-hit miss
//! has no target, so its target columns are absent. `count` rows are per target: only the
//! targets' columns can be kept there, and an unprefixed name is the targets'. NPY holds
//! numbers only and refuses kept columns.

use std::path::Path;

use crate::table::{Column, ColumnType, Kept};

/// The two inputs of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Segments,
    Targets,
}

/// One `--keep` argument: its output column's name (as written), the input it names if
/// written `segments:NAME` or `TARGETS:NAME`, and the input column's name.
#[derive(Clone, Debug)]
pub struct Wanted {
    pub written: &'static str,
    pub side: Option<Side>,
    pub name: String,
}

/// Reads the `--keep` arguments of a job over targets named `targets` (a flag's name:
/// `rects`, `polygons`, …); `flags` are every target flag, to refuse another's prefix.
pub fn parse(args: &[String], targets: &str, flags: &[&str]) -> Result<Vec<Wanted>, String> {
    let mut wanted: Vec<Wanted> = Vec::new();
    for arg in args {
        let (side, name) = match arg.split_once(':') {
            Some(("segments", name)) => (Some(Side::Segments), name),
            Some((flag, name)) if flag == targets => (Some(Side::Targets), name),
            Some((flag, _)) if flags.contains(&flag) => {
                return Err(format!(
                    "--keep {arg}: this job's targets are --{targets}, not --{flag}"
                ));
            }
            _ => (None, arg.as_str()),
        };
        if name.is_empty() {
            return Err(format!("--keep {arg:?}: a column's name is missing"));
        }
        if wanted.iter().any(|w| w.written == arg) {
            return Err(format!("--keep {arg}: asked for twice"));
        }
        wanted.push(Wanted {
            // Named once per process, for the table's header.
            written: Box::leak(arg.clone().into_boxed_str()),
            side,
            name: name.to_string(),
        });
    }
    Ok(wanted)
}

/// The kept columns of a table whose own columns are `own`: text, named as written. A name
/// the rows have already must be written with its input's prefix.
pub fn columns(wanted: &[Wanted], own: &[Column], targets: &str) -> Result<Vec<Column>, String> {
    if let Some(w) = wanted
        .iter()
        .find(|w| own.iter().any(|c| c.name == w.written))
    {
        return Err(format!(
            "--keep {0}: the rows have a column {0} of their own; write segments:{0} or \
             {targets}:{0}",
            w.written
        ));
    }
    Ok(wanted
        .iter()
        .map(|w| Column::new(w.written, ColumnType::Text))
        .collect())
}

/// What one input offers and keeps: its path, the columns it has, the names of those it
/// keeps (in the order it gives their values), and what it calls its columns.
#[derive(Debug, Default)]
pub struct Keeping {
    pub path: std::path::PathBuf,
    pub has: Vec<String>,
    pub names: Vec<String>,
    pub noun: &'static str,
}

impl Keeping {
    /// What `path` offers (`has`, called `noun`), keeping those of `wanted` that are asked of
    /// `side` or of either input.
    pub fn new(
        path: &Path,
        has: Vec<String>,
        noun: &'static str,
        wanted: &[Wanted],
        side: Side,
    ) -> Self {
        let mut names: Vec<String> = Vec::new();
        for w in wanted {
            if w.side.is_none_or(|s| s == side) && has.contains(&w.name) && !names.contains(&w.name)
            {
                names.push(w.name.clone());
            }
        }
        Self {
            path: path.to_path_buf(),
            has,
            names,
            noun,
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// `file (its columns: a, b)`, for an error.
    fn described(&self) -> String {
        let what = if self.has.is_empty() {
            "which has no columns to keep: CSV, Parquet and GeoJSON have".to_string()
        } else {
            format!("its {}: {}", self.noun, self.has.join(", "))
        };
        format!("{} ({what})", self.path.display())
    }
}

/// What a file calls its columns: a GeoJSON feature's are its properties.
pub fn noun(path: &Path) -> &'static str {
    match rectcast_geotext::Format::of(path) {
        Some(rectcast_geotext::Format::GeoJson) => "properties",
        _ => "columns",
    }
}

/// Where a kept column's values come from: value `k` of a segment's, or of a target's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    Segment(usize),
    Target(usize),
}

/// Where each `--keep` column comes from, given what the inputs keep; `per_target`: the rows
/// are the targets' (`count`), and only their columns can be kept.
pub fn plan(
    wanted: &[Wanted],
    segments: &Keeping,
    targets: &Keeping,
    per_target: Option<&str>,
) -> Result<Vec<From>, String> {
    wanted
        .iter()
        .map(|w| {
            let mut segment = segments.position(&w.name).filter(|_| w.side != Some(Side::Targets));
            let target = targets.position(&w.name).filter(|_| w.side != Some(Side::Segments));
            // Rows per target take an unprefixed name both have from the targets.
            if per_target.is_some() && w.side.is_none() && target.is_some() {
                segment = None;
            }
            let from = match (segment, target) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "--keep {0}: both {1} and {2} have a column {0}; write segments:{0} or \
                         TARGETS:{0} (the targets' flag)",
                        w.written,
                        segments.path.display(),
                        targets.path.display()
                    ));
                }
                (Some(k), None) => From::Segment(k),
                (None, Some(k)) => From::Target(k),
                (None, None) => {
                    let looked = match w.side {
                        Some(Side::Segments) => segments.described(),
                        Some(Side::Targets) => targets.described(),
                        None => format!("{} nor in {}", segments.described(), targets.described()),
                    };
                    return Err(format!("--keep {}: no column {} in {looked}", w.written, w.name));
                }
            };
            match (from, per_target) {
                (From::Segment(_), Some(name)) => Err(format!(
                    "--keep {}: count rows are per {name}, so only the {name}s' columns can be kept",
                    w.written
                )),
                _ => Ok(from),
            }
        })
        .collect()
}

/// The kept columns of a job, ready for its rows: where each comes from, and the targets'
/// values (the segments' travel with each chunk).
#[derive(Debug, Default)]
pub struct KeptRows {
    pub plan: Vec<From>,
    pub targets: Kept,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keeping(path: &str, has: &[&str], wanted: &[Wanted], side: Side) -> Keeping {
        let has = has.iter().map(|s| s.to_string()).collect();
        Keeping::new(Path::new(path), has, "columns", wanted, side)
    }

    #[test]
    fn a_name_is_found_in_either_input_and_a_prefix_chooses_between_both() {
        let args = ["name", "segments:id", "polygons:id", "owner"].map(String::from);
        let wanted = parse(&args, "polygons", &["rects", "polygons"]).unwrap();
        let segments = keeping("roads.csv", &["x0", "id", "name"], &wanted, Side::Segments);
        let targets = keeping("parcels.geojson", &["id", "owner"], &wanted, Side::Targets);
        assert_eq!(segments.names, ["name", "id"]);
        assert_eq!(targets.names, ["id", "owner"]);
        assert_eq!(
            plan(&wanted, &segments, &targets, None).unwrap(),
            [
                From::Segment(0),
                From::Segment(1),
                From::Target(0),
                From::Target(1)
            ]
        );
        let count = plan(&wanted, &segments, &targets, Some("polygon")).unwrap_err();
        assert!(
            count.starts_with("--keep name: count rows are per polygon"),
            "{count}"
        );
        // In count, a name both have is the targets'.
        let ids = parse(&["id".into()], "polygons", &["polygons"]).unwrap();
        let segments = keeping("roads.csv", &["id"], &ids, Side::Segments);
        let targets = keeping("parcels.geojson", &["id"], &ids, Side::Targets);
        assert_eq!(
            plan(&ids, &segments, &targets, Some("polygon")).unwrap(),
            [From::Target(0)]
        );
    }

    #[test]
    fn an_ambiguous_missing_or_clashing_name_is_an_error_naming_it() {
        let flags = ["rects", "polygons"];
        let wanted = parse(&["id".into()], "rects", &flags).unwrap();
        let segments = keeping("s.csv", &["id"], &wanted, Side::Segments);
        let targets = keeping("r.csv", &["id"], &wanted, Side::Targets);
        let both = plan(&wanted, &segments, &targets, None).unwrap_err();
        assert!(
            both.contains("both s.csv and r.csv have a column id"),
            "{both}"
        );
        let wanted = parse(&["nope".into()], "rects", &flags).unwrap();
        let segments = keeping("s.npy", &[], &wanted, Side::Segments);
        let missing = plan(&wanted, &segments, &targets, None).unwrap_err();
        assert_eq!(
            missing,
            "--keep nope: no column nope in s.npy (which has no columns to keep: CSV, Parquet \
             and GeoJSON have) nor in r.csv (its columns: id)"
        );
        let own = [Column::new("kind", ColumnType::Category)];
        let wanted = parse(&["kind".into()], "rects", &flags).unwrap();
        assert!(
            columns(&wanted, &own, "rects")
                .unwrap_err()
                .contains("rects:kind")
        );
        let other = parse(&["polygons:id".into()], "rects", &flags).unwrap_err();
        assert!(other.contains("targets are --rects"), "{other}");
        assert!(parse(&["a".into(), "a".into()], "rects", &flags).is_err());
    }

    #[test]
    fn kept_values_are_read_back_by_record_and_absent_values_stay_absent() {
        let mut kept = Kept::new(2);
        for (a, b) in [(Some("x, \"y\""), None), (Some(""), Some("7"))] {
            kept.push(a);
            kept.push(b);
        }
        assert_eq!(kept.get(0, 0), Some("x, \"y\""));
        assert_eq!(kept.get(0, 1), None);
        assert_eq!((kept.get(1, 0), kept.get(1, 1)), (Some(""), Some("7")));
    }
}
