//! A slab of connections addressed by generation-tagged tokens.
//!
//! A mio `Token` carries the slot index in its low 32 bits and the slot's generation in
//! the high bits. When a connection closes, its slot's generation is bumped before the
//! slot is reused, so an event (or timer) still in flight for the old connection carries
//! a stale generation and is ignored instead of being applied to the new one.

use mio::Token;

/// A key into the slab: index and generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotKey {
    index: u32,
    generation: u32,
}

impl SlotKey {
    /// The mio token for this key.
    pub fn token(self) -> Token {
        Token(((self.generation as usize) << 32) | self.index as usize)
    }

    /// The key a token was made from (no check that it is live: see [`Slab::get_mut`]).
    pub fn from_token(token: Token) -> Self {
        Self {
            index: (token.0 & 0xffff_ffff) as u32,
            generation: (token.0 >> 32) as u32,
        }
    }
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// Fixed-purpose slab: insert, look up by key (stale keys miss), remove.
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Live entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Stores `value` and returns its key.
    ///
    /// # Panics
    /// Never in practice: more than 2^31 live slots would be needed (the waker uses the
    /// all-ones token, which no slot can produce since generations stay below `u32::MAX`).
    pub fn insert(&mut self, value: T) -> SlotKey {
        self.len += 1;
        if let Some(index) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(index as usize) {
                slot.value = Some(value);
                return SlotKey {
                    index,
                    generation: slot.generation,
                };
            }
        }
        let index = u32::try_from(self.slots.len()).unwrap_or(u32::MAX - 1);
        self.slots.push(Slot {
            generation: 0,
            value: Some(value),
        });
        SlotKey {
            index,
            generation: 0,
        }
    }

    /// The live entry for `key`, or `None` when the key is stale or unknown.
    pub fn get_mut(&mut self, key: SlotKey) -> Option<&mut T> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.value.as_mut()
    }

    /// Shared access, same rules as [`Slab::get_mut`].
    pub fn get(&self, key: SlotKey) -> Option<&T> {
        let slot = self.slots.get(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.value.as_ref()
    }

    /// Removes and returns the entry; the slot's generation moves on so `key` goes stale.
    pub fn remove(&mut self, key: SlotKey) -> Option<T> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        let value = slot.value.take()?;
        // Skip u32::MAX so no slot token can equal the waker's all-ones token.
        slot.generation = match slot.generation.wrapping_add(1) {
            u32::MAX => 0,
            g => g,
        };
        self.free.push(key.index);
        self.len -= 1;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_key_misses_after_reuse() {
        let mut slab = Slab::default();
        let a = slab.insert("a");
        assert_eq!(slab.remove(a), Some("a"));
        let b = slab.insert("b");
        assert_eq!(a.index, b.index, "slot reused");
        assert_ne!(a.token(), b.token(), "tokens differ by generation");
        assert!(slab.get_mut(a).is_none());
        assert_eq!(slab.get(SlotKey::from_token(b.token())), Some(&"b"));
        assert!(slab.remove(a).is_none());
        assert_eq!(slab.len(), 1);
    }

    #[test]
    fn token_roundtrip() {
        let key = SlotKey {
            index: 7,
            generation: 0xdead,
        };
        assert_eq!(SlotKey::from_token(key.token()), key);
    }
}
