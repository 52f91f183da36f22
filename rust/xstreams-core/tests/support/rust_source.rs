//! Reading Rust sources as text, shared by the source checks (`error_texts.rs`,
//! `module_graph.rs`).

/// Byte ranges of `#[cfg(test)]` items (a `mod x;` or a braced item) in blanked `code`.
pub fn test_items(code: &[u8]) -> Vec<(usize, usize)> {
    let text = String::from_utf8_lossy(code);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(n) = text[from..].find("#[cfg(test)]") {
        let start = from + n;
        let mut i = start + "#[cfg(test)]".len();
        while i < code.len() && code[i] != b'{' && code[i] != b';' {
            i += 1;
        }
        if i < code.len() && code[i] == b'{' {
            let mut depth = 0;
            while i < code.len() {
                match code[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        out.push((start, i));
        from = i.max(start + 1);
    }
    out
}
