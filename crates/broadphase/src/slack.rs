//! Lists refilled every update keep their memory from one update to the next, so that a warm
//! broad phase allocates nothing, unless they keep using a small part of it ([`Trim`]): the
//! first update of a scene reports every pair created and the updates after it a few (at
//! 100,000 boxes moving, the lists kept from the first update were 17 bytes a box), but lists
//! whose length swings from one update to the next must not be given back and grown again
//! every time (Abp on `clustered` at 100,000 boxes was 7% slower so).

/// A list uses a small part of its memory while it holds less than this share of it...
const FACTOR: usize = 8;
/// ... and its memory is more than this many bytes: below, keeping it costs little.
const MIN_BYTES: usize = 16 << 10;
/// [`MIN_BYTES`] for lists kept by the hundreds, one per cell, where their small sizes add
/// up: Abp's columns at 100,000 boxes kept lists of candidates sized for every pair of the
/// first update, 1.7 KB a column, 4 bytes a box. (Grid's buckets, as many, refill theirs at
/// swinging lengths: 1 KB there cost 3-6% of a frame.)
pub(crate) const SMALL_MIN_BYTES: usize = 1 << 10;
/// Updates in a row that use a small part before the memory is given back.
const QUIET: u8 = 8;

/// What a list refilled every update needs to give its memory back: how many updates in a
/// row used a small part of it, and the longest the list was in them. Its owner empties the
/// list with [`Trim::clear`] between two updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Trim {
    quiet: u8,
    longest: usize,
    /// The list's last fill was a one-off ([`Trim::spike`]).
    spike: bool,
}

/// Fills from this many entries can be one-offs ([`Trim::spike`]).
pub(crate) const SPIKE_MIN: usize = 4096;

impl Trim {
    /// Marks the list's last fill as a one-off, when it was as long as every pair there is
    /// (an update that created every pair: a scene's first, a new layout): the next
    /// [`Trim::clear`] gives all its memory back, whatever the next fill uses. Waiting for
    /// [`QUIET`] updates kept the room of every pair through them, in the store's events and
    /// the driver's change list at once (12 bytes a box at 100,000 uniform boxes: the peak
    /// of the first frames after a build).
    pub(crate) fn spike(&mut self) {
        self.spike = true;
    }

    /// Empties `list` for the next update; gives back all but twice what it held in the last
    /// [`QUIET`] updates when each of them used a small part of its memory.
    pub(crate) fn clear<T>(&mut self, list: &mut Vec<T>) {
        self.clear_above(list, MIN_BYTES);
    }

    /// [`Trim::clear`] for a list that counts as small below `min_bytes`.
    pub(crate) fn clear_above<T>(&mut self, list: &mut Vec<T>, min_bytes: usize) {
        if self.spike {
            *list = Vec::new();
            *self = Self::default();
            return;
        }
        let (len, cap) = (list.len(), list.capacity());
        list.clear();
        if let Some(keep) = self.count_above(len, cap, size_of::<T>(), min_bytes) {
            list.shrink_to(keep);
        }
    }

    /// Counts an update that used `used` entries of `held`, each `size` bytes; says, when
    /// the memory is to be given back now, how many entries to keep room for.
    pub(crate) fn count(&mut self, used: usize, held: usize, size: usize) -> Option<usize> {
        self.count_above(used, held, size, MIN_BYTES)
    }

    fn count_above(
        &mut self,
        used: usize,
        held: usize,
        size: usize,
        min_bytes: usize,
    ) -> Option<usize> {
        if held * size <= min_bytes || used * FACTOR >= held {
            *self = Self::default();
            return None;
        }
        self.longest = self.longest.max(used);
        self.quiet += 1;
        let keep = 2 * self.longest;
        if self.quiet >= QUIET {
            *self = Self::default();
            return Some(keep);
        }
        None
    }
}

/// Lists shorter than this grow as `Vec` does (doubling): a small list whose length wanders
/// would otherwise grow by a little many times, for little memory. (At 4,096, the columns of
/// Abp at 100,000 uniform boxes, some 1,200 entries each, doubled: 30 bytes a box more.)
const GROW_EXACT_FROM: usize = 256;

/// Makes room for `more` entries past the end of `v`; a long list gets an eighth to spare
/// when it must grow, where `Vec` would double: for a list refilled every update at nearly
/// the same length (a cell's boxes and pairs), doubling left it 1.6 times what it holds.
pub(crate) fn grow<T>(v: &mut Vec<T>, more: usize) {
    if v.capacity() - v.len() < more {
        let need = v.len() + more;
        if need < GROW_EXACT_FROM {
            v.reserve(more);
        } else {
            v.reserve_exact(more + need / 8);
        }
    }
}

/// Makes room for `more` entries past the end of a per-slot array: exactly the first time
/// (an empty array), then as [`grow`] does. The store issues slots past those it had, one
/// at a time or a batch at once, and a scene that removes and re-adds 5% of 100,000 proxies
/// a frame doubled every such array (45 bytes a proxy in the store alone) for the 5,000 slots
/// it needs until the next update frees some.
pub(crate) fn reserve<T>(v: &mut Vec<T>, more: usize) {
    if v.is_empty() {
        v.reserve_exact(more);
    } else {
        grow(v, more);
    }
}

/// Lengthens a per-slot array to `n` entries of `value` (never shortens it), making room as
/// [`reserve`] does.
pub(crate) fn resize<T: Clone>(v: &mut Vec<T>, n: usize, value: T) {
    if n > v.len() {
        reserve(v, n - v.len());
        v.resize(n, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(cap: usize, len: usize) -> Vec<u64> {
        let mut r = Vec::with_capacity(cap);
        r.extend(0..len as u64);
        r
    }

    #[test]
    fn a_list_that_keeps_using_a_small_part_gives_its_memory_back() {
        let (mut r, mut trim) = (filled(100_000, 10), Trim::default());
        for update in 1..=QUIET {
            assert!(r.capacity() >= 100_000, "kept until update {update}");
            trim.clear(&mut r);
            r.extend(0..if update == 3 { 40 } else { 10 });
        }
        assert!(r.capacity() < 100, "kept {}", r.capacity());
        assert!(r.capacity() >= 80, "twice the longest of the quiet updates");
    }

    #[test]
    fn a_list_that_swings_or_is_small_keeps_its_memory() {
        let (mut r, mut trim) = (filled(100_000, 10), Trim::default());
        for update in 0..5 * QUIET {
            trim.clear(&mut r);
            // Every few updates, most of it again.
            r.extend(0..if update % 5 == 4 { 60_000 } else { 10 });
        }
        assert!(r.capacity() >= 100_000);
        let mut small = filled(1000, 0);
        for _ in 0..2 * QUIET {
            trim.clear(&mut small);
        }
        assert_eq!(small.capacity(), 1000);
        // ... unless small lists count too.
        for _ in 0..QUIET {
            trim.clear_above(&mut small, SMALL_MIN_BYTES);
        }
        assert!(small.capacity() < 1000);
    }

    /// A fill marked as a one-off gives all its memory back at the next clear; the one after
    /// counts quiet updates again.
    #[test]
    fn a_one_off_fill_is_given_back_at_once() {
        let (mut r, mut trim) = (filled(100_000, 100_000), Trim::default());
        trim.spike();
        trim.clear(&mut r);
        assert_eq!(r.capacity(), 0);
        r.extend(0..100_000);
        trim.clear(&mut r);
        r.extend(0..10);
        trim.clear(&mut r);
        assert!(r.capacity() >= 100_000, "not a one-off: kept");
    }

    #[test]
    fn per_slot_arrays_lengthen_by_an_eighth() {
        let mut v: Vec<u8> = Vec::new();
        resize(&mut v, 100_000, 0);
        assert_eq!(v.capacity(), 100_000);
        resize(&mut v, 105_000, 1);
        assert_eq!((v.len(), v.capacity(), v[104_999]), (105_000, 118_125, 1));
        resize(&mut v, 10, 2);
        assert_eq!(v.len(), 105_000);
    }

    #[test]
    fn growing_a_long_list_leaves_an_eighth_to_spare() {
        let mut v: Vec<u32> = Vec::new();
        grow(&mut v, 8000);
        assert_eq!(v.capacity(), 9000);
        v.resize(8500, 0);
        grow(&mut v, 100);
        assert_eq!(v.capacity(), 9000);
        // A short one doubles.
        let mut short: Vec<u32> = vec![0; 100];
        grow(&mut short, 1);
        assert!(short.capacity() >= 200);
    }
}
