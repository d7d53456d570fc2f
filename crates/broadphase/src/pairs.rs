//! Pair keys and the created/deleted diffing of persistent pairs.
//!
//! Abp, Mbp, QuadTree and Grid keep their pairs in their own parts (a cell, a bucket, a tree),
//! each part's as a sorted list of keys that [`diff_pairs_in_place`] diffs against the part's
//! pairs found this update (in place: a part keeps one list of its pairs); the store turns the candidates into events and makes the list of pairs
//! as ids only when asked (`Store::listed_pairs`), so a frame pays for the pairs that changed,
//! not for a table of all of them. Sap adds and removes pairs one at a time as its end points
//! swap, and keeps them in a hash table of its own (`sap::pair_table`).

/// The key of the pair of slots `a < b`.
#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The key of the pair of slots `a` and `b`, in either order: the smaller slot in the high
/// half, so keys sort like the pairs' ids.
#[inline]
#[must_use]
pub fn pair_key(a: u32, b: u32) -> u64 {
    if a < b {
        key(a, b)
    } else {
        key(b, a)
    }
}

/// One list of an engine's persistent pairs (a cell's, a bucket's, a tree's), as
/// [`Engine::pair_lists`](crate::engine::Engine::pair_lists) gives them: its keys, and how to
/// read a key's two slots (keys need not be [`pair_key`]s: a grid keeps its own order).
#[derive(Clone, Copy, Debug)]
pub struct PairList<'a> {
    /// The keys, one per pair.
    pub keys: &'a [u64],
    /// The two slots of a key.
    pub slots: fn(u64) -> (u32, u32),
}

impl<'a> PairList<'a> {
    /// A list of [`pair_key`]s.
    #[must_use]
    pub fn new(keys: &'a [u64]) -> Self {
        Self {
            keys,
            slots: key_slots,
        }
    }
}

/// The two slots of a pair key, smaller first.
///
/// ```
/// use broadphase::engine::{key_slots, pair_key};
/// assert_eq!(key_slots(pair_key(7, 3)), (3, 7));
/// ```
#[inline]
#[must_use]
pub fn key_slots(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// Removes the keys present in both sorted lists from both: a pair that an update both
/// deleted and created (a proxy re-inserted, a pair re-found) stays as it was.
pub(crate) fn cancel_common(a: &mut Vec<u64>, b: &mut Vec<u64>) {
    if a.is_empty() || b.is_empty() {
        return;
    }
    let (mut i, mut j, mut wa, mut wb) = (0, 0, 0, 0);
    while i < a.len() || j < b.len() {
        let x = a.get(i).copied().unwrap_or(u64::MAX);
        let y = b.get(j).copied().unwrap_or(u64::MAX);
        if x == y {
            i += 1;
            j += 1;
        } else if x < y {
            a[wa] = x;
            wa += 1;
            i += 1;
        } else {
            b[wb] = y;
            wb += 1;
            j += 1;
        }
    }
    a.truncate(wa);
    b.truncate(wb);
}

/// Diffs one part of the pair set (a cell, a grid bucket, a tree): `old` (last update's keys,
/// sorted) against `found` (this update's, sorted, each with a changed proxy). Pairs found
/// again or with no changed proxy stay (into `out`); pairs found for the first time are created
/// candidates; pairs with a changed proxy that were not found again are deleted candidates.
/// The parts diff in place ([`diff_pairs_in_place`]); this is what that is tested against.
#[cfg(test)]
pub(crate) fn diff_pairs(
    old: &[u64],
    found: &[u64],
    changed: impl Fn(u32) -> bool,
    out: &mut Vec<u64>,
    created: &mut Vec<u64>,
    deleted: &mut Vec<u64>,
) {
    diff_pairs_by(
        old,
        found.iter().copied(),
        key_slots,
        changed,
        out,
        created,
        deleted,
    );
}

/// [`diff_pairs_by`] in place: `pairs` (last update's keys, sorted) becomes this update's,
/// with no second list. Every key of `found` has a changed proxy, so the pairs that stay
/// without being found again (both proxies unchanged) and those found are apart: the first are
/// compacted in place while the two lists are diffed, then `found` is merged in from the back.
/// A part keeps one list of pairs instead of two (8 bytes a pair).
pub(crate) fn diff_pairs_in_place(
    pairs: &mut Vec<u64>,
    found: &[u64],
    slots: impl Fn(u64) -> (u32, u32),
    changed: impl Fn(u32) -> bool,
    created: &mut Vec<u64>,
    deleted: &mut Vec<u64>,
) {
    let as_pair = |k: u64| {
        let (a, b) = slots(k);
        pair_key(a, b)
    };
    let mut kept = 0;
    let mut j = 0;
    for i in 0..pairs.len() {
        let o = pairs[i];
        while let Some(&f) = found.get(j).filter(|&&f| f < o) {
            created.push(as_pair(f));
            j += 1;
        }
        if found.get(j) == Some(&o) {
            // Found again: it comes back with `found`.
            j += 1;
            continue;
        }
        let (a, b) = slots(o);
        if changed(a) || changed(b) {
            deleted.push(pair_key(a, b));
        } else {
            pairs[kept] = o;
            kept += 1;
        }
    }
    created.extend(found[j..].iter().map(|&f| as_pair(f)));
    pairs.truncate(kept);
    crate::slack::grow(pairs, found.len());
    // Room for `found` (when no pair was kept, its copy is the list), then the merge from the
    // back writes over it.
    pairs.extend_from_slice(found);
    if kept == 0 {
        return;
    }
    let (mut i, mut j, mut w) = (kept, found.len(), kept + found.len());
    while j > 0 {
        w -= 1;
        if i > 0 && pairs[i - 1] > found[j - 1] {
            i -= 1;
            pairs[w] = pairs[i];
        } else {
            j -= 1;
            debug_assert!(
                i == 0 || pairs[i - 1] != found[j],
                "a found pair has a changed proxy"
            );
            pairs[w] = found[j];
        }
    }
}

/// [`diff_pairs`] for lists whose keys are in another order than pair keys (any order that is
/// the same from one update to the next): `slots` gives a key's two slots. The candidates come
/// out as pair keys. `found` may be made while it is read (Grid reads its bit rows so).
pub(crate) fn diff_pairs_by(
    old: &[u64],
    found: impl IntoIterator<Item = u64>,
    slots: impl Fn(u64) -> (u32, u32),
    changed: impl Fn(u32) -> bool,
    out: &mut Vec<u64>,
    created: &mut Vec<u64>,
    deleted: &mut Vec<u64>,
) {
    out.clear();
    let mut found = found.into_iter();
    // No real key is u64::MAX (slots are below 2^24): it stands for "list exhausted".
    let mut next = || found.next().unwrap_or(u64::MAX);
    let mut f = next();
    let mut i = 0;
    loop {
        let o = old.get(i).copied().unwrap_or(u64::MAX);
        if o == f {
            if o == u64::MAX {
                break;
            }
            out.push(o);
            i += 1;
            f = next();
        } else if o < f {
            let (a, b) = slots(o);
            if changed(a) || changed(b) {
                deleted.push(pair_key(a, b));
            } else {
                out.push(o);
            }
            i += 1;
        } else {
            let (a, b) = slots(f);
            created.push(pair_key(a, b));
            out.push(f);
            f = next();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// In place or into a second list, the diff gives the same pairs, created and deleted:
        /// old pairs of changed and unchanged proxies, found again or not, and new ones.
        #[test]
        fn the_diff_in_place_matches_the_diff_into_a_list(
            old in prop::collection::btree_set((0u32..30, 0u32..30), 0..80),
            found in prop::collection::btree_set((0u32..30, 0u32..30), 0..80),
            changed in prop::collection::vec(any::<bool>(), 30),
        ) {
            let keys = |s: &std::collections::BTreeSet<(u32, u32)>| {
                let mut k: Vec<u64> =
                    s.iter().filter(|(a, b)| a != b).map(|&(a, b)| pair_key(a, b)).collect();
                k.sort_unstable();
                k.dedup();
                k
            };
            let is_changed = |s: u32| changed[s as usize];
            let old = keys(&old);
            // Every found pair has a changed proxy.
            let found: Vec<u64> = keys(&found)
                .into_iter()
                .filter(|&k| {
                    let (a, b) = key_slots(k);
                    is_changed(a) || is_changed(b)
                })
                .collect();
            let (mut out, mut created, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
            diff_pairs(&old, &found, is_changed, &mut out, &mut created, &mut deleted);
            let mut pairs = old.clone();
            let (mut created2, mut deleted2) = (Vec::new(), Vec::new());
            diff_pairs_in_place(
                &mut pairs,
                &found,
                key_slots,
                is_changed,
                &mut created2,
                &mut deleted2,
            );
            prop_assert_eq!(pairs, out);
            prop_assert_eq!(created2, created);
            prop_assert_eq!(deleted2, deleted);
        }
    }
}
