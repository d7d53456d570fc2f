//! Scene files: your own boxes, for `bplab run --scene-file`.
//!
//! A text file, one object per line; `#` starts a comment:
//!
//! ```text
//! # box <min x y z> <max x y z> [fixed] [layer L] [group G] [velocity vx vy vz]
//! box 0 0 0 1 1 1
//! box 0.5 0.5 0.5 2 2 2 fixed layer 1
//! box 3 0 0 4 1 1 velocity 0.1 0 0
//! ```
//!
//! Objects with a velocity move by it every frame; the others stay. Every number must be finite,
//! every box must have `min <= max`, layers are `0..64`: anything else is an error naming the
//! line.

use std::fmt;

use broadphase::{Aabb, Group, Layer, Mobility, ProxyDesc};

/// One object of a scene file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileObject {
    /// Its box at frame 0.
    pub aabb: Aabb,
    /// Its mobility, layer and group.
    pub desc: ProxyDesc,
    /// How far it moves each frame.
    pub velocity: [f32; 3],
}

/// A scene file's objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneFile {
    /// The objects, in file order.
    pub objects: Vec<FileObject>,
}

/// Why a scene file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneFileError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SceneFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for SceneFileError {}

/// The most objects a file may hold (the library's proxy limit).
pub const MAX_OBJECTS: usize = broadphase::MAX_PROXIES;

fn number(token: Option<&str>, what: &str) -> Result<f32, String> {
    let token = token.ok_or_else(|| format!("missing {what}"))?;
    let v: f32 = token
        .parse()
        .map_err(|_| format!("{what}: {token:?} is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{what}: {token:?} is not finite"))
    }
}

fn three<'a>(tokens: &mut impl Iterator<Item = &'a str>, what: &str) -> Result<[f32; 3], String> {
    Ok([
        number(tokens.next(), &format!("{what} x"))?,
        number(tokens.next(), &format!("{what} y"))?,
        number(tokens.next(), &format!("{what} z"))?,
    ])
}

fn parse_line(line: &str) -> Result<Option<FileObject>, String> {
    let line = line.split('#').next().unwrap_or("");
    let mut tokens = line.split_whitespace();
    match tokens.next() {
        None => return Ok(None),
        Some("box") => {}
        Some(other) => return Err(format!("unknown keyword {other:?} (expected \"box\")")),
    }
    let min = three(&mut tokens, "min")?;
    let max = three(&mut tokens, "max")?;
    let aabb = Aabb::new(min, max);
    aabb.validate().map_err(|e| e.to_string())?;
    let mut object = FileObject {
        aabb,
        desc: ProxyDesc::dynamic(),
        velocity: [0.0; 3],
    };
    while let Some(word) = tokens.next() {
        match word {
            "fixed" => object.desc.mobility = Mobility::Fixed,
            "dynamic" => object.desc.mobility = Mobility::Dynamic,
            "layer" => {
                let t = tokens.next().ok_or("missing layer")?;
                let layer: u8 = t
                    .parse()
                    .ok()
                    .filter(|l| usize::from(*l) < Layer::COUNT)
                    .ok_or_else(|| format!("layer {t:?} is not in 0..64"))?;
                object.desc.layer = Layer(layer);
            }
            "group" => {
                let t = tokens.next().ok_or("missing group")?;
                let group: u32 = t.parse().map_err(|_| format!("group {t:?} is not a u32"))?;
                object.desc.group = Group(group);
            }
            "velocity" => object.velocity = three(&mut tokens, "velocity")?,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(Some(object))
}

/// Parses a scene file.
///
/// # Errors
/// The first bad line, with what is wrong with it.
pub fn parse(text: &str) -> Result<SceneFile, SceneFileError> {
    let mut file = SceneFile::default();
    for (i, line) in text.lines().enumerate() {
        let object = parse_line(line).map_err(|message| SceneFileError {
            line: i + 1,
            message,
        })?;
        if let Some(o) = object {
            if file.objects.len() == MAX_OBJECTS {
                return Err(SceneFileError {
                    line: i + 1,
                    message: format!("more than {MAX_OBJECTS} objects"),
                });
            }
            file.objects.push(o);
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let text = "# a comment\nbox 0 0 0 1 1 1\n\nbox 0.5 0.5 0.5 2 2 2 fixed layer 1  # trailing\nbox 3 0 0 4 1 1 velocity 0.1 0 0 group 7\n";
        let f = parse(text).unwrap();
        assert_eq!(f.objects.len(), 3);
        assert_eq!(f.objects[1].desc.mobility, Mobility::Fixed);
        assert_eq!(f.objects[1].desc.layer, Layer(1));
        assert_eq!(f.objects[2].velocity, [0.1, 0.0, 0.0]);
        assert_eq!(f.objects[2].desc.group, Group(7));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, needle) in [
            ("box 0 0 0 1 1", 1, "missing max z"),
            ("\nbox 0 0 0 1 1 NaN", 2, "not finite"),
            ("box 0 0 0 1 1 inf", 1, "not finite"),
            ("box 2 0 0 1 1 1", 1, "min > max"),
            ("box 0 0 0 1 1 1 layer 64", 1, "0..64"),
            ("sphere 0 0 0 1", 1, "unknown keyword"),
            ("box 0 0 0 1 1 1 wobble", 1, "unknown option"),
            ("box 0 0 0 1 1 1 velocity 1 2", 1, "missing velocity z"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
        }
    }
}
