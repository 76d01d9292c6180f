//! Header-field lookups over a parsed head's `(name, value)` list, shared by the
//! response head (`response/head.rs`) and the incoming request (`incoming_request.rs`): field
//! names compare ASCII case-insensitively (RFC 9110 §5.1).

/// The value of the first field named `name`.
pub(super) fn first<'a>(fields: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a [u8]> {
    fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
}

/// The values of every field named `name`, in order.
pub(super) fn named<'a>(
    fields: &'a [(String, Vec<u8>)],
    name: &'a str,
) -> impl Iterator<Item = &'a [u8]> {
    fields
        .iter()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
}
