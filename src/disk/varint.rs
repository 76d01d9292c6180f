//! LEB128 varints: seven bits a byte, least significant group first, the high bit set
//! on every byte but the last. Small numbers (lengths, counts, flags) take one byte.

/// The longest varint of a `u64`: ten bytes (9 x 7 bits, then one bit).
pub const MAX_VARINT_BYTES: usize = 10;

/// Why a varint or a length-prefixed field did not decode. The input is left where it
/// was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VarintError {
    /// The input ends before the varint (or the bytes it counts) does.
    #[error("the input ends inside a varint or the bytes it counts")]
    Truncated,
    /// The varint does not fit in 64 bits (or a length in `usize`).
    #[error("varint overflows 64 bits")]
    Overflow,
}

/// Appends `v` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Takes a varint off the front of `input`.
///
/// # Errors
/// [`VarintError::Truncated`] if `input` ends inside it, [`VarintError::Overflow`] if
/// it has more than 64 bits (a tenth byte above 1, or an eleventh byte). On an error
/// `input` is unchanged.
pub fn take_varint(input: &mut &[u8]) -> Result<u64, VarintError> {
    let mut v = 0u64;
    for (i, &b) in input.iter().enumerate() {
        if i == MAX_VARINT_BYTES - 1 && b > 1 {
            return Err(VarintError::Overflow);
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *input = input.get(i + 1..).unwrap_or_default();
            return Ok(v);
        }
    }
    Err(VarintError::Truncated)
}

/// Appends `bytes` with a varint length before them.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Takes a field written by [`put_bytes`] off the front of `input`.
///
/// # Errors
/// [`VarintError::Truncated`] if the length or the bytes run past the input,
/// [`VarintError::Overflow`] for a length beyond 64 bits or `usize`. On an error
/// `input` is unchanged.
pub fn take_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], VarintError> {
    let mut rest = *input;
    let len = usize::try_from(take_varint(&mut rest)?).map_err(|_| VarintError::Overflow)?;
    if len > rest.len() {
        return Err(VarintError::Truncated);
    }
    let (head, tail) = rest.split_at(len);
    *input = tail;
    Ok(head)
}
