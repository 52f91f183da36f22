//! Every error line the project sends comes from the core's error module
//! (`rust/xstreams-core/src/error/`): the
//! engine's, the batch paths', the replay reader's, the bindings' and the server's. This
//! test reads the sources of every crate and fails, listing them, when a string literal
//! outside it looks like an error line: it begins (after an optional RESP `-`) with
//! one of Redis's error codes and a space, e.g. `"ERR syntax error"`, `b"-WRONGTYPE ..."`.
//! Test code (`#[cfg(test)]` items, `tests/` directories, `tests.rs` files) is left out.

use std::path::{Path, PathBuf};

#[path = "support/rust_source.rs"]
mod rust_source;
use rust_source::test_items;

/// The error codes Redis begins its error lines with.
const CODES: &[&str] = &[
    "ERR",
    "WRONGTYPE",
    "NOGROUP",
    "BUSYGROUP",
    "BUSYKEY",
    "EXECABORT",
    "READONLY",
    "MISCONF",
    "OOM",
    "NOAUTH",
    "WRONGPASS",
    "NOPROTO",
    "NOPERM",
    "NOSCRIPT",
    "LOADING",
    "UNBLOCKED",
    "DENIED",
    "CROSSSLOT",
    "TRYAGAIN",
    "NOREPLICAS",
    "MASTERDOWN",
    "BUSY",
];

/// Does `text` look like an error line?
fn is_error_line(text: &str) -> bool {
    let t = text.strip_prefix('-').unwrap_or(text);
    CODES.iter().any(|c| {
        t.strip_prefix(c)
            .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with("\\r"))
    })
}

/// The string literals of Rust source `src` (with the byte offset of each), and the source
/// with literals and comments blanked out (same length), for finding test items.
fn scan(src: &str) -> (Vec<(usize, String)>, Vec<u8>) {
    let b = src.as_bytes();
    let mut code = b.to_vec();
    let mut lits = Vec::new();
    let mut i = 0;
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut code[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut code, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                blank(&mut code, i, end);
                i = end;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}', '"') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    let end = src[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1);
                    blank(&mut code, i, end);
                    i = end;
                } else if b.get(i + 2) == Some(&b'\'') {
                    blank(&mut code, i, i + 3);
                    i += 3;
                } else {
                    i += 1;
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                while b.get(j) == Some(&b'#') {
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let hashes = j - i - 1;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = src[j + 1..].find(&close).map_or(b.len(), |n| j + 1 + n);
                lits.push((i, src[j + 1..end].to_string()));
                let end = (end + close.len()).min(b.len());
                blank(&mut code, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                lits.push((i, src[i + 1..j.min(b.len())].to_string()));
                let end = (j + 1).min(b.len());
                blank(&mut code, i, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    (lits, code)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "tests" {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(p);
        }
    }
}

/// The error-line literals of the sources under `crates` outside the error module, as
/// `path:line: "text"`.
fn stray_error_lines(crates: &Path) -> Vec<String> {
    let error_module = crates.join("xstreams-core/src/error");
    let mut files = Vec::new();
    for e in std::fs::read_dir(crates).expect("rust/").flatten() {
        rust_files(&e.path().join("src"), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut out = Vec::new();
    for f in files {
        if f.starts_with(&error_module) {
            continue;
        }
        let src = std::fs::read_to_string(&f).expect("source file");
        let (lits, code) = scan(&src);
        let skip = test_items(&code);
        for (pos, text) in lits {
            if skip.iter().any(|&(a, b)| a <= pos && pos < b) || !is_error_line(&text) {
                continue;
            }
            let line = src[..pos].matches('\n').count() + 1;
            let rel = f.strip_prefix(crates).unwrap_or(&f);
            out.push(format!("{}:{line}: {text:?}", rel.display()));
        }
    }
    out
}

#[test]
fn every_error_line_is_in_the_error_module() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let stray = stray_error_lines(&crates);
    assert!(
        stray.is_empty(),
        "error lines outside rust/xstreams-core/src/error/:\n{}",
        stray.join("\n")
    );
}

/// The check itself: it finds literals of every shape it claims to, and skips test code.
#[test]
fn the_scanner_finds_error_lines() {
    let src = r####"
fn f() -> &'static str {
    let _c = '"';
    let _d = '\'';
    let _raw = r#"WRONGTYPE raw"#;
    // "ERR in a comment"
    g(b"-NOGROUP bytes\r\n");
    "ERR plain"
}
#[cfg(test)]
mod tests {
    fn h() { let _ = "ERR in a test"; }
}
fn k() { let _ = "ERRATIC is not an error line"; let _ = "MISCONF tail"; }
"####;
    let (lits, code) = scan(src);
    let skip = test_items(&code);
    let found: Vec<&str> = lits
        .iter()
        .filter(|(p, t)| is_error_line(t) && !skip.iter().any(|&(a, b)| a <= *p && *p < b))
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(
        found,
        vec![
            "WRONGTYPE raw",
            "-NOGROUP bytes\\r\\n",
            "ERR plain",
            "MISCONF tail"
        ]
    );
}
