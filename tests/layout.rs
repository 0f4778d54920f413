//! The library's modules stack in layers (docs/architecture.md): no module reaches, through the
//! modules it imports, back to itself, so each can be read knowing only what is below it.
//!
//! The import graph is read from the source with syn, from `src/lib.rs` down through its `mod`
//! declarations. A module is a file; an inline module (`mod x86 { … }`) counts as its file.
//! An edge is a private `use` or a path in code (`crate::…`, `super::…`, `self::…`) naming
//! something of another file. Re-exports (`pub use`, `pub(crate) use`) are followed to where
//! the item lives, and are not edges themselves: a parent module that re-exports its children
//! is their facade, not their user. Items under `#[cfg(test)]` are left out, and so is the
//! crate root, the facade of all.
//!
//! The test suite's own layout is checked here too: which test files the emulation passes of
//! scripts/test.sh run, and which single tests they skip.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module's path from the crate root (`["gpu", "pairs"]`).
type ModPath = Vec<String>;

/// Where each reference came from, to say why an edge exists.
#[derive(Clone, Debug)]
struct Evidence {
    file: PathBuf,
    path: String,
}

#[derive(Default)]
struct Crate {
    /// Every module, file or inline, and the file module it belongs to.
    modules: BTreeMap<ModPath, ModPath>,
    /// The files of the file modules.
    files: BTreeMap<ModPath, PathBuf>,
    /// Re-exports as written: (the module, the path, the name it is exported as).
    reexports: Vec<(ModPath, Vec<String>, String)>,
    /// Re-exports resolved: in module M, name N stands for the absolute path P.
    aliases: BTreeMap<(ModPath, String), ModPath>,
    /// The references each module makes, as written: (the module, inline included, the
    /// path's segments, where).
    references: Vec<(ModPath, Vec<String>, Evidence)>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .map(|m| m.path().is_ident("test"))
                .unwrap_or(false)
    })
}

fn is_public(vis: &syn::Visibility) -> bool {
    !matches!(vis, syn::Visibility::Inherited)
}

/// The leaf paths of a `use` tree (`a::{b, c::d}` gives `a::b` and `a::c::d`), each with the
/// name it is imported as (`None` for a glob).
fn use_leaves(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            if name != "self" {
                path.push(name.clone());
            }
            let alias = if name == "self" {
                prefix.last().cloned()
            } else {
                Some(name)
            };
            out.push((path, alias));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_leaves(tree, prefix, out);
            }
        }
    }
}

/// `segments` as written in module `at` made absolute: `crate::`, `super::` and `self::`
/// resolved, and a leading name of a child module taken as relative (2018 paths). `None` for
/// anything else (std, other crates, local names).
fn absolute(krate: &Crate, at: &ModPath, segments: &[String]) -> Option<ModPath> {
    let (first, rest) = segments.split_first()?;
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" => Some(at.iter().chain(rest).cloned().collect()),
        "super" => {
            let mut base = at.clone();
            base.pop()?;
            let mut rest = rest;
            while let Some(("super", more)) = rest.split_first().map(|(s, m)| (s.as_str(), m)) {
                base.pop()?;
                rest = more;
            }
            Some(base.into_iter().chain(rest.iter().cloned()).collect())
        }
        _ => {
            let child: ModPath = at.iter().chain([first]).cloned().collect();
            krate
                .modules
                .contains_key(&child)
                .then(|| at.iter().chain(segments).cloned().collect())
        }
    }
}

impl Crate {
    /// The crate whose root file is `root_file` in the folder `root`.
    fn load(root: &Path, root_file: &str) -> Self {
        let mut krate = Crate::default();
        krate.load_file(Vec::new(), &root.join(root_file), root);
        krate
    }

    /// Module `path`'s file; `dir` is where its child modules' files are.
    fn load_file(&mut self, path: ModPath, file: &Path, dir: &Path) {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.files.insert(path.clone(), file.to_path_buf());
        self.load_items(&path, &path, &ast.items, file, dir);
    }

    fn load_items(
        &mut self,
        module: &ModPath,
        file_module: &ModPath,
        items: &[syn::Item],
        file: &Path,
        dir: &Path,
    ) {
        self.modules.insert(module.clone(), file_module.clone());
        for item in items {
            match item {
                syn::Item::Mod(m) if is_cfg_test(&m.attrs) => {}
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let child: ModPath = module.iter().cloned().chain([name.clone()]).collect();
                    match &m.content {
                        Some((_, items)) => self.load_items(&child, file_module, items, file, dir),
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let (child_file, child_dir) = if flat.exists() {
                                (flat, dir.join(&name))
                            } else {
                                (dir.join(&name).join("mod.rs"), dir.join(&name))
                            };
                            self.load_file(child, &child_file, &child_dir);
                        }
                    }
                }
                syn::Item::Use(u) if is_cfg_test(&u.attrs) => {}
                syn::Item::Use(u) => {
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                    for (segments, name) in leaves {
                        if is_public(&u.vis) {
                            // Resolved once every module is known (`resolve_aliases`).
                            if let Some(name) = name {
                                self.reexports.push((module.clone(), segments, name));
                            }
                        } else {
                            let path = segments.join("::");
                            let evidence = Evidence {
                                file: file.to_path_buf(),
                                path,
                            };
                            self.references.push((module.clone(), segments, evidence));
                        }
                    }
                }
                other if item_is_cfg_test(other) => {}
                other => {
                    let mut paths = Paths::default();
                    paths.visit_item(other);
                    for segments in paths.found {
                        let evidence = Evidence {
                            file: file.to_path_buf(),
                            path: segments.join("::"),
                        };
                        self.references.push((module.clone(), segments, evidence));
                    }
                }
            }
        }
    }

    /// The re-exports, resolved to absolute paths now that every module is known.
    fn resolve_aliases(&mut self) {
        let mut aliases = BTreeMap::new();
        for (module, segments, name) in &self.reexports {
            if let Some(target) = absolute(self, module, segments) {
                aliases.insert((module.clone(), name.clone()), target);
            }
        }
        self.aliases = aliases;
    }

    /// The file module an absolute path names something of, through re-exports.
    fn target(&self, path: &[String], depth: usize) -> Option<ModPath> {
        assert!(depth < 32, "re-exports loop at {path:?}");
        let known = (0..=path.len())
            .rev()
            .find(|&k| self.modules.contains_key(&path[..k]))?;
        let module = path[..known].to_vec();
        if let Some(name) = path.get(known)
            && let Some(target) = self.aliases.get(&(module.clone(), name.clone()))
        {
            let through: Vec<String> = target.iter().chain(&path[known + 1..]).cloned().collect();
            return self.target(&through, depth + 1);
        }
        self.modules.get(&module).cloned()
    }

    /// File module → the file modules it imports, with one piece of evidence each.
    fn edges(&self) -> BTreeMap<ModPath, BTreeMap<ModPath, Evidence>> {
        let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, Evidence>> = BTreeMap::new();
        for (module, segments, evidence) in &self.references {
            let from = self.modules[module].clone();
            let Some(to) = absolute(self, module, segments).and_then(|p| self.target(&p, 0)) else {
                continue;
            };
            if to != from && !to.is_empty() && !from.is_empty() {
                edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| evidence.clone());
            }
        }
        edges
    }
}

fn item_is_cfg_test(item: &syn::Item) -> bool {
    match item {
        syn::Item::Fn(i) => is_cfg_test(&i.attrs),
        syn::Item::Impl(i) => is_cfg_test(&i.attrs),
        syn::Item::Const(i) => is_cfg_test(&i.attrs),
        syn::Item::Static(i) => is_cfg_test(&i.attrs),
        syn::Item::Struct(i) => is_cfg_test(&i.attrs),
        syn::Item::Enum(i) => is_cfg_test(&i.attrs),
        syn::Item::Trait(i) => is_cfg_test(&i.attrs),
        _ => false,
    }
}

/// The paths in an item's code that start with `crate`, `super`, `self` or any other name
/// (which `absolute` keeps only when it names a child module).
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            self.found
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<ModPath, BTreeMap<ModPath, Evidence>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeMap<ModPath, Evidence>>,
        index: BTreeMap<ModPath, usize>,
        low: BTreeMap<ModPath, usize>,
        stack: Vec<ModPath>,
        on_stack: BTreeSet<ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit(s: &mut State, v: &ModPath) {
        let n = s.index.len();
        s.index.insert(v.clone(), n);
        s.low.insert(v.clone(), n);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        for w in s
            .edges
            .get(v)
            .map(|e| e.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let low = s.low[v].min(s.low[&w]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(&w) {
                let low = s.low[v].min(s.index[&w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn name(path: &ModPath) -> String {
    path.join("::")
}

fn library() -> (Crate, BTreeMap<ModPath, BTreeMap<ModPath, Evidence>>) {
    read_crate("src", "lib.rs")
}

/// The crate in `folder` (from the workspace's root) whose root file is `root_file`, and its
/// import graph.
fn read_crate(
    folder: &str,
    root_file: &str,
) -> (Crate, BTreeMap<ModPath, BTreeMap<ModPath, Evidence>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut krate = Crate::load(&root, root_file);
    krate.resolve_aliases();
    let edges = krate.edges();
    (krate, edges)
}

#[test]
fn the_library_has_no_import_cycle() {
    let (krate, edges) = library();
    assert!(
        krate.files.len() > 30,
        "only {} module files found",
        krate.files.len()
    );
    assert_no_cycle(&edges);
}

#[test]
fn the_cli_has_no_import_cycle() {
    let (krate, edges) = read_crate("cli/src", "main.rs");
    assert!(
        krate.files.len() > 30,
        "only {} module files found",
        krate.files.len()
    );
    assert_no_cycle(&edges);
}

/// Fails naming each cycle of `edges` and the imports that make it.
fn assert_no_cycle(edges: &BTreeMap<ModPath, BTreeMap<ModPath, Evidence>>) {
    let mut report = String::new();
    for component in cycles(edges) {
        report += &format!(
            "a cycle through {}:\n",
            component.iter().map(name).collect::<Vec<_>>().join(", ")
        );
        for from in &component {
            for (to, evidence) in &edges[from] {
                if component.contains(to) {
                    report += &format!(
                        "  {} -> {}: {} ({})\n",
                        name(from),
                        name(to),
                        evidence.path,
                        evidence.file.display()
                    );
                }
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn the_layout_check_sees_the_imports_it_must() {
    // The checker itself: edges it must find, each written in one of the ways it reads.
    let (krate, edges) = library();
    let path = |s: &str| s.split("::").map(String::from).collect::<ModPath>();
    let has = |from: &str, to: &str| {
        edges
            .get(&path(from))
            .is_some_and(|e| e.contains_key(&path(to)))
    };
    // `use super::…` in a file module, and through the `gpu` facade's re-export
    // (`use super::{GpuLimits, …}`, which `gpu` re-exports from `gpu::limits`).
    assert!(has("gpu::rect_pairs", "gpu::buffers"));
    assert!(has("gpu::rect_queries", "gpu::limits"));
    // Through the crate root's re-exports.
    assert_eq!(krate.target(&path("Error"), 0), Some(path("error")));
    assert_eq!(
        krate.target(&path("Polygons::new"), 0),
        Some(path("cpu::segment_polygon::polygons"))
    );
    // `use crate::…` to a module made a folder.
    assert!(has(
        "cpu::segment_polygon::filters",
        "cpu::segment_segment::filters"
    ));
    // A path in code (`crate::cpu::segment_segment::Contact::Touch`).
    assert!(has("cpu::segment_segment::filters", "cpu::segment_segment"));
    // A made-up cycle is found.
    let mut with_cycle = edges.clone();
    let (a, b) = (
        vec!["cpu".to_string(), "lanes".to_string()],
        vec!["shape".to_string()],
    );
    let evidence = Evidence {
        file: PathBuf::from("made up"),
        path: String::new(),
    };
    with_cycle
        .entry(a.clone())
        .or_default()
        .insert(b.clone(), evidence.clone());
    with_cycle.entry(b).or_default().insert(a, evidence);
    assert_eq!(cycles(&with_cycle).len(), 1);
}

#[test]
fn nothing_below_the_engine_imports_it() {
    // The engine is the top layer: only its own modules (and the crate root) may name it.
    let (_, edges) = library();
    let is_engine = |m: &ModPath| m.first().is_some_and(|s| s == "engine");
    let upward: Vec<String> = edges
        .iter()
        .filter(|(from, _)| !is_engine(from))
        .flat_map(|(from, to)| {
            to.iter()
                .filter(|(to, _)| is_engine(to))
                .map(move |(to, e)| {
                    format!(
                        "{} -> {}: {} ({})",
                        name(from),
                        name(to),
                        e.path,
                        e.file.display()
                    )
                })
        })
        .collect();
    assert!(
        upward.is_empty(),
        "imports of the engine from below it:\n{}",
        upward.join("\n")
    );
}

/// Nothing was ever released, so no old name is kept: no file of any crate's module tree holds
/// a `#[deprecated]` attribute (an old name is renamed, not aliased).
#[test]
fn no_crate_keeps_a_deprecated_alias() {
    let mut deprecated = Vec::new();
    for (folder, root_file) in [
        ("src", "lib.rs"),
        ("cli/src", "main.rs"),
        ("python/src", "lib.rs"),
        ("geotext/src", "lib.rs"),
    ] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        for file in Crate::load(&root, root_file).files.values() {
            let text = std::fs::read_to_string(file).expect("a module's file");
            if text.contains("#[deprecated") {
                deprecated.push(file.display().to_string());
            }
        }
    }
    assert!(
        Crate::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "lib.rs")
            .files
            .len()
            > 20,
        "the crate's files were not found"
    );
    assert!(
        deprecated.is_empty(),
        "#[deprecated] items in: {deprecated:?}"
    );
}

/// The arguments scripts/test.sh gives its emulation passes (`--print-emulation-args`).
fn emulation_args() -> Vec<String> {
    let out = std::process::Command::new("bash")
        .args(["scripts/test.sh", "--print-emulation-args"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bash runs scripts/test.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The values that follow each `flag` in `args`.
fn values_of<'a>(args: &'a [String], flag: &str) -> BTreeSet<&'a str> {
    args.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1].as_str())
        .collect()
}

/// The tests a file marks native only (`/// scripts/test.sh: native only` among the doc and
/// attribute lines above a `#[test] fn`), as (name, whether the marker is above a `#[test]`).
fn marked_native_only(text: &str) -> Vec<(String, bool)> {
    let mut marked = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("/// scripts/test.sh: native only") {
            continue;
        }
        let mut is_test = false;
        for line in lines.by_ref() {
            is_test |= line.trim() == "#[test]";
            if let Some(rest) = line.strip_prefix("fn ") {
                let name = rest.split('(').next().unwrap_or_default();
                marked.push((name.to_owned(), is_test));
                break;
            }
            if !(line.starts_with("///") || line.starts_with("#[")) {
                marked.push((format!("(no fn after the marker, at {line:?})"), false));
                break;
            }
        }
    }
    marked
}

/// The emulation passes (scripts/test.sh) run the GPU tests again under each hostile
/// arithmetic. A file leaves them only when its own doc says `//! scripts/test.sh: native only`;
/// a test marked `/// scripts/test.sh: native only` is skipped by its exact name, and its file
/// stays. (Once a test's marker dropped its whole file, segment_circle's, from every pass, and
/// every pass still passed.)
#[test]
fn the_emulation_passes_run_every_gpu_test_file_not_marked_native_only_as_a_whole() {
    let args = emulation_args();
    let files = values_of(&args, "--test");
    let skipped = values_of(&args, "--skip");
    assert!(
        args.iter().any(|a| a == "--exact"),
        "the skips must name whole tests: {args:?}"
    );
    // The suites of the kernels the emulation changes: every kind's queries and the rounding.
    for must in [
        "segment_circle",
        "segment_segment",
        "segment_polygon",
        "rounding",
        "exact",
        "gpu_vs_cpu",
        "queries",
        "broad_phase",
    ] {
        assert!(files.contains(must), "{must} is not emulated: {args:?}");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut marked_names = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("tests/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a test file");
        let whole = text
            .lines()
            .any(|l| l.starts_with("//! scripts/test.sh: native only"));
        let tests = marked_native_only(&text);
        if whole {
            assert!(
                !files.contains(name.as_str()),
                "{name} says it is native only"
            );
        } else if !tests.is_empty() {
            assert!(
                files.contains(name.as_str()),
                "{name} marks single tests native only, and the passes dropped the whole file"
            );
        }
        for (test, is_test) in tests {
            assert!(
                is_test,
                "{name}: the marker above {test} is not above a #[test]"
            );
            assert!(
                skipped.contains(test.as_str()),
                "{name}: {test} is not skipped"
            );
            marked_names.insert(test);
        }
    }
    for file in &files {
        assert!(
            dir.join(format!("{file}.rs")).exists(),
            "no tests/{file}.rs"
        );
    }
    for name in &skipped {
        assert!(
            marked_names.contains(*name),
            "{name} is skipped but marked nowhere"
        );
    }
}

/// The files docs/architecture.md says a new kind of target in a scene touches: the
/// backticked paths of its "A new kind of target in a scene" item.
fn scene_kind_files() -> BTreeSet<String> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md");
    let start = doc
        .find("**A new kind of target in a scene**")
        .expect("the recipe for a new kind of target in docs/architecture.md");
    let item = &doc[start..];
    let item = &item[..item.find("\n- ").unwrap_or(item.len())];
    item.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".rs"))
        .map(String::from)
        .collect()
}

/// A line of `text` that names one kind of target by hand (`TargetKind::Circle`,
/// `TargetContact::Wall`, …), outside comments.
fn names_a_kind(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    ["TargetKind::", "TargetContact::"].iter().any(|prefix| {
        code.match_indices(prefix).any(|(at, _)| {
            let rest = &code[at + prefix.len()..];
            ["Rect", "Circle", "Wall", "Polygon"].iter().any(|kind| {
                rest.starts_with(kind)
                    && !rest[kind.len()..].starts_with(|c: char| c.is_alphanumeric())
            })
        })
    })
}

#[test]
fn a_kind_of_target_is_named_only_in_the_files_the_recipe_lists() {
    let allowed = scene_kind_files();
    assert!(
        allowed.len() >= 5,
        "the recipe's files were not found: {allowed:?}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut outside = Vec::new();
    let mut seen = BTreeSet::new();
    for (folder, root_file) in [
        ("src", "lib.rs"),
        ("cli/src", "main.rs"),
        ("python/src", "lib.rs"),
    ] {
        for file in Crate::load(&root.join(folder), root_file).files.values() {
            let relative = file.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read_to_string(file).expect("a module's file");
            for (n, line) in text.lines().enumerate() {
                if names_a_kind(line) {
                    seen.insert(relative.clone());
                    if !allowed.contains(&relative) {
                        outside.push(format!("{relative}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        outside.is_empty(),
        "kinds of target named outside the recipe's files (docs/architecture.md): {outside:#?}"
    );
    // The check sees what it must: the scene's own files name every kind.
    assert!(
        seen.contains("src/targets/mod.rs") && seen.contains("cli/src/mixed.rs"),
        "{seen:?}"
    );
}
