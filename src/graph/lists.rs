//! Lists of items by key (a name id), held one after another in one vector: a vector per key
//! costs 24 bytes and an allocation of at least 32 more, and a profile whose every line has a
//! new name has millions of keys (docs/RELIABILITY.md, "Memory per byte decoded").

use std::ops::Index;

/// The lists of keys `0..len()`; `lists[k]` is key `k`'s.
#[derive(Default)]
pub struct Lists<T> {
    /// Where each key's list starts in `items`, and where the last one ends.
    starts: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy + Default> Lists<T> {
    /// The lists of `keys` keys from `entries`, which is called twice and must give the same
    /// `(key, item)` pairs both times; each list keeps the order its items came in.
    pub fn collect<I: Iterator<Item = (u32, T)>>(keys: usize, entries: impl Fn() -> I) -> Lists<T> {
        let mut starts = vec![0u32; keys + 1];
        for (k, _) in entries() {
            starts[k as usize + 1] += 1;
        }
        for k in 0..keys {
            starts[k + 1] += starts[k];
        }
        let mut items = vec![T::default(); starts[keys] as usize];
        let mut fill = starts.clone();
        for (k, item) in entries() {
            let at = &mut fill[k as usize];
            items[*at as usize] = item;
            *at += 1;
        }
        Lists { starts, items }
    }

    /// Keeps the first `kept[k]` items of each list `k`, dropping the rest.
    pub fn truncate_each(&mut self, kept: &[u32]) {
        let keys = self.len();
        let mut at = 0usize;
        for (k, &n) in kept.iter().enumerate().take(keys) {
            let from = self.starts[k] as usize;
            let n = (n as usize).min(self.starts[k + 1] as usize - from);
            self.items.copy_within(from..from + n, at);
            self.starts[k] = at as u32;
            at += n;
        }
        self.starts[keys] = at as u32;
        self.items.truncate(at);
        self.items.shrink_to_fit();
    }
}

impl<T> Lists<T> {
    /// The number of keys.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each list starts in the items (with the end of the last), and every item, the
    /// lists one after another: for working on all lists at once.
    pub fn parts_mut(&mut self) -> (&[u32], &mut [T]) {
        (&self.starts, &mut self.items)
    }

    /// The same, to read.
    pub fn parts(&self) -> (&[u32], &[T]) {
        (&self.starts, &self.items)
    }
}

impl<T> Index<usize> for Lists<T> {
    type Output = [T];
    fn index(&self, k: usize) -> &[T] {
        &self.items[self.starts[k] as usize..self.starts[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_each_keys_items_in_order_and_truncate_in_place() {
        let entries = [(2u32, 'a'), (0, 'b'), (2, 'c'), (3, 'd'), (2, 'e')];
        let mut lists = Lists::collect(5, || entries.iter().copied());
        assert_eq!(lists.len(), 5);
        let all: Vec<Vec<char>> = (0..5).map(|k| lists[k].to_vec()).collect();
        assert_eq!(all, [vec!['b'], vec![], vec!['a', 'c', 'e'], vec!['d'], vec![]]);
        lists.truncate_each(&[0, 0, 2, 1, 0]);
        let all: Vec<Vec<char>> = (0..5).map(|k| lists[k].to_vec()).collect();
        assert_eq!(all, [vec![], vec![], vec!['a', 'c'], vec!['d'], vec![]]);
        assert!(Lists::<char>::default().is_empty());
    }
}
