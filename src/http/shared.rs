//! [`SharedBytes`]: a byte buffer filled once and then read by several consumers.
//!
//! The fetcher writes a response body into a `Vec<u8>` as it comes off the socket; the
//! link extractor, the WARC writer and the crawl log then all read that same allocation.
//! Handing them a reference-counted buffer instead of copies is what keeps a body to one
//! copy between the socket buffer and its consumers (`docs/architecture.md`, "Copies
//! of a body"). The crate has no `bytes` dependency; an `Arc<Vec<u8>>` is enough here,
//! because the buffers are never sliced or split, only shared whole.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable, cheaply cloned byte buffer (a clone shares the allocation).
///
/// Built from a `Vec<u8>` without copying it. Compares equal to anything that reads as a
/// byte slice, so tests can write `assert_eq!(outcome.body, b"hello")`.
#[derive(Clone, Default)]
pub struct SharedBytes(Arc<Vec<u8>>);

impl SharedBytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// Whether `self` and `other` are the same allocation (not merely equal bytes).
    pub fn is_shared_with(&self, other: &SharedBytes) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl From<Vec<u8>> for SharedBytes {
    /// Takes the vector as it is: no copy.
    fn from(bytes: Vec<u8>) -> Self {
        Self(Arc::new(bytes))
    }
}

impl From<&[u8]> for SharedBytes {
    /// Copies the slice (for tests and small constants).
    fn from(bytes: &[u8]) -> Self {
        Self(Arc::new(bytes.to_vec()))
    }
}

impl<const N: usize> From<&[u8; N]> for SharedBytes {
    /// Copies the array (for tests and small constants).
    fn from(bytes: &[u8; N]) -> Self {
        Self(Arc::new(bytes.to_vec()))
    }
}

impl Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl<T: AsRef<[u8]> + ?Sized> PartialEq<T> for SharedBytes {
    fn eq(&self, other: &T) -> bool {
        self.as_slice() == other.as_ref()
    }
}

impl Eq for SharedBytes {}

impl fmt::Debug for SharedBytes {
    /// The first 256 bytes as an escaped byte string, then the length: bodies are long.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 256;
        let bytes = self.as_slice();
        let shown = bytes.get(..SHOWN).unwrap_or(bytes);
        write!(f, "b\"{}\"", shown.escape_ascii())?;
        if bytes.len() > SHOWN {
            write!(f, "... ({} bytes)", bytes.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_keeps_the_allocation_and_clones_share_it() {
        let v = b"hello".to_vec();
        let at = v.as_ptr();
        let shared = SharedBytes::from(v);
        assert_eq!(shared.as_ptr(), at, "no copy on conversion");
        let clone = shared.clone();
        assert!(clone.is_shared_with(&shared));
        assert_eq!(clone.as_ptr(), at);
        assert!(!SharedBytes::from(&b"hello"[..]).is_shared_with(&shared));
    }

    #[test]
    fn compares_with_byte_slices_arrays_and_vectors() {
        let shared = SharedBytes::from(&b"abc"[..]);
        assert_eq!(shared, b"abc");
        assert_eq!(shared, &b"abc"[..]);
        assert_eq!(shared, b"abc".to_vec());
        assert_eq!(shared, SharedBytes::from(b"abc"));
        assert_ne!(shared, b"abd");
        assert!(SharedBytes::default().is_empty());
    }

    #[test]
    fn debug_is_an_escaped_prefix() {
        assert_eq!(
            format!("{:?}", SharedBytes::from(&b"a\r\n"[..])),
            "b\"a\\r\\n\""
        );
        let long = SharedBytes::from(vec![b'x'; 300]);
        let text = format!("{long:?}");
        assert!(text.ends_with("... (300 bytes)"), "{text}");
    }
}
