//! Redis glob matching, as KEYS, SCAN MATCH and CONFIG GET patterns use it.

/// Redis glob matching (`*`, `?`, `[...]` with ranges and `^`, `\\` escapes), as KEYS and
/// SCAN MATCH use it; same results as redis-server's `stringmatchlen`, including for
/// malformed patterns (an unterminated `[` class, a trailing `\\`).
pub fn glob_match(pattern: &[u8], string: &[u8]) -> bool {
    let mut skip_longer = false;
    glob_impl(pattern, string, &mut skip_longer, 0)
}

fn glob_impl(pat: &[u8], st: &[u8], skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > 1000 {
        return false;
    }
    // Indices into pat/st; `pat.get(i)` past the end reads as NUL like the C string.
    let at = |v: &[u8], i: usize| -> u8 { v.get(i).copied().unwrap_or(0) };
    let (mut p, mut s) = (0usize, 0usize);
    while p < pat.len() && s < st.len() {
        match pat[p] {
            b'*' => {
                while p < pat.len() && at(pat, p + 1) == b'*' {
                    p += 1;
                }
                if pat.len() - p == 1 {
                    return true;
                }
                while s < st.len() {
                    if glob_impl(&pat[p + 1..], &st[s..], skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    s += 1;
                }
                *skip_longer = true;
                return false;
            }
            b'?' => s += 1,
            b'[' => {
                p += 1;
                let not = p < pat.len() && pat[p] == b'^';
                if not {
                    p += 1;
                }
                let mut matched = false;
                loop {
                    let left = pat.len() - p;
                    if left >= 2 && pat[p] == b'\\' {
                        p += 1;
                        if pat[p] == st[s] {
                            matched = true;
                        }
                    } else if left == 0 {
                        p -= 1;
                        break;
                    } else if pat[p] == b']' {
                        break;
                    } else if left >= 3 && pat[p + 1] == b'-' {
                        let (mut lo, mut hi) = (pat[p], pat[p + 2]);
                        if lo > hi {
                            std::mem::swap(&mut lo, &mut hi);
                        }
                        p += 2;
                        if st[s] >= lo && st[s] <= hi {
                            matched = true;
                        }
                    } else if pat[p] == st[s] {
                        matched = true;
                    }
                    p += 1;
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s += 1;
            }
            c => {
                let mut c = c;
                if c == b'\\' && pat.len() - p >= 2 {
                    p += 1;
                    c = pat[p];
                }
                if c != st[s] {
                    return false;
                }
                s += 1;
            }
        }
        p += 1;
        if s == st.len() {
            while p < pat.len() && pat[p] == b'*' {
                p += 1;
            }
            break;
        }
    }
    p == pat.len() && s == st.len()
}
