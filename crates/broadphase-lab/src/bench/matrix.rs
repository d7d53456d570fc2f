//! The cells of a bench run and the order the contenders run in within a cell.

use crate::bench::BenchOptions;
use crate::scenes::SceneKind;

/// The pile scene has n(n-1)/2 pairs: its cells are capped at this many boxes.
pub const PILE_MAX: usize = 2_000;

/// The sizes scene has about 37 pairs per box (its planets overlap hundreds of asteroids):
/// at 300,000 boxes, 11 million pairs and 7 GB held by the eight contenders at once; at a
/// million, more than the 24 GB of the machines the bench is run on. Its cells are capped here.
pub const SIZES_MAX: usize = 300_000;

/// One cell of the matrix: a scene at a size, run on a number of threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The scene.
    pub scene: SceneKind,
    /// Boxes in the scene (the requested size, capped for `pile` and `sizes`).
    pub n: usize,
    /// Worker threads of the cell's rayon pool.
    pub threads: usize,
    /// Whether the peers and GpuGrid run here. They use no worker threads, so they run once
    /// per scene and size: in the cell with the fewest threads.
    pub peers: bool,
}

/// The boxes a scene is run with when `size` is asked for.
pub fn scene_size(scene: SceneKind, size: usize) -> usize {
    match scene {
        SceneKind::Pile => size.min(PILE_MAX),
        SceneKind::Sizes => size.min(SIZES_MAX),
        _ => size,
    }
}

/// The cells of a run, scene by scene, then by size, then by thread count (fewest first).
/// Sizes that a cap makes equal are run once.
pub fn cells(opts: &BenchOptions) -> Vec<Cell> {
    let mut threads = opts.threads.clone();
    threads.sort_unstable();
    threads.dedup();
    let mut out = Vec::new();
    for &scene in &opts.scenes {
        let mut sizes: Vec<usize> = opts.sizes.iter().map(|&s| scene_size(scene, s)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for n in sizes {
            for (i, &t) in threads.iter().enumerate() {
                out.push(Cell {
                    scene,
                    n,
                    threads: t,
                    // GpuGrid too, with no peer (`bplab bench --gpu`).
                    peers: i == 0 && (!opts.peers.is_empty() || opts.gpu),
                });
            }
        }
    }
    out
}

/// The order of a cell's timed rounds: `(round, contender)` for `repeats` rounds of
/// `contenders` contenders, interleaved (every contender once a round, not A A A B B B), so
/// that a slow drift of the machine (heat, another process) falls on every contender alike.
///
/// The rounds follow the rows of a Williams square: over `contenders` rounds every contender
/// runs right after every other one once, and once in every position (for an odd count, over
/// twice as many rounds, twice). A contender's frame can depend on what ran just before it (the
/// caches it left), and a fixed order, or one merely rotated from round to round, gives each
/// contender the same predecessor in every round. The order of the builds is not balanced
/// (each contender is built once, in the order given): at 1M boxes on `static_world` the
/// contender built first ran 5-10% faster than the one built after it, whichever of QuadTree
/// and Auto it was, and building them in the reverse order reversed it.
pub fn schedule(contenders: usize, repeats: usize) -> Vec<(usize, usize)> {
    let k = contenders;
    // The first row: 0, 1, k-1, 2, k-2, ...; row r adds r to each (mod k), and for an odd
    // count the second k rows are the first k reversed.
    let first: Vec<usize> = (0..k)
        .map(|j| match j {
            0 => 0,
            j if j % 2 == 1 => j.div_ceil(2),
            j => k - j / 2,
        })
        .collect();
    let first = &first;
    (0..repeats)
        .flat_map(|r| {
            let shift = r % k.max(1);
            let reversed = k % 2 == 1 && (r / k.max(1)) % 2 == 1;
            (0..k).map(move |p| {
                let j = if reversed { k - 1 - p } else { p };
                (r, (first[j] + shift) % k)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_interleave_the_contenders() {
        let order: Vec<usize> = schedule(4, 2).iter().map(|&(_, c)| c).collect();
        assert_eq!(order, [0, 1, 3, 2, 1, 2, 0, 3]);
        let rounds: Vec<usize> = schedule(3, 2).iter().map(|&(r, _)| r).collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1]);
        assert!(schedule(4, 0).is_empty());
        assert_eq!(schedule(1, 2), [(0, 0), (1, 0)]);
    }

    /// Over a full square every contender runs once a round, right after every other one
    /// exactly once, and in every position equally often.
    #[test]
    fn every_contender_follows_every_other_once_a_square() {
        for k in 2..=9 {
            let rounds = if k % 2 == 1 { 2 * k } else { k };
            let order = schedule(k, rounds);
            let rows: Vec<Vec<usize>> = order
                .chunks(k)
                .map(|row| row.iter().map(|&(_, c)| c).collect())
                .collect();
            let mut follows = vec![vec![0; k]; k];
            let mut at = vec![vec![0; k]; k];
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..k).collect::<Vec<_>>(), "{k}: {row:?}");
                for w in row.windows(2) {
                    follows[w[0]][w[1]] += 1;
                }
                for (p, &c) in row.iter().enumerate() {
                    at[c][p] += 1;
                }
            }
            let each = rounds / k;
            for (a, after_a) in follows.iter().enumerate() {
                for (b, &n) in after_a.iter().enumerate() {
                    let want = if a == b { 0 } else { each };
                    assert_eq!(n, want, "{k}: {b} after {a}");
                }
                assert!(at[a].iter().all(|&n| n == each), "{k}: positions of {a}");
            }
        }
    }

    #[test]
    fn gpugrid_alone_still_gets_the_cell_with_the_fewest_threads() {
        let mut opts = BenchOptions::quick();
        opts.peers.clear();
        opts.gpu = true;
        opts.threads = vec![1, 2];
        let got: Vec<bool> = cells(&opts).iter().map(|c| c.peers).collect();
        assert_eq!(got, [true, false, true, false, true, false]);
        opts.gpu = false;
        assert!(cells(&opts).iter().all(|c| !c.peers));
    }

    #[test]
    fn peers_run_once_per_scene_and_size_and_pile_is_capped() {
        let mut opts = BenchOptions::quick();
        opts.scenes = vec![SceneKind::Uniform, SceneKind::Pile];
        opts.sizes = vec![10_000, 100_000];
        opts.threads = vec![2, 1, 2];
        let cells = cells(&opts);
        let got: Vec<(SceneKind, usize, usize, bool)> = cells
            .iter()
            .map(|c| (c.scene, c.n, c.threads, c.peers))
            .collect();
        let peers = !opts.peers.is_empty() || opts.gpu;
        assert_eq!(
            got,
            [
                (SceneKind::Uniform, 10_000, 1, peers),
                (SceneKind::Uniform, 10_000, 2, false),
                (SceneKind::Uniform, 100_000, 1, peers),
                (SceneKind::Uniform, 100_000, 2, false),
                (SceneKind::Pile, PILE_MAX, 1, peers),
                (SceneKind::Pile, PILE_MAX, 2, false),
            ]
        );
    }
}
