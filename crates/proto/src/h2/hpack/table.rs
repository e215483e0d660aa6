//! HPACK's dynamic table (RFC 7541 §2.3.2, §4): a FIFO of (name, value) entries whose size
//! (name + value + 32 per entry) stays within a maximum, the oldest evicted first.
//!
//! Both the decoder and the encoder keep one. It allocates only when it is created or its
//! largest allowed size grows, never per entry: the bytes of the entries live one after
//! another in a buffer twice the maximum size, and the entries are positions into it. When
//! a new entry does not fit at the end of the buffer, the live entries (at most the maximum
//! size, by the table's own rule) are moved to its front first. Every byte is moved at most
//! once per maximum-size worth of insertions, so an insertion costs O(its length)
//! amortized.

use std::collections::VecDeque;

/// The per-entry overhead of RFC 7541 §4.1.
pub(crate) const ENTRY_OVERHEAD: usize = 32;

#[derive(Debug, Clone)]
pub(crate) struct DynamicTable {
    /// Entry bytes; `bytes[0]` is at stream position `base`.
    bytes: Vec<u8>,
    base: u64,
    /// Newest first.
    entries: VecDeque<Entry>,
    /// RFC size of the entries.
    size: usize,
    /// The current maximum size (the last size update), at most `capacity_size`.
    max_size: usize,
    /// The largest maximum size the buffers are made for.
    capacity_size: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Stream position of the name; the value follows it.
    at: u64,
    name_len: u32,
    value_len: u32,
}

impl DynamicTable {
    /// A table whose maximum size is `max_size`, and may be set up to that later without
    /// allocating.
    pub(crate) fn new(max_size: usize) -> Self {
        let mut table = DynamicTable {
            bytes: Vec::new(),
            base: 0,
            entries: VecDeque::new(),
            size: 0,
            max_size,
            capacity_size: 0,
        };
        table.reserve_for(max_size);
        table
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// RFC size of what is held.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn max_size(&self) -> usize {
        self.max_size
    }

    /// The entry at `index` (0 is the newest).
    pub(crate) fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        let e = self.entries.get(index)?;
        let start = usize::try_from(e.at - self.base).ok()?;
        let name_end = start + e.name_len as usize;
        let value_end = name_end + e.value_len as usize;
        Some((self.bytes.get(start..name_end)?, self.bytes.get(name_end..value_end)?))
    }

    /// A dynamic table size update: evicts until the entries fit `max_size`. The caller has
    /// checked it against the largest size allowed; a larger value is clamped to what the
    /// table was made for.
    pub(crate) fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size.min(self.capacity_size);
        self.evict_to(self.max_size);
    }

    /// Makes room for a maximum size of `max_size` (allocates if it grew).
    pub(crate) fn reserve_for(&mut self, max_size: usize) {
        if max_size <= self.capacity_size {
            return;
        }
        self.compact();
        self.bytes.reserve_exact(2 * max_size - self.bytes.len());
        self.entries.reserve_exact(max_size / ENTRY_OVERHEAD + 1 - self.entries.len());
        self.capacity_size = max_size;
    }

    /// Adds an entry as the newest, evicting the oldest ones to make room. An entry larger
    /// than the maximum size empties the table and is not added (RFC 7541 §4.4).
    ///
    /// `name` and `value` must not borrow from the table itself (an indexed name is copied
    /// out first): eviction may drop the very entry they came from.
    pub(crate) fn insert(&mut self, name: &[u8], value: &[u8]) {
        let entry_size = name.len() + value.len() + ENTRY_OVERHEAD;
        if entry_size > self.max_size {
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max_size - entry_size);
        let len = name.len() + value.len();
        if self.bytes.len() + len > self.bytes.capacity() {
            self.compact();
        }
        let at = self.base + self.bytes.len() as u64;
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        // Both fit in u32: together they are smaller than the maximum size, a u32 setting.
        self.entries.push_front(Entry {
            at,
            name_len: name.len() as u32,
            value_len: value.len() as u32,
        });
        self.size += entry_size;
    }

    /// Drops every entry: what inserting an entry larger than the maximum size does.
    pub(crate) fn clear(&mut self) {
        self.evict_to(0);
    }

    /// The index of an entry equal to `(name, value)`, and failing that of the newest entry
    /// with that name, as `(index, value matches too)`. Linear: for the encoder, which runs
    /// once per new block, not per request.
    pub(crate) fn find(&self, name: &[u8], value: &[u8]) -> Option<(usize, bool)> {
        let mut by_name = None;
        for i in 0..self.len() {
            let Some((n, v)) = self.get(i) else { break };
            if n == name {
                if v == value {
                    return Some((i, true));
                }
                by_name.get_or_insert((i, false));
            }
        }
        by_name
    }

    fn evict_to(&mut self, size: usize) {
        while self.size > size {
            let Some(e) = self.entries.pop_back() else { break };
            self.size -= e.name_len as usize + e.value_len as usize + ENTRY_OVERHEAD;
        }
        if self.entries.is_empty() {
            self.base += self.bytes.len() as u64;
            self.bytes.clear();
        }
    }

    /// Moves the live bytes (those of the oldest entry onwards) to the front of the buffer.
    fn compact(&mut self) {
        let Some(oldest) = self.entries.back() else {
            self.base += self.bytes.len() as u64;
            self.bytes.clear();
            return;
        };
        let start = (oldest.at - self.base) as usize;
        self.bytes.copy_within(start.., 0);
        self.bytes.truncate(self.bytes.len() - start);
        self.base = oldest.at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(t: &DynamicTable) -> Vec<(String, String)> {
        (0..t.len())
            .map(|i| {
                let (n, v) = t.get(i).unwrap();
                (String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned())
            })
            .collect()
    }

    #[test]
    fn newest_first_and_evicts_the_oldest() {
        let mut t = DynamicTable::new(100);
        t.insert(b"a", b"1"); // 34
        t.insert(b"b", b"22"); // 35
        assert_eq!(entries(&t), [("b".into(), "22".into()), ("a".into(), "1".into())]);
        assert_eq!(t.size(), 69);
        t.insert(b"c", b"333"); // 36: 105 > 100, so "a" goes
        assert_eq!(entries(&t), [("c".into(), "333".into()), ("b".into(), "22".into())]);
        assert_eq!(t.size(), 71);
        assert_eq!(t.find(b"b", b"22"), Some((1, true)));
        assert_eq!(t.find(b"b", b"x"), Some((1, false)));
        assert_eq!(t.find(b"a", b"1"), None);
    }

    #[test]
    fn an_entry_larger_than_the_table_empties_it() {
        let mut t = DynamicTable::new(64);
        t.insert(b"a", b"1");
        t.insert(&[b'x'; 40], b"");
        assert_eq!(t.len(), 0);
        assert_eq!(t.size(), 0);
        // An entry of exactly the maximum size fits.
        t.insert(&[b'y'; 32], b"");
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn size_updates_evict_and_never_grow_past_the_capacity() {
        let mut t = DynamicTable::new(200);
        for i in 0..5u8 {
            t.insert(&[b'a' + i], b"v");
        }
        assert_eq!(t.len(), 5);
        t.set_max_size(68);
        assert_eq!(entries(&t), [("e".into(), "v".into()), ("d".into(), "v".into())]);
        t.set_max_size(0);
        assert_eq!(t.len(), 0);
        t.set_max_size(10_000);
        assert_eq!(t.max_size(), 200);
    }

    #[test]
    fn many_insertions_wrap_without_allocating_more() {
        let mut t = DynamicTable::new(256);
        let cap = t.bytes.capacity();
        let mut model: VecDeque<(Vec<u8>, Vec<u8>)> = VecDeque::new();
        for i in 0..2000usize {
            let name = format!("n{}", i % 7).into_bytes();
            let value = vec![b'v'; i * 31 % 97];
            t.insert(&name, &value);
            model.push_front((name, value));
            let mut size: usize = model.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
            while size > 256 {
                let (n, v) = model.pop_back().unwrap();
                size -= n.len() + v.len() + 32;
            }
            assert_eq!(t.len(), model.len());
            assert_eq!(t.size(), size);
            for (j, (n, v)) in model.iter().enumerate() {
                assert_eq!(t.get(j), Some((&n[..], &v[..])), "entry {j} after insertion {i}");
            }
        }
        assert_eq!(t.bytes.capacity(), cap);
    }
}
