//! Configuration files in redis.conf's format (`xstreams serve /path/to/redis.conf
//! [--name value ...]`): one directive a line, `name value [value ...]`, words split as
//! redis-server splits them (double quotes with `\n`, `\t`, `\"`, `\\`, `\xHH` escapes;
//! single quotes with `\'`), blank lines and `#` comments skipped, `include PATH` read in
//! place. The directives are the command-line options without their `--`; options given
//! on the command line after the file override it, as with redis-server.

use std::path::{Path, PathBuf};

/// One directive: its lower-case name, its values, and where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub name: String,
    pub values: Vec<String>,
    /// `path:line` of a directive read from a file (`None`: the command line).
    pub origin: Option<String>,
}

/// Split a line into words as redis-server's `sdssplitargs` does; `None` for unbalanced
/// quotes (or a closing quote not followed by a space).
pub fn split_words(line: &str) -> Option<Vec<String>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Some(out);
        }
        let mut word: Vec<u8> = Vec::new();
        let (mut in_dq, mut in_sq) = (false, false);
        loop {
            if in_dq {
                let c = *b.get(i)?;
                if c == b'\\' && i + 3 < b.len() && b[i + 1] == b'x' {
                    let hex = std::str::from_utf8(&b[i + 2..i + 4]).ok();
                    if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        word.push(v);
                        i += 4;
                        continue;
                    }
                }
                if c == b'\\' && i + 1 < b.len() {
                    word.push(match b[i + 1] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                    i += 2;
                } else if c == b'"' {
                    // The closing quote must end the word.
                    if i + 1 < b.len() && !b[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    word.push(c);
                    i += 1;
                }
            } else if in_sq {
                let c = *b.get(i)?;
                if c == b'\\' && b.get(i + 1) == Some(&b'\'') {
                    word.push(b'\'');
                    i += 2;
                } else if c == b'\'' {
                    if i + 1 < b.len() && !b[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    word.push(c);
                    i += 1;
                }
            } else {
                match b.get(i) {
                    None => break,
                    Some(c) if c.is_ascii_whitespace() => break,
                    Some(b'"') => in_dq = true,
                    Some(b'\'') => in_sq = true,
                    Some(c) => word.push(*c),
                }
                i += 1;
            }
        }
        out.push(String::from_utf8_lossy(&word).into_owned());
    }
}

/// Read the directives of the configuration file at `path` (and the files it
/// includes), in order.
pub fn read(path: &Path) -> Result<Vec<Directive>, String> {
    let mut out = Vec::new();
    read_into(path, &mut out, 0)?;
    Ok(out)
}

fn read_into(path: &Path, out: &mut Vec<Directive>, depth: usize) -> Result<(), String> {
    if depth > 8 {
        return Err(format!(
            "{}: configuration files include each other too deeply",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the configuration file {}: {e}", path.display()))?;
    for (n, line) in text.lines().enumerate() {
        let origin = format!("{}:{}", path.display(), n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words =
            split_words(line).ok_or_else(|| format!("{origin}: unbalanced quotes in '{line}'"))?;
        let Some((name, values)) = words.split_first() else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        if name == "include" {
            let [file] = values else {
                return Err(format!("{origin}: include takes one file"));
            };
            let mut inc = PathBuf::from(file);
            if inc.is_relative() {
                if let Some(parent) = path.parent() {
                    inc = parent.join(inc);
                }
            }
            read_into(&inc, out, depth + 1)?;
            continue;
        }
        out.push(Directive {
            name,
            values: values.to_vec(),
            origin: Some(origin),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_redis_splits_them() {
        let w = |s: &str| split_words(s).unwrap();
        assert_eq!(w("  port   7000 "), ["port", "7000"]);
        assert_eq!(
            w(r#"requirepass "a b\"c\x41\n""#),
            ["requirepass", "a b\"cA\n"]
        );
        assert_eq!(w(r"dir 'it\'s here'"), ["dir", "it's here"]);
        assert_eq!(w(r#"save """#), ["save", ""]);
        assert!(split_words(r#"dir "open"#).is_none());
        assert!(split_words(r#"dir "a"b"#).is_none());
        assert_eq!(w(""), Vec::<String>::new());
    }

    #[test]
    fn reads_directives_and_includes() {
        let dir = std::env::temp_dir().join(format!("xstreams-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("more.conf"), "tls-auth-clients optional\n").unwrap();
        std::fs::write(
            dir.join("main.conf"),
            "# comment\n\nPORT 0\ntls-port 6380\ninclude more.conf\nbind 127.0.0.1 ::1\n",
        )
        .unwrap();
        let d = read(&dir.join("main.conf")).unwrap();
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["port", "tls-port", "tls-auth-clients", "bind"]);
        assert_eq!(d[3].values, ["127.0.0.1", "::1"]);
        assert!(d[0].origin.as_deref().unwrap().ends_with("main.conf:3"));
        assert!(read(&dir.join("missing.conf")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
