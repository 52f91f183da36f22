//! The `DataError` texts of the Python API, as redis-py raises them for the same bad
//! arguments (or in its style for options of our own).

pub const XREAD_STREAMS_EMPTY: &str = "XREAD streams must be a non empty dict";
pub const GROUP_AND_CONSUMER: &str = "group and consumer go together";
pub const IDMP_NEEDS_PRODUCER: &str =
    "iid and idmpauto need a producer (a producer column or a pid)";
pub const IDMPAUTO_OR_IID: &str = "Only one of ```idmpauto``` or ```iid``` may be specified";
pub const PRODUCER_NEEDS_IID: &str = "a producer needs an iid column or idmpauto=True";
pub const MAXLEN_OR_MINID: &str = "Only one of ```maxlen``` or ```minid``` may be specified";
pub const REF_POLICY: &str = "XADD ref_policy must be one of: KEEPREF, DELREF, ACKED";
pub const MAXLEN_NEGATIVE: &str = "XADD maxlen must be non-negative integer";

/// The dedup's settings and columns (`DedupSpec`, `xstreams.Deduper`): the texts
/// `xstreams.spark.dedup` raises for the same arguments.
pub const DEDUP_IID_OR_CONTENT: &str = "give iid or content columns (one of them)";
pub const DEDUP_CONTENT_EMPTY: &str = "content needs at least one column";

/// A dedup's `duration` or `maxsize` below 1 (the ranges XCFGSET takes are checked
/// by the Python API, `xstreams.dedup.check_settings`).
pub fn dedup_setting(name: &str, got: i128) -> String {
    format!("{name} must be at least 1, got {got}")
}

pub fn dedup_no_column(name: &str) -> String {
    format!("column {name:?} is not in the batch")
}

/// A row the dedup cannot answer as XADD would (`row`: its place in the input).
pub fn dedup_row(role: &str, name: &str, row: usize, what: &str) -> String {
    format!("dedup: the {role} column {name:?} {what} on row {row}")
}

/// An argument of a type that is not bytes, str, int or float.
pub fn invalid_input(type_name: &str) -> String {
    format!("Invalid input of type: '{type_name}'. Convert to a bytes, string, int or float first.")
}
