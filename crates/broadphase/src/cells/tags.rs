//! Tags: which region and cell an entry's box starts in, and from them which one cell of the
//! several a pair shares reports it (see the [module docs](super)).

/// Bits of the cut-axis fields of a tag.
const FIELD_BITS: u32 = 11;
const FIELD: u32 = (1 << FIELD_BITS) - 1;
/// The cell coordinates of a tag.
const LOCAL: u32 = (1 << (2 * FIELD_BITS)) - 1;
/// The flag of an entry whose box is in exactly two regions.
pub(crate) const TWO_REGIONS: u32 = 1 << (2 * FIELD_BITS);
const REGION_SHIFT: u32 = 24;

/// The tag of an entry (or the key of a cell): `region` (8 bits), a flag (see
/// [`TWO_REGIONS`]), then the cell coordinates `u` and `v` in that region's grid (11 bits
/// each). An entry's tag names its box's first (lowest) region and its first cell there.
#[inline]
pub(crate) fn tag(region: usize, u: u16, v: u16) -> u32 {
    debug_assert!(region < 256 && u32::from(u) <= FIELD && u32::from(v) <= FIELD);
    ((region as u32) << REGION_SHIFT) | (u32::from(u) << FIELD_BITS) | u32::from(v)
}

/// The region named by a tag or cell key.
#[inline]
pub(crate) fn tag_region(t: u32) -> usize {
    (t >> REGION_SHIFT) as usize
}

/// A tag or key without its region and flags: the cell coordinates within the region.
#[inline]
pub(crate) fn local(t: u32) -> u32 {
    t & LOCAL
}

/// Whether the cell with key `key` reports the pair of two entries tagged `a` and `b` found in
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Report {
    /// This cell reports it.
    Here,
    /// Another cell does.
    Elsewhere,
    /// This cell does, unless both boxes also touch a region below this one: both boxes start
    /// in lower regions (their first regions), which may or may not be shared.
    HereUnlessLowerRegion,
}

/// The rule of the [module docs](super) for which cell reports a pair, from the tags alone.
#[inline(always)]
pub(crate) fn reporting_cell(key: u32, a: u32, b: u32) -> Report {
    let u = ((a >> FIELD_BITS) & FIELD).max((b >> FIELD_BITS) & FIELD);
    let v = (a & FIELD).max(b & FIELD);
    if (u << FIELD_BITS) | v != key & LOCAL {
        return Report::Elsewhere;
    }
    let (ra, rb) = (a >> REGION_SHIFT, b >> REGION_SHIFT);
    match ra.max(rb).cmp(&(key >> REGION_SHIFT)) {
        std::cmp::Ordering::Equal => Report::Here,
        // Both boxes are in this cell's region and start below it. A box in exactly two
        // regions is in its first one and this one: two such boxes share a lower region
        // exactly when they start in the same one.
        std::cmp::Ordering::Less if a & b & TWO_REGIONS != 0 => {
            if ra == rb {
                Report::Elsewhere
            } else {
                Report::Here
            }
        }
        std::cmp::Ordering::Less => Report::HereUnlessLowerRegion,
        // Both boxes are in this cell's region, so neither starts above it.
        std::cmp::Ordering::Greater => Report::Elsewhere,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reporting_cell_is_unique() {
        // Two boxes sharing cells u 2..=3, v 2..=2 of region 0: only (2, 2) reports them.
        let (a, b) = (tag(0, 1, 2), tag(0, 2, 1));
        let reporting: Vec<(u16, u16)> = (2..=3)
            .flat_map(|u| (2..=2).map(move |v| (u, v)))
            .filter(|&(u, v)| reporting_cell(tag(0, u, v), a, b) == Report::Here)
            .collect();
        assert_eq!(reporting, vec![(2, 2)]);
    }

    #[test]
    fn boxes_in_two_regions_need_no_lookup() {
        let two = |r: usize| tag(r, 0, 0) | TWO_REGIONS;
        // Both in region 5 and one region below: the same one, or not.
        assert_eq!(
            reporting_cell(tag(5, 0, 0), two(3), two(3)),
            Report::Elsewhere
        );
        assert_eq!(reporting_cell(tag(5, 0, 0), two(3), two(4)), Report::Here);
        // One in more regions: the lists decide.
        assert_eq!(
            reporting_cell(tag(5, 0, 0), two(3), tag(4, 0, 0)),
            Report::HereUnlessLowerRegion
        );
        assert_eq!(local(two(7) | tag(0, 5, 9)), local(tag(0, 5, 9)));
    }

    #[test]
    fn regions_order_reporting_cells() {
        // Both start in region 3: a cell of region 3 reports them, region 5 asks about lower ones.
        let (a, b) = (tag(3, 0, 0), tag(3, 0, 0));
        assert_eq!(reporting_cell(tag(3, 0, 0), a, b), Report::Here);
        assert_eq!(
            reporting_cell(tag(5, 0, 0), a, b),
            Report::HereUnlessLowerRegion
        );
        // One starts in region 5 itself: no lower region can hold both.
        assert_eq!(reporting_cell(tag(5, 0, 0), a, tag(5, 0, 0)), Report::Here);
        assert_eq!(tag_region(tag(200, 7, 9)), 200);
    }
}
