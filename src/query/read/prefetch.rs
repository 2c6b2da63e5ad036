//! Reading a scan a few items ahead, so that what the query will read of each item is
//! already on its way into the CPU's cache when the query reaches it.
//!
//! A scan over more items than the cache holds waits on memory for every item: first for
//! its record, then for the members it reads, which sit hundreds of bytes further on. The
//! record arrives with the cursor step, and its member directory tells where the demanded
//! members are; hinting those a few items early overlaps their loading with the work on the
//! items in between.

use std::collections::VecDeque;

/// How many items ahead the hints are given: enough to cover a memory access with the work
/// on the items in between (several hundred nanoseconds each).
const DEPTH: usize = 4;

/// An iterator handing out `inner`'s items `DEPTH` items after calling `hint` on each.
pub struct Lookahead<I: Iterator, F> {
    inner: I,
    ahead: VecDeque<I::Item>,
    hint: F,
}

impl<I: Iterator, F: FnMut(&I::Item)> Lookahead<I, F> {
    pub fn new(inner: I, hint: F) -> Self {
        Lookahead {
            inner,
            ahead: VecDeque::with_capacity(DEPTH + 1),
            hint,
        }
    }
}

impl<I: Iterator, F: FnMut(&I::Item)> Iterator for Lookahead<I, F> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        while self.ahead.len() <= DEPTH {
            match self.inner.next() {
                Some(item) => {
                    (self.hint)(&item);
                    self.ahead.push_back(item);
                }
                None => break,
            }
        }
        self.ahead.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_comes_out_once_in_order_after_its_hint() {
        for n in [0, 1, DEPTH, DEPTH + 1, 50] {
            let mut hinted = Vec::new();
            let out: Vec<usize> = Lookahead::new(0..n, |i: &usize| hinted.push(*i)).collect();
            assert_eq!(out, (0..n).collect::<Vec<_>>());
            assert_eq!(hinted, out);
        }
    }
}
