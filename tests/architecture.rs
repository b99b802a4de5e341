//! The house's layering, held by a test (docs/architecture.md draws it).
//!
//! Reads every Rust file of `src/` (no compiler involved: comments and
//! string literals stripped, then the `use` trees and the `crate::`,
//! `super::`, `self::` and child-module paths of the code resolved to the
//! files that define them) and fails on:
//! - an import cycle between files of one crate (the library, or one binary);
//! - the two backends, or the operator families of the CUDA backend,
//!   importing each other; a lower layer importing a higher one (the
//!   ordered layers below);
//! - raw pointer types or `crate::ffi` outside the C face (`src/ffi/`), but
//!   for the CUDA driver layer, which speaks to the driver's and NVRTC's C
//!   APIs;
//! - a hand-written file over 900 lines (a file whose first line carries
//!   `@generated` is exempt).
//!
//! A parent module declaring its children (`mod x;`) is not an import; a
//! re-export (`pub use x::Y`) alone is not either: a path through it is
//! followed to the file that defines the item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 900;

/// One crate's source file and the module path it defines.
struct SourceFile {
    /// Relative to the repository root, for messages.
    path: String,
    /// Module path inside its crate (`["backend", "cuda", "blas"]`).
    module: Vec<String>,
    /// The code with comments and literals blanked out.
    code: String,
    lines: usize,
    generated: bool,
}

/// A crate: the library (`src/lib.rs`) or one binary (`src/bin/...`).
struct Crate {
    name: String,
    files: Vec<SourceFile>,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Blanks comments, string/char literals (keeping newlines), so that the
/// scanner below sees only code.
fn strip_comments_and_literals(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &x in &b[i..j.min(b.len())] {
                blank(&mut out, x);
            }
            i = j;
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // A multi-byte UTF-8 character or a lifetime.
                let end = (i + 6).min(b.len());
                b[i + 1..end]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 1 + p)
                    .filter(|&p| {
                        std::str::from_utf8(&b[i + 1..p]).is_ok_and(|s| s.chars().count() == 1)
                    })
            };
            match close {
                Some(end) => {
                    out.extend(std::iter::repeat_n(b' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Tokens of stripped code: identifiers, `::`, and single punctuation.
fn tokens(code: &str) -> Vec<&str> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let s = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            out.push(&code[s..i]);
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push("::");
            i += 2;
        } else {
            let len = code[i..].chars().next().map_or(1, char::len_utf8);
            out.push(&code[i..i + len]);
            i += len;
        }
    }
    out
}

/// One leaf of a `use` tree: the path and the name it brings into scope
/// (`None` for a glob).
struct UsePath {
    path: Vec<String>,
    name: Option<String>,
}

/// Expands a `use` tree (the tokens between `use` and `;`) into paths.
fn expand_use(toks: &[&str], prefix: &[String], out: &mut Vec<UsePath>) {
    // Split at top-level commas.
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        match *t {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&toks[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&toks[start..]);
    for part in parts {
        let mut path = prefix.to_vec();
        let mut alias = None;
        let mut glob = false;
        let mut k = 0;
        let mut braced = false;
        while k < part.len() {
            match part[k] {
                "::" => {}
                "{" => {
                    let inner = &part[k + 1..part.len() - 1];
                    expand_use(inner, &path, out);
                    braced = true;
                    break;
                }
                "as" => {
                    alias = part.get(k + 1).map(|s| s.to_string());
                    break;
                }
                "*" => {
                    glob = true;
                    break;
                }
                t if t.bytes().all(is_ident) => path.push(t.to_string()),
                _ => break,
            }
            k += 1;
        }
        if braced || path.is_empty() || (path.len() == prefix.len() && !glob) {
            continue;
        }
        // `use a::b::{self}` names `b`.
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let name = if glob {
            None
        } else {
            alias.or_else(|| path.last().cloned())
        };
        out.push(UsePath { path, name });
    }
}

/// What one file names: its `use` leaves and code paths made absolute,
/// the names it defines, and how often each identifier occurs.
#[derive(Default)]
struct Scan {
    /// `(absolute path, name brought into scope, re-exported)`.
    uses: Vec<(Vec<String>, Option<String>, bool)>,
    /// Paths written in code (`crate::a::f()`, `super::X`, `child::g`).
    code_paths: Vec<Vec<String>>,
    /// Items defined anywhere in the file (an over-estimate is harmless).
    defined: BTreeSet<String>,
    idents: BTreeMap<String, usize>,
}

const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "union",
    "mod",
    "macro_rules",
];

fn scan(file: &SourceFile, modules: &BTreeSet<Vec<String>>) -> Scan {
    let toks = tokens(&file.code);
    let mut out = Scan::default();
    // Inline modules (`mod tests { ... }`) shift what `super` and `self` mean.
    let mut scopes: Vec<(usize, Vec<String>)> = vec![(0, file.module.clone())];
    let mut depth = 0usize;
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k];
        if t.bytes().all(is_ident) {
            *out.idents.entry(t.to_string()).or_default() += 1;
        }
        if ITEM_KEYWORDS.contains(&t) {
            let mut j = k + 1;
            while toks
                .get(j)
                .is_some_and(|x| ITEM_KEYWORDS.contains(x) || *x == "!")
            {
                j += 1;
            }
            if let Some(name) = toks.get(j).filter(|x| x.bytes().all(is_ident)) {
                out.defined.insert(name.to_string());
            }
        }
        match t {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if scopes.len() > 1 && scopes.last().unwrap().0 == depth {
                    scopes.pop();
                }
            }
            "mod" if toks.get(k + 2) == Some(&"{") => {
                let mut m = scopes.last().unwrap().1.clone();
                m.push(toks[k + 1].to_string());
                scopes.push((depth, m));
                depth += 1;
                k += 3;
                continue;
            }
            _ => {}
        }
        let cur = &scopes.last().unwrap().1;
        if t == "use" && (k == 0 || toks[k - 1] != "::") {
            // `pub use` / `pub(crate) use` at the file's own level re-exports.
            let public = scopes.len() == 1
                && (toks.get(k.wrapping_sub(1)) == Some(&"pub")
                    || (toks.get(k.wrapping_sub(1)) == Some(&")")
                        && toks.get(k.wrapping_sub(4)) == Some(&"pub")));
            let end = toks[k..]
                .iter()
                .position(|&x| x == ";")
                .map_or(toks.len(), |p| k + p);
            let mut leaves = Vec::new();
            expand_use(&toks[k + 1..end], &[], &mut leaves);
            for leaf in leaves {
                if let Some(abs) = absolute(&leaf.path, cur, modules) {
                    out.uses.push((abs, leaf.name, public));
                }
            }
            k = end + 1;
            continue;
        }
        // A path in code: a run `a :: b :: c` not preceded by `::`.
        if t.bytes().all(is_ident)
            && toks.get(k + 1) == Some(&"::")
            && (k == 0 || toks[k - 1] != "::")
        {
            let mut p = vec![t.to_string()];
            let mut j = k + 1;
            while toks.get(j) == Some(&"::")
                && toks.get(j + 1).is_some_and(|x| x.bytes().all(is_ident))
            {
                p.push(toks[j + 1].to_string());
                j += 2;
            }
            if let Some(abs) = absolute(&p, cur, modules) {
                out.code_paths.push(abs);
            }
            k = j;
            continue;
        }
        k += 1;
    }
    out
}

/// Makes `path` absolute (from the crate root) if it names this crate's
/// modules: `crate::`, `super::`, `self::`, or a child of `cur`.
fn absolute(
    path: &[String],
    cur: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "super" | "self" => {
            base = cur.to_vec();
            while let Some(s) = rest.first() {
                match s.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        first => {
            // A child module of the current one (2018 relative paths).
            let mut child = cur.to_vec();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            base = cur.to_vec();
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// One crate's files, scanned, with the re-exports resolved.
struct Graph<'a> {
    krate: &'a Crate,
    index: BTreeMap<Vec<String>, usize>,
    scans: Vec<Scan>,
}

impl<'a> Graph<'a> {
    fn new(krate: &'a Crate) -> Self {
        let index: BTreeMap<Vec<String>, usize> = krate
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        let modules: BTreeSet<Vec<String>> = index.keys().cloned().collect();
        let scans = krate.files.iter().map(|f| scan(f, &modules)).collect();
        Graph {
            krate,
            index,
            scans,
        }
    }

    /// The file that defines what `path` names, following re-exports
    /// (`pub use`), so that a facade `mod.rs` is not a dependency.
    fn resolve(&self, path: &[String], depth: usize) -> Option<usize> {
        let n = (0..=path.len())
            .rev()
            .find(|&n| self.index.contains_key(&path[..n]))?;
        let f = self.index[&path[..n]];
        if n == path.len() || depth > 16 {
            return Some(f);
        }
        let name = &path[n];
        let scan = &self.scans[f];
        if scan.defined.contains(name) {
            return Some(f);
        }
        for (target, alias, public) in &scan.uses {
            if *public && alias.as_ref() == Some(name) {
                let mut p = target.clone();
                p.extend(path[n + 1..].iter().cloned());
                return self.resolve(&p, depth + 1).or(Some(f));
            }
        }
        for (target, alias, public) in &scan.uses {
            if *public && alias.is_none() {
                let mut p = target.clone();
                p.extend(path[n..].iter().cloned());
                if let Some(r) = self.resolve(&p, depth + 1) {
                    if r != f && self.exports(r, name) {
                        return Some(r);
                    }
                }
            }
        }
        Some(f)
    }

    fn exports(&self, file: usize, name: &str) -> bool {
        let s = &self.scans[file];
        s.defined.contains(name)
            || s.uses
                .iter()
                .any(|(_, a, p)| *p && a.as_deref() == Some(name))
    }

    /// File-to-file import edges: `edges()[i]` = the files `i` names.
    fn edges(&self) -> Vec<BTreeSet<usize>> {
        (0..self.krate.files.len())
            .map(|i| {
                let s = &self.scans[i];
                let mut out = BTreeSet::new();
                for (path, name, public) in &s.uses {
                    // A re-export alone is no dependency; one also used here is.
                    let used_here = name
                        .as_ref()
                        .is_some_and(|n| s.idents.get(n).copied().unwrap_or(0) > 1);
                    if !*public || used_here {
                        out.extend(self.resolve(path, 0));
                    }
                }
                for path in &s.code_paths {
                    out.extend(self.resolve(path, 0));
                }
                out.remove(&i);
                out
            })
            .collect()
    }
}

fn read_crates() -> Vec<Crate> {
    let root = repo_root();
    let src = root.join("src");
    let mut all = Vec::new();
    rust_files(&src, &mut all);
    let mut crates: BTreeMap<String, Vec<SourceFile>> = BTreeMap::new();
    for p in all {
        let rel = p.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        // The crate a file belongs to and its module path inside it.
        let (krate, mut module): (String, Vec<String>) = if parts[0] == "bin" {
            if parts.len() == 2 {
                (parts[1].trim_end_matches(".rs").to_string(), Vec::new())
            } else {
                (parts[1].clone(), parts[2..].to_vec())
            }
        } else {
            ("lib".to_string(), parts.clone())
        };
        if let Some(last) = module.pop() {
            let stem = last.trim_end_matches(".rs").to_string();
            if !matches!(stem.as_str(), "mod" | "lib" | "main") {
                module.push(stem);
            }
        }
        let text = std::fs::read_to_string(&p).unwrap();
        crates.entry(krate).or_default().push(SourceFile {
            path: format!("src/{}", rel.display()),
            module,
            lines: text.lines().count(),
            generated: text
                .lines()
                .next()
                .is_some_and(|l| l.contains("@generated")),
            code: strip_comments_and_literals(&text),
        });
    }
    crates
        .into_iter()
        .map(|(name, files)| Crate { name, files })
        .collect()
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(n: usize, edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct T<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.edges[v].iter() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_import_cycles_between_files() {
    let mut report = String::new();
    for krate in read_crates() {
        let e = Graph::new(&krate).edges();
        for scc in cycles(krate.files.len(), &e) {
            report += &format!("\n[{}] a cycle of {} files:", krate.name, scc.len());
            for &i in &scc {
                let inside: Vec<&str> = e[i]
                    .iter()
                    .filter(|j| scc.contains(j))
                    .map(|&j| krate.files[j].path.as_str())
                    .collect();
                report += &format!("\n  {} -> {}", krate.files[i].path, inside.join(", "));
            }
        }
    }
    assert!(report.is_empty(), "import cycles:{report}");
}

#[test]
fn no_hand_written_file_over_the_limit() {
    let long: Vec<String> = read_crates()
        .iter()
        .flat_map(|c| c.files.iter())
        .filter(|f| !f.generated && f.lines > MAX_LINES)
        .map(|f| format!("{} ({} lines)", f.path, f.lines))
        .collect();
    assert!(
        long.is_empty(),
        "hand-written files over {MAX_LINES} lines: {long:?}"
    );
}

/// The library's layers, top (the C face) to bottom (geometry, algebra,
/// errors): a file may import files of its own layer or lower ones. The
/// API's parameter types sit below the rest of `api`, so the dispatcher
/// takes them without naming a context.
const LIB_LAYERS: &[(&str, &[&str])] = &[
    ("the C faces", &["ffi"]),
    ("the safe API", &["api"]),
    ("the dispatcher", &["dispatch"]),
    (
        "the API's parameters",
        &["api/params.rs", "api/multi.rs", "api/staggered_params.rs"],
    ),
    (
        "solvers and tools over operators",
        &[
            "solver",
            "smearing.rs",
            "deviation.rs",
            "gauge_fixing",
            "spin_taste.rs",
        ],
    ),
    ("Dirac operators", &["dirac"]),
    ("backends", &["backend"]),
    ("communication between ranks", &["comm"]),
    (
        "fields, formats and files",
        &[
            "clover",
            "layout",
            "gauge_gen",
            "gauge_io",
            "long_links.rs",
            "fat_links",
            "format",
        ],
    ),
    (
        "geometry and algebra",
        &[
            "field.rs",
            "lattice.rs",
            "domains.rs",
            "su3.rs",
            "gamma.rs",
            "random.rs",
            "reconstruct.rs",
            "precision.rs",
            "alloc.rs",
            "error.rs",
            "lib.rs",
        ],
    ),
];

/// The CUDA backend's layers (`src/backend/cuda/`), top to bottom; in the
/// layer of the kernel families a file imports none of another family.
const CUDA_LAYERS: &[(&str, &[&str])] = &[
    (
        "the Backend composing the families",
        &[
            "mod.rs",
            "backend.rs",
            "backend_trait.rs",
            "catalogue.rs",
            "inspect.rs",
            "domains.rs",
            "emulation.rs",
            "clover_emulation.rs",
            "fat_links_emulation.rs",
        ],
    ),
    (
        "host-order conversions",
        &["host_gauge.rs", "host_spinor.rs", "clover_compute.rs"],
    ),
    (
        "kernel families",
        &[
            "blas.rs",
            "block_blas.rs",
            "dslash.rs",
            "dslash_forms.rs",
            "cold_fields.rs",
            "clover.rs",
            "staggered.rs",
            "fat_links.rs",
            "gauge_fixing.rs",
        ],
    ),
    (
        "shared formats",
        &[
            "fields.rs",
            "layout.rs",
            "hopping_params.rs",
            "halo.rs",
            "halo_transport.rs",
        ],
    ),
    ("the driver", &["driver"]),
];

/// The kernel families of the CUDA backend: files of one family may import
/// each other (without cycles), never a file of another family.
const CUDA_FAMILIES: &[&[&str]] = &[
    &["blas.rs", "block_blas.rs"],
    &["dslash.rs", "dslash_forms.rs", "cold_fields.rs"],
    &["clover.rs"],
    &["staggered.rs"],
    &["fat_links.rs", "gauge_fixing.rs"],
];

/// Where raw pointer types may be written outside the C face: the CUDA
/// driver layer (the driver's and NVRTC's C APIs), and the host layout's
/// writer of disjoint sites from parallel threads.
const RAW_POINTERS_ALLOWED: &[&str] = &["src/backend/cuda/driver/", "src/backend/cuda/layout.rs"];

/// The layer of `path` (relative to `src/`) in `layers`: the index of the
/// longest entry that is the path or a folder above it.
fn layer_of(path: &str, layers: &[(&str, &[&str])]) -> Option<usize> {
    let matches = |entry: &str| path == entry || path.starts_with(&format!("{entry}/"));
    layers
        .iter()
        .enumerate()
        .flat_map(|(k, (_, entries))| entries.iter().map(move |e| (k, *e)))
        .filter(|(_, e)| matches(e))
        .max_by_key(|(_, e)| e.len())
        .map(|(k, _)| k)
}

fn lib_crate() -> Crate {
    read_crates()
        .into_iter()
        .find(|c| c.name == "lib")
        .expect("the library")
}

/// Every import of the library, as (importer, imported) paths under `src/`.
fn lib_imports(krate: &Crate) -> Vec<(String, String)> {
    let edges = Graph::new(krate).edges();
    let rel = |i: usize| krate.files[i].path.trim_start_matches("src/").to_string();
    edges
        .iter()
        .enumerate()
        .flat_map(|(i, out)| out.iter().map(move |&j| (rel(i), rel(j))))
        .collect()
}

#[test]
fn every_file_is_in_a_layer() {
    let krate = lib_crate();
    let mut missing = Vec::new();
    for f in &krate.files {
        let rel = f.path.trim_start_matches("src/");
        if layer_of(rel, LIB_LAYERS).is_none() {
            missing.push(rel.to_string());
        }
        if let Some(inner) = rel.strip_prefix("backend/cuda/") {
            if layer_of(inner, CUDA_LAYERS).is_none() {
                missing.push(rel.to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files in no layer (add them to LIB_LAYERS or CUDA_LAYERS, and to docs/architecture.md): {missing:?}"
    );
}

#[test]
fn layers_import_downwards_only() {
    let krate = lib_crate();
    let mut wrong = Vec::new();
    for (from, to) in lib_imports(&krate) {
        let (Some(a), Some(b)) = (layer_of(&from, LIB_LAYERS), layer_of(&to, LIB_LAYERS)) else {
            continue;
        };
        if b < a {
            wrong.push(format!(
                "{from} ({}) imports {to} ({})",
                LIB_LAYERS[a].0, LIB_LAYERS[b].0
            ));
        }
        if let (Some(f), Some(t)) = (
            from.strip_prefix("backend/cuda/"),
            to.strip_prefix("backend/cuda/"),
        ) {
            let (Some(a), Some(b)) = (layer_of(f, CUDA_LAYERS), layer_of(t, CUDA_LAYERS)) else {
                continue;
            };
            if b < a {
                wrong.push(format!(
                    "{from} ({}) imports {to} ({})",
                    CUDA_LAYERS[a].0, CUDA_LAYERS[b].0
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn siblings_never_import_each_other() {
    let krate = lib_crate();
    let family = |f: &str| CUDA_FAMILIES.iter().position(|fam| fam.contains(&f));
    let mut wrong = Vec::new();
    for (from, to) in lib_imports(&krate) {
        let backend_of = |p: &str| {
            ["backend/cpu/", "backend/cuda/"]
                .into_iter()
                .find(|b| p.starts_with(b))
        };
        if let (Some(a), Some(b)) = (backend_of(&from), backend_of(&to)) {
            if a != b {
                wrong.push(format!("{from} imports {to}: the backends are siblings"));
            }
        }
        if let (Some(f), Some(t)) = (
            from.strip_prefix("backend/cuda/"),
            to.strip_prefix("backend/cuda/"),
        ) {
            if let (Some(a), Some(b)) = (family(f), family(t)) {
                if a != b {
                    wrong.push(format!("{from} imports {to}: kernel families are siblings"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn only_the_c_face_touches_c_pointers() {
    let krate = lib_crate();
    let mut wrong = Vec::new();
    for (from, to) in lib_imports(&krate) {
        if to.starts_with("ffi/") && !from.starts_with("ffi/") {
            wrong.push(format!("{from} imports the C face ({to})"));
        }
    }
    for f in &krate.files {
        if f.path.starts_with("src/ffi/")
            || RAW_POINTERS_ALLOWED.iter().any(|a| f.path.starts_with(a))
        {
            continue;
        }
        let toks = tokens(&f.code);
        let raw = toks
            .windows(2)
            .any(|w| w[0] == "*" && (w[1] == "const" || w[1] == "mut"));
        if raw {
            wrong.push(format!("{}: a raw pointer type outside the C face", f.path));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
