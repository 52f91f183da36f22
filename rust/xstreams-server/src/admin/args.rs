//! Small argument helpers shared by the admin commands (a leaf: uses nothing here).

/// Is argument `a` the keyword `s` (case-insensitive)?
pub(crate) fn eq(a: &[u8], s: &str) -> bool {
    a.eq_ignore_ascii_case(s.as_bytes())
}

/// An argument as text, cut at a NUL as redis-server's C strings are.
pub(crate) fn lossy(a: &[u8]) -> String {
    String::from_utf8_lossy(xstreams_core::base::num::c_str(a)).into_owned()
}

/// Client names and library attributes: printable ASCII without spaces.
pub(crate) fn valid_attr(v: &[u8]) -> bool {
    v.iter().all(|&c| (b'!'..=b'~').contains(&c))
}
