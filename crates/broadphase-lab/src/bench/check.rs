//! The pair check of `bplab bench`: every contender's pairs against the reference's (the first
//! `broadphase` algorithm of the cell) on the same frames. A difference is a
//! [`Mismatch`], which fails the bench.
//!
//! Exact contenders must report the reference's pair set. A contender that reports candidates
//! ([`Reported::Candidates`], parry in rapier's mode) is checked the way rapier's pair map
//! works: what it has reported since both boxes of a pair last arrived, filtered by exact
//! overlap of the current boxes, must be the reference's pair set. That needs its reports of
//! every frame, so candidates are checked only where the checker sees every frame (the
//! verification pass before timing), not at the end of the timed rounds.

use std::collections::HashSet;
use std::fmt;

use broadphase::Aabb;

use crate::bench::contender::{Contender, IndexPair, Reported};
use crate::scenes::{Frame, Scene};

/// A contender's pairs differed from the reference's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The cell (scene, boxes, threads), once the runner has named it.
    pub cell: String,
    /// The contender that differed.
    pub contender: String,
    /// The contender it was compared with.
    pub reference: String,
    /// The frame (0 = the build, counted from the start of the checked run).
    pub frame: usize,
    /// What differed, with a few of the differing pairs.
    pub what: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.cell.is_empty() {
            write!(f, "{}: ", self.cell)?;
        }
        write!(
            f,
            "{} disagrees with {} at frame {}: {}",
            self.contender, self.reference, self.frame, self.what
        )
    }
}

/// How `got` differs from `want` (both sorted, each pair once), or `None` when they are equal.
pub fn difference(want: &[IndexPair], got: &[IndexPair]) -> Option<String> {
    if want == got {
        return None;
    }
    let (w, g): (HashSet<_>, HashSet<_>) = (want.iter().collect(), got.iter().collect());
    let missing: Vec<_> = want.iter().filter(|p| !g.contains(p)).take(5).collect();
    let extra: Vec<_> = got.iter().filter(|p| !w.contains(p)).take(5).collect();
    Some(format!(
        "{} pairs ({} distinct) against {}; missing {missing:?}; extra {extra:?}",
        got.len(),
        g.len(),
        want.len()
    ))
}

/// Follows a scene's boxes frame by frame and checks contenders' pairs against a reference's.
pub struct Checker {
    /// Each object's current box (`None` while it is away).
    boxes: Vec<Option<Aabb>>,
    /// Per contender, the candidates reported since their boxes last arrived.
    seen: Vec<HashSet<IndexPair>>,
    /// Whether every frame's reports are collected (candidates can be checked).
    every_frame: bool,
    frame: usize,
}

impl Checker {
    /// A checker for `contenders` contenders built on the scene's current boxes. With
    /// `every_frame`, [`Checker::observe`] must be called after every frame.
    pub fn new(scene: &Scene, contenders: usize, every_frame: bool) -> Self {
        Self {
            boxes: (0..scene.len()).map(|i| Some(scene.aabb(i))).collect(),
            seen: vec![HashSet::new(); contenders],
            every_frame,
            frame: 0,
        }
    }

    /// Follows one frame of the scene.
    pub fn apply(&mut self, frame: &Frame) {
        self.frame += 1;
        frame.apply_to(&mut self.boxes);
        if !frame.removed.is_empty() {
            // rapier drops the pairs of a removed collider; its arrival is reported afresh.
            let gone: HashSet<u32> = frame.removed.iter().copied().collect();
            for seen in &mut self.seen {
                seen.retain(|(a, b)| !gone.contains(a) && !gone.contains(b));
            }
        }
    }

    /// Takes every contender's report of the current frame; checks them (`check`) against
    /// contender 0's, which must be exact. Names are for the mismatch message.
    ///
    /// # Errors
    /// The first contender whose pairs differ.
    pub fn observe(
        &mut self,
        contenders: &[Box<dyn Contender>],
        names: &[&str],
        check: bool,
    ) -> Result<(), Mismatch> {
        let reports: Vec<Reported> = contenders.iter().map(|c| c.reported()).collect();
        self.observe_reports(&reports, names, check)
    }

    /// [`Checker::observe`] on reports already taken.
    ///
    /// # Errors
    /// As [`Checker::observe`].
    pub fn observe_reports(
        &mut self,
        reports: &[Reported],
        names: &[&str],
        check: bool,
    ) -> Result<(), Mismatch> {
        let name = |c: usize| names.get(c).copied().unwrap_or("?").to_string();
        let Some(Reported::Exact(want)) = reports.first() else {
            return Err(Mismatch {
                cell: String::new(),
                contender: name(0),
                reference: name(0),
                frame: self.frame,
                what: "the reference does not report an exact pair set".to_string(),
            });
        };
        for (c, report) in reports.iter().enumerate().skip(1) {
            let got = match report {
                Reported::Exact(pairs) => Some(pairs.clone()),
                Reported::Candidates(pairs) if self.every_frame => {
                    let seen = &mut self.seen[c];
                    seen.extend(pairs.iter().copied());
                    let boxes = &self.boxes;
                    let overlap = |&(a, b): &IndexPair| match (boxes[a as usize], boxes[b as usize])
                    {
                        (Some(p), Some(q)) => p.overlaps(&q),
                        _ => false,
                    };
                    let mut exact: Vec<IndexPair> = seen.iter().copied().filter(overlap).collect();
                    exact.sort_unstable();
                    Some(exact)
                }
                Reported::Candidates(_) => None,
            };
            if let (true, Some(got)) = (check, got) {
                if let Some(what) = difference(want, &got) {
                    return Err(Mismatch {
                        cell: String::new(),
                        contender: name(c),
                        reference: name(0),
                        frame: self.frame,
                        what,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenes::SceneKind;

    fn names() -> [&'static str; 3] {
        ["abp", "peer", "skin"]
    }

    #[test]
    fn equal_sets_pass_and_a_wrong_peer_is_caught() {
        let scene = Scene::new(SceneKind::Uniform, 10, 1);
        let mut checker = Checker::new(&scene, 2, true);
        let want = vec![(0, 1), (2, 5)];
        let same = [Reported::Exact(want.clone()), Reported::Exact(want.clone())];
        assert_eq!(checker.observe_reports(&same, &names(), true), Ok(()));
        let wrong = [Reported::Exact(want), Reported::Exact(vec![(0, 1), (2, 6)])];
        let err = checker.observe_reports(&wrong, &names(), true).unwrap_err();
        assert_eq!((err.contender.as_str(), err.frame), ("peer", 0));
        assert!(err.what.contains("missing [(2, 5)]"), "{}", err.what);
        assert!(err.what.contains("extra [(2, 6)]"), "{}", err.what);
    }

    #[test]
    fn candidates_accumulate_and_are_filtered_by_overlap() {
        // Three boxes: 0 and 1 overlap, 2 is far away.
        let file =
            crate::scene_file::parse("box 0 0 0 1 1 1\nbox 0.5 0 0 2 1 1\nbox 9 9 9 10 10 10\n")
                .unwrap();
        let scene = Scene::from_file(&file);
        let mut checker = Checker::new(&scene, 3, true);
        let want = Reported::Exact(vec![(0, 1)]);
        // Frame 0: the skin peer reports (0, 1) and a loose (1, 2), which the filter drops.
        let first = [
            want.clone(),
            want.clone(),
            Reported::Candidates(vec![(0, 1), (1, 2)]),
        ];
        assert_eq!(checker.observe_reports(&first, &names(), true), Ok(()));
        // A frame where nothing moved out of its skin: no candidates, (0, 1) is remembered.
        checker.apply(&Frame::default());
        let quiet = [want.clone(), want.clone(), Reported::Candidates(vec![])];
        assert_eq!(checker.observe_reports(&quiet, &names(), true), Ok(()));
        // A peer that never reported (0, 1) is caught.
        let mut fresh = Checker::new(&scene, 3, true);
        let missed = [want.clone(), want, Reported::Candidates(vec![(1, 2)])];
        let err = fresh.observe_reports(&missed, &names(), true).unwrap_err();
        assert_eq!(err.contender, "skin");
    }
}
