//! Variations of the generated scenes: the same generators with another density, spread of
//! box sizes, speed or cluster width, so that a result is not a property of one parameter set
//! (`bplab run --vary`, `bplab bench --vary`).
//!
//! ```
//! use broadphase_lab::variation::Variation;
//! let v: Variation = "density=4,speed=2".parse()?;
//! assert_eq!((v.density, v.speed, v.size), (4.0, 2.0, 1.0));
//! assert_eq!(v.to_string(), "density=4,speed=2");
//! assert!(Variation::default().is_standard());
//! # Ok::<(), String>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// The smallest and largest factor a variation accepts.
pub const FACTORS: (f32, f32) = (0.05, 20.0);

/// Factors applied to a generated scene's parameters; 1 leaves one as the bench's scenes have
/// it. `pile` and `resting` (defined by how their boxes overlap) and scene files take none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variation {
    /// Boxes per volume: the world's side (a lattice's spacing in `grid`) is divided by its
    /// cube root. 8 puts about eight times the neighbours around each box.
    pub density: f32,
    /// The spread of box sizes: half extents from 0.25 to `0.25 + 0.75 × size` where they are
    /// drawn (the world keeps its side, so wider spreads overlap more), and the one size of
    /// `particles` and `grid`. `sizes`' planets keep theirs.
    pub size: f32,
    /// How far moving boxes go per frame: velocities, the random walk's step, the lattice's
    /// oscillation rate.
    pub speed: f32,
    /// The width of `clustered`'s clusters.
    pub spread: f32,
}

impl Default for Variation {
    fn default() -> Self {
        Self {
            density: 1.0,
            size: 1.0,
            speed: 1.0,
            spread: 1.0,
        }
    }
}

impl Variation {
    /// Whether every factor is 1: the scenes as the bench runs them.
    #[must_use]
    pub fn is_standard(&self) -> bool {
        *self == Self::default()
    }

    /// The factors by name, in the order they are written.
    fn fields(&self) -> [(&'static str, f32); 4] {
        [
            ("density", self.density),
            ("size", self.size),
            ("speed", self.speed),
            ("spread", self.spread),
        ]
    }
}

/// The factors other than 1, as `density=4,speed=2` (empty for the standard scenes).
impl fmt::Display for Variation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, value) in self.fields() {
            if value != 1.0 {
                let sep = if first { "" } else { "," };
                write!(f, "{sep}{name}={value}")?;
                first = false;
            }
        }
        Ok(())
    }
}

/// `name=factor` items separated by commas (`density`, `size`, `speed`, `spread`), each factor
/// within [`FACTORS`]; the empty string is the standard variation.
impl FromStr for Variation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut v = Variation::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!("variation {item:?}: expected name=factor"));
            };
            let factor: f32 = value
                .trim()
                .parse()
                .map_err(|_| format!("variation {item:?}: {value:?} is not a number"))?;
            if !(FACTORS.0..=FACTORS.1).contains(&factor) {
                return Err(format!(
                    "variation {item:?}: the factor must lie in {}..={}",
                    FACTORS.0, FACTORS.1
                ));
            }
            let field = match name.trim() {
                "density" => &mut v.density,
                "size" => &mut v.size,
                "speed" => &mut v.speed,
                "spread" => &mut v.spread,
                other => {
                    return Err(format!(
                        "variation {item:?}: unknown factor {other:?}; expected density, size, \
                         speed or spread"
                    ))
                }
            };
            *field = factor;
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_writes_and_refuses_the_rest() {
        for text in [
            "",
            "density=4",
            "size=0.5,spread=3",
            "density=8,size=2,speed=3,spread=0.25",
        ] {
            let written = text.parse::<Variation>().map(|v| v.to_string());
            assert_eq!(written, Ok(text.to_string()));
        }
        assert_eq!(
            " speed = 2 ,".parse::<Variation>().map(|v| v.speed),
            Ok(2.0)
        );
        for bad in [
            "density",
            "density=x",
            "density=0",
            "speed=100",
            "heat=2",
            "size=-1",
        ] {
            assert!(bad.parse::<Variation>().is_err(), "{bad}");
        }
    }
}
