//! No module cycle in any crate: a module never uses one that uses it back. This test
//! reads the sources of every crate under `rust/` and builds two graphs from the paths the
//! (non-test) code names — `crate::a::b`, `super::x`, `self::x`:
//! - the crate's top-level modules (`a` uses `b` when code in `a` names `crate::b`);
//! - the children of each module directory (a sibling named through `super::` or a full
//!   path); a child naming its parent's own items is how Rust modules share them and is
//!   not an edge.
//!
//! It fails listing every cycle found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "support/rust_source.rs"]
mod rust_source;
use rust_source::test_items;

/// The source of `src` with comments, string and char literals blanked out.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 4 + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let end = src[i + 2..].find('\'').map_or(b.len(), |n| i + 3 + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                blank(&mut out, i, i + 3);
                i += 3;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    // Test items: `#[cfg(test)]` followed by `mod x;` or a braced item.
    for (start, end) in test_items(&out) {
        let end = (end + 1).min(out.len());
        blank(&mut out, start, end);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The module path of a source file (`src/a/b.rs` and `src/a/b/mod.rs`: `["a", "b"]`).
fn module_of(src_dir: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if p.is_dir() {
            rust_files(&p, out);
        } else if name.ends_with(".rs") && name != "tests.rs" && !p.starts_with(dir.join("bin")) {
            out.push(p);
        }
    }
}

/// The paths named in `code` (from module `me`), resolved to
/// absolute segment lists: `crate::a::b`, `super::x`, `self::x`, and the members of
/// `use crate::{a, b::c}` groups.
fn named_paths(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (start, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
        .chain(code.match_indices("self::"))
    {
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == ':')
        {
            continue;
        }
        let head = &code[start..];
        let (mut base, rest) = if let Some(r) = head.strip_prefix("crate::") {
            (Vec::new(), r)
        } else if let Some(r) = head.strip_prefix("super::") {
            // `super` of module `a::b` (`a/b.rs` or `a/b/mod.rs`) is `a`.
            let mut b = me.to_vec();
            b.pop();
            (b, r)
        } else {
            (me.to_vec(), &head["self::".len()..])
        };
        let rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // One level of a use group: `{a, b::c, d::{..}}`.
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        push_item(&mut out, &base, &item);
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 1 {
                    item.push(c);
                }
            }
            push_item(&mut out, &base, &item);
            continue;
        }
        for seg in rest.split("::") {
            let seg: String = seg.chars().take_while(|&c| ident(c)).collect();
            if seg.is_empty() {
                break;
            }
            base.push(seg);
        }
        out.push(base);
    }
    out
}

fn push_item(out: &mut Vec<Vec<String>>, base: &[String], item: &str) {
    let mut p = base.to_vec();
    for seg in item.trim().split("::") {
        let seg: String = seg
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if seg.is_empty() || seg == "self" {
            break;
        }
        p.push(seg);
    }
    out.push(p);
}

/// The longest prefix of `path` that is a module of the crate.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

/// Every cycle of `graph`, each as its members (Tarjan's strongly connected components).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.g.get(v) {
            for w in ws {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(lw));
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(iw));
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().expect("on stack");
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The module graphs of one crate (top level, then each directory's children) and their
/// cycles, as `crate: [a, b]` / `crate/dir: [a, b]`.
fn crate_cycles(name: &str, src_dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src_dir, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src_dir, f)).collect();
    // Graphs keyed by parent module path ("" for the crate's top level).
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &files {
        let me = module_of(src_dir, f);
        if me.is_empty() {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(f).expect("source"));
        for p in named_paths(&code, &me) {
            let target = resolve(&p, &modules);
            // The deepest common parent: an edge between two of its children.
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common >= me.len() || common >= target.len() {
                continue; // a module and its own descendants or ancestors
            }
            let parent = me[..common].join("::");
            graphs
                .entry(parent)
                .or_default()
                .entry(me[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    let mut out = Vec::new();
    for (parent, g) in &graphs {
        for c in cycles(g) {
            let at = if parent.is_empty() {
                name.to_string()
            } else {
                format!("{name}::{parent}")
            };
            out.push(format!("{at}: {}", c.join(" <-> ")));
        }
    }
    out
}

#[test]
fn no_module_cycle_in_any_crate() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut checked = 0;
    for e in std::fs::read_dir(&crates).expect("rust/").flatten() {
        let src = e.path().join("src");
        if src.is_dir() {
            checked += 1;
            found.extend(crate_cycles(&e.file_name().to_string_lossy(), &src));
        }
    }
    assert!(checked >= 3, "only {checked} crates found");
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

/// The check itself finds a cycle between top-level modules and between siblings.
#[test]
fn the_check_finds_cycles() {
    let dir = std::env::temp_dir().join(format!("xstreams-modgraph-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("d")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a; mod b; mod d;").unwrap();
    std::fs::write(
        src.join("a.rs"),
        "use crate::b::X; // crate::c in a comment",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "use crate::{a::Y, d};").unwrap();
    std::fs::write(src.join("d/mod.rs"), "mod p; mod q; pub use p::P;").unwrap();
    std::fs::write(src.join("d/p.rs"), "use super::q::Q; use super::Shared;").unwrap();
    std::fs::write(
        src.join("d/q.rs"),
        "fn f() { super::p::g() }\n#[cfg(test)]\nmod t { use crate::a; }",
    )
    .unwrap();
    let got = crate_cycles("demo", &src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(got, vec!["demo: a <-> b", "demo::d: p <-> q"]);
}
