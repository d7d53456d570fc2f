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
/// `contenders` contenders, interleaved (A B C, B C A, C A B, ...), so that a slow drift of
/// the machine (heat, another process) falls on every contender alike. Each round starts one
/// contender further on: a contender's frame depends on what ran just before it (at 1M
/// boxes on `static_world`, QuadTree ran 9% faster right after parry_exact than right after
/// Auto, and Auto likewise), and a fixed order gave each contender the same neighbour in
/// every round.
pub fn schedule(contenders: usize, repeats: usize) -> Vec<(usize, usize)> {
    (0..repeats)
        .flat_map(|r| (0..contenders).map(move |i| (r, (r + i) % contenders)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_interleave_the_contenders() {
        let order: Vec<usize> = schedule(3, 4).iter().map(|&(_, c)| c).collect();
        assert_eq!(order, [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]);
        let rounds: Vec<usize> = schedule(3, 2).iter().map(|&(r, _)| r).collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 1]);
        assert!(schedule(4, 0).is_empty());
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
