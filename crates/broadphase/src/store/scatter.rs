//! The pieces of [`Store::set_aabbs`](super::Store::set_aabbs): spread over threads with the
//! `parallel` feature, one piece without it. Both are `par`, side by side, with the same
//! items.

pub(super) use par::{check_pieces, write_pieces, write_scattered, Scatter};

/// [`Store::set_aabbs`](super::Store::set_aabbs) spread over threads, one piece of the batch
/// each.
#[cfg(feature = "parallel")]
mod par {
    use crate::prefetch::{prefetch, prefetch_whole};
    use crate::store::moves::{write_moves, write_one, Checked, Written, MOVE_AHEAD};
    use crate::store::Store;
    use crate::{Aabb, Error, ProxyId};
    use rayon::prelude::*;

    /// What a batch of moves out of slot order is written from, kept from one batch to the
    /// next so that a frame's batch allocates nothing once warm: per piece of the batch and
    /// range of slots, the indices of the piece's items that fall in the range, in item order;
    /// per range, a bit per item that changed a slot first.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Scatter {
        pieces: usize,
        per_piece: usize,
        ranges: usize,
        per_range: usize,
        /// Piece `p`'s items in range `r` at `p * ranges + r`.
        lists: Vec<Vec<u32>>,
        marks: Vec<Vec<u64>>,
    }

    impl Scatter {
        /// Cuts a batch of `items` moves over `slots` slots into `pieces` pieces and as many
        /// ranges, and empties the lists.
        fn plan(&mut self, slots: usize, items: usize, pieces: usize) {
            self.pieces = pieces;
            self.per_piece = items.div_ceil(pieces).max(1);
            // At least 2 for `Divisor`.
            self.per_range = slots.div_ceil(pieces).max(2);
            self.ranges = slots.div_ceil(self.per_range).max(1);
            self.lists.resize_with(self.pieces * self.ranges, Vec::new);
            for list in &mut self.lists {
                list.clear();
            }
        }

        /// Lists the items of a `piece` of the batch, which starts at item `first`, into
        /// `lists` (one per range of `per_range` slots).
        fn list(per_range: usize, first: usize, piece: &[(ProxyId, Aabb)], lists: &mut [Vec<u32>]) {
            let range_of = Divisor::new(per_range);
            for (k, (id, _)) in piece.iter().enumerate() {
                // Checked ids: a slot of the store, so a range of the plan.
                lists[range_of.div(id.index())].push((first + k) as u32);
            }
        }

        pub(in crate::store) fn memory_bytes(&self) -> usize {
            self.lists.iter().map(|l| l.capacity() * 4).sum::<usize>()
                + self.marks.iter().map(|m| m.capacity() * 8).sum::<usize>()
        }
    }

    /// Division of `u32`s by a fixed divisor as one multiplication (Lemire, Kaser and Kurz,
    /// "Faster remainder by direct computation", 2019: exact for every 32-bit numerator and
    /// divisor above 1). Listing a batch by range with `/` spent more on the division than
    /// on the rest.
    #[derive(Clone, Copy, Debug)]
    struct Divisor(u64);

    impl Divisor {
        /// `d` is at least 2 and below 2^32.
        fn new(d: usize) -> Self {
            debug_assert!((2..1 << 32).contains(&d));
            Self(u64::MAX / d as u64 + 1)
        }

        #[inline(always)]
        fn div(self, n: u32) -> usize {
            ((u128::from(self.0) * u128::from(n)) >> 64) as usize
        }
    }

    #[cfg(test)]
    #[test]
    fn division_by_multiplication_is_exact() {
        let mut rng = crate::split_mix::SplitMix64::new(1);
        let mut next = move || rng.next_u64() as u32;
        let mut divisors: Vec<u32> = vec![2, 3, 7, 64, 1000, 65_537, u32::MAX - 1, u32::MAX];
        divisors.extend((0..200).map(|_| next().max(2)));
        divisors.extend((0..200).map(|_| (next() % 100_000).max(2)));
        for &d in &divisors {
            let div = Divisor::new(d as usize);
            let mut ns = vec![0, 1, d - 1, d, d.saturating_add(1), u32::MAX, u32::MAX - 1];
            ns.extend((0..500).map(|_| next()));
            ns.extend((1..50u32).map(|k| k.saturating_mul(d)));
            ns.extend((1..50u32).map(|k| k.saturating_mul(d).saturating_sub(1)));
            for n in ns {
                assert_eq!(div.div(n), (n / d) as usize, "{n} / {d}");
            }
        }
    }

    /// Checks `items` in `pieces` pieces: the first error in item order, else whether the
    /// slots increase through the whole batch and how many items from the first are still.
    /// When the slots do not increase, `scatter` holds the items listed by range for
    /// [`write_scattered`]: each piece lists its own as it checks them, while they are in
    /// cache.
    pub(in crate::store) fn check_pieces(
        store: &Store,
        items: &[(ProxyId, Aabb)],
        pieces: usize,
        scatter: &mut Scatter,
    ) -> Result<Checked, Error> {
        // Item indices are kept as `u32`: a batch of 2^32 items or more is not listed, and
        // takes one thread (see `write_scattered`).
        let listable = u32::try_from(items.len()).is_ok();
        scatter.plan(store.aabbs.len(), items.len(), pieces);
        let (per, ranges, per_range) = (scatter.per_piece, scatter.ranges, scatter.per_range);
        // Per piece: what its check found, and whether it was listed.
        let checked: Vec<Result<(Checked, bool), Error>> = items
            .par_chunks(per)
            .zip(scatter.lists.par_chunks_mut(ranges))
            .enumerate()
            .map(|(p, (piece, lists))| {
                let checked = store.check_moves(piece)?;
                let list = listable && !checked.increasing;
                if list {
                    Scatter::list(per_range, p * per, piece, lists);
                }
                Ok((checked, list))
            })
            .collect();
        let mut increasing = true;
        let mut still = 0;
        let mut unlisted = Vec::new();
        for (p, result) in checked.into_iter().enumerate() {
            let (piece, listed) = result?;
            increasing &= piece.increasing;
            // The still items run on into this piece only if every item before it was still.
            if still == p * per {
                still += piece.still;
            }
            if !listed {
                unlisted.push(p);
            }
        }
        let joins_increase = items
            .chunks(per)
            .zip(items.chunks(per).skip(1))
            .all(|(a, b)| a.last().map(|x| x.0.index()) < b.first().map(|x| x.0.index()));
        if increasing && joins_increase {
            return Ok(Checked {
                increasing: true,
                still,
            });
        }
        // Out of order after all: list the pieces whose own slots increase too.
        if listable {
            let jobs: Vec<(usize, &mut [Vec<u32>])> = scatter
                .lists
                .chunks_mut(ranges)
                .enumerate()
                .filter(|(p, _)| unlisted.contains(p))
                .collect();
            jobs.into_par_iter().for_each(|(p, lists)| {
                let piece = &items[(p * per).min(items.len())..((p + 1) * per).min(items.len())];
                Scatter::list(per_range, p * per, piece, lists);
            });
        }
        Ok(Checked {
            increasing: false,
            still,
        })
    }

    /// Writes checked `items`, whose slots increase, in `pieces` pieces: each piece owns the
    /// slots from its first one to the next piece's first one, and lists its changed slots in
    /// its own part of `dirty` (as long as `items`); the parts are then closed up, in order.
    pub(in crate::store) fn write_pieces(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        pieces: usize,
        dirty: &mut [u32],
    ) -> Written {
        let per = items.len().div_ceil(pieces);
        let chunks: Vec<&[(ProxyId, Aabb)]> = items.chunks(per).collect();
        let (mut aabbs, mut flags) = (&mut store.aabbs[..], &mut store.flags[..]);
        let mut rest = &mut *dirty;
        let mut jobs = Vec::with_capacity(chunks.len());
        let mut base = 0;
        for (k, &chunk) in chunks.iter().enumerate() {
            let end = chunks
                .get(k + 1)
                .and_then(|next| next.first())
                .map_or(base + aabbs.len(), |x| x.0.index() as usize);
            let (a, a_rest) = std::mem::take(&mut aabbs).split_at_mut(end - base);
            let (f, f_rest) = std::mem::take(&mut flags).split_at_mut(end - base);
            let (d, d_rest) = std::mem::take(&mut rest).split_at_mut(chunk.len());
            jobs.push((a, f, base, chunk, d));
            (aabbs, flags, rest, base) = (a_rest, f_rest, d_rest, end);
        }
        let written: Vec<Written> = jobs
            .into_par_iter()
            .map(|(a, f, base, chunk, d)| write_moves(a, f, base, chunk, d))
            .collect();
        let mut total = Written::NONE;
        let mut start = 0;
        for (chunk, w) in chunks.iter().zip(&written) {
            dirty.copy_within(start..start + w.changed, total.changed);
            total.add(w);
            start += chunk.len();
        }
        total
    }

    /// Writes checked `items` in any order, as [`check_pieces`] listed them in `scatter`: each
    /// range of slots is written by one thread, from its lists of every piece in turn (item
    /// order), marking the items that change a slot for the first time, and the marks give
    /// the changed slots in item order, as one thread lists them. A proxy listed twice is
    /// written twice by the same thread, in item order.
    pub(in crate::store) fn write_scattered(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        scatter: &mut Scatter,
        dirty: &mut [u32],
    ) -> Written {
        if u32::try_from(items.len()).is_err() {
            return write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty);
        }
        let Scatter {
            pieces,
            ranges,
            per_range,
            lists,
            marks,
            ..
        } = scatter;
        let (pieces, ranges, per_range) = (*pieces, *ranges, *per_range);
        let words = items.len().div_ceil(64);
        // A bitmap per range: the items of two ranges interleave, and shared words would
        // bounce between the cores.
        marks.resize_with(ranges, Vec::new);
        for m in marks.iter_mut() {
            m.clear();
            m.resize(words, 0);
        }
        let lists = &*lists;
        let jobs: Vec<_> = store
            .aabbs
            .chunks_mut(per_range)
            .zip(store.flags.chunks_mut(per_range))
            .zip(marks.iter_mut())
            .enumerate()
            .map(|(r, (a, m))| (r, a, m))
            .collect();
        let written: Vec<Written> = jobs
            .into_par_iter()
            .with_max_len(1)
            .map(|(r, (aabbs, flags), marks)| {
                let base = r * per_range;
                let mut w = Written::NONE;
                for p in 0..pieces {
                    let ks = &lists[p * ranges + r];
                    for (n, &k) in ks.iter().enumerate() {
                        if let Some(&ahead) = ks.get(n + MOVE_AHEAD) {
                            let i = items[ahead as usize].0.index() as usize - base;
                            prefetch_whole(&aabbs[i]);
                            prefetch(&flags[i]);
                        }
                        let (id, aabb) = items[k as usize];
                        // Checked: a live slot of this range.
                        let i = id.index() as usize - base;
                        let new = write_one(&mut aabbs[i], &mut flags[i], aabb, &mut w);
                        marks[k as usize / 64] |= u64::from(new) << (k % 64);
                    }
                }
                w
            })
            .collect();
        let mut total = Written::NONE;
        for w in &written {
            total.add(w);
        }
        let mut n = 0;
        for word in 0..words {
            let mut bits = marks.iter().fold(0, |acc, m| acc | m[word]);
            while bits != 0 {
                let k = word * 64 + bits.trailing_zeros() as usize;
                dirty[n] = items[k].0.index();
                n += 1;
                bits &= bits - 1;
            }
        }
        debug_assert_eq!(n, total.changed);
        total
    }
}

/// Without the `parallel` feature: one piece.
#[cfg(not(feature = "parallel"))]
mod par {
    use crate::store::moves::{write_moves, Checked, Written};
    use crate::store::Store;
    use crate::{Aabb, Error, ProxyId};

    /// Nothing to keep without threads.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Scatter {}

    impl Scatter {
        pub(in crate::store) fn memory_bytes(&self) -> usize {
            0
        }
    }

    pub(in crate::store) fn check_pieces(
        store: &Store,
        items: &[(ProxyId, Aabb)],
        _pieces: usize,
        _scatter: &mut Scatter,
    ) -> Result<Checked, Error> {
        store.check_moves(items)
    }

    pub(in crate::store) fn write_pieces(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        _pieces: usize,
        dirty: &mut [u32],
    ) -> Written {
        write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty)
    }

    pub(in crate::store) fn write_scattered(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        _scatter: &mut Scatter,
        dirty: &mut [u32],
    ) -> Written {
        write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty)
    }
}
