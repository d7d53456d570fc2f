//! What the page draws: the boxes projected on a plane, which of them overlap another, and
//! for the grid the collision cells of its finest level.

use std::collections::{HashMap, HashSet};

use broadphase::{Algorithm, Config, ProxyId};
use serde::{Deserialize, Serialize};

use super::api::ApiError;
use crate::lab::Stepper;

/// The most boxes and cells a view sends: more would not be seen on a page anyway.
pub const MAX_DRAWN: usize = 5_000;

/// The query of `GET /api/sessions/{id}/view`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ViewQuery {
    /// The plane: `xy`, `xz` or `yz`.
    pub plane: String,
    /// The most boxes to send, 1 to [`MAX_DRAWN`].
    pub max: usize,
}

impl Default for ViewQuery {
    fn default() -> Self {
        Self {
            plane: "xy".to_string(),
            max: 2_000,
        }
    }
}

impl ViewQuery {
    /// The plane's two axes, and the box count.
    ///
    /// # Errors
    /// A 400 for another plane or a count outside 1 to [`MAX_DRAWN`].
    pub fn validate(&self) -> Result<([usize; 2], usize), ApiError> {
        let axes = match self.plane.as_str() {
            "xy" => [0, 1],
            "xz" => [0, 2],
            "yz" => [1, 2],
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown plane {other:?}; expected xy, xz or yz"
                )))
            }
        };
        if !(1..=MAX_DRAWN).contains(&self.max) {
            return Err(ApiError::bad_request(format!(
                "max must be from 1 to {MAX_DRAWN} (got {})",
                self.max
            )));
        }
        Ok((axes, self.max))
    }
}

/// The boxes seen on a plane: `GET /api/sessions/{id}/view`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ViewJson {
    /// The frame.
    pub frame: u64,
    /// The plane.
    pub plane: String,
    /// The scene's bounds on the plane: `[u0, v0, u1, v1]`.
    pub bounds: [f32; 4],
    /// Objects in the scene.
    pub total: usize,
    /// The boxes sent: objects 0, 1, 2… (the scenes place them at random), four numbers each,
    /// `u0, v0, u1, v1`.
    pub boxes: Vec<f32>,
    /// Per box sent, 1 when it overlaps another box (in 3D), else 0.
    pub overlapping: Vec<u8>,
    /// Objects overlapping another, among all of them.
    pub overlapping_total: usize,
    /// The grid's fine cell size (0 for the other strategies).
    pub cell_size: f64,
    /// The collision cells of the grid's finest level seen on the plane, as columns `u, v`
    /// in cells (multiply by `cell_size`), at most [`MAX_DRAWN`]; empty for other strategies.
    pub cells: Vec<[i32; 2]>,
    /// Columns holding a collision cell, among all of them.
    pub cells_total: usize,
}

/// The view of the stepper's scene on the plane of `axes`, with at most `max` boxes.
///
/// # Errors
/// A 500 if the broad phase that finds the sweep's overlaps rejects the scene (a bug).
pub fn view(stepper: &Stepper, axes: [usize; 2], max: usize) -> Result<ViewJson, ApiError> {
    let scene = stepper.scene();
    let n = scene.len();
    let [a, b] = axes;
    let bounds = scene.bounds().map_or([0.0, 0.0, 1.0, 1.0], |bb| {
        [bb.min[a], bb.min[b], bb.max[a], bb.max[b]]
    });
    let overlapping = overlapping(stepper)?;
    let drawn = n.min(max);
    let mut boxes = Vec::with_capacity(4 * drawn);
    for i in 0..drawn {
        let bb = scene.aabb(i);
        boxes.extend([bb.min[a], bb.min[b], bb.max[a], bb.max[b]]);
    }
    let mut cells = Vec::new();
    let mut cells_total = 0;
    let mut cell_size = 0.0;
    if let Some((size, fine)) = super::walk::fine_collision_cells(stepper) {
        cell_size = size;
        let mut columns: Vec<[i32; 2]> = fine
            .iter()
            .map(|c| [c[a], c[b]])
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        columns.sort_unstable();
        cells_total = columns.len();
        columns.truncate(MAX_DRAWN);
        cells = columns;
    }
    Ok(ViewJson {
        frame: stepper.frame(),
        plane: ["x", "y", "z"][a].to_string() + ["x", "y", "z"][b],
        bounds,
        total: n,
        overlapping_total: overlapping.iter().filter(|&&o| o).count(),
        overlapping: overlapping[..drawn].iter().map(|&o| u8::from(o)).collect(),
        boxes,
        cell_size,
        cells,
        cells_total,
    })
}

/// Per object, whether it overlaps another: from the strategy's pairs, or for the sweep,
/// which only counts its pairs, from a broad phase run on the same boxes.
fn overlapping(stepper: &Stepper) -> Result<Vec<bool>, ApiError> {
    let n = stepper.scene().len();
    let mut out = vec![false; n];
    let mark = |out: &mut Vec<bool>, ids: &[ProxyId], pairs: &[broadphase::Pair]| {
        let index: HashMap<ProxyId, usize> =
            ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        for p in pairs {
            for id in [p.a, p.b] {
                if let Some(&i) = index.get(&id) {
                    out[i] = true;
                }
            }
        }
    };
    if let Some(pairs) = stepper.pairs() {
        mark(&mut out, stepper.ids(), pairs);
    } else {
        let mut bp = broadphase::new(Algorithm::Abp, Config::default());
        let ids = bp.insert_batch(&stepper.scene().initial())?;
        bp.update()?;
        mark(&mut out, &ids, bp.pairs());
    }
    Ok(out)
}
