//! Scene files: your own boxes, or a recording of your own game, for `bplab run --scene-file`.
//!
//! A text file, one statement per line; `#` starts a comment. There are two versions.
//!
//! **Version 1** (a file without a header): boxes, some drifting at a constant velocity.
//!
//! ```text
//! # box <min x y z> <max x y z> [fixed] [layer L] [group G] [velocity vx vy vz]
//! box 0 0 0 1 1 1
//! box 0.5 0.5 0.5 2 2 2 fixed layer 1
//! box 3 0 0 4 1 1 velocity 0.1 0 0
//! ```
//!
//! Objects with a velocity move by it every frame; the others stay. `bplab run` runs as many
//! frames as `--frames` asks.
//!
//! **Version 2** (a trace): the header `bplab-scene 2`, the boxes present at the start, then
//! one `frame` section per frame saying what happened in it.
//!
//! ```text
//! bplab-scene 2
//! box 0 0 0 1 1 1            # id 0
//! box 3 0 0 4 1 1            # id 1
//! frame                      # frame 1
//! set 1 2.5 0 0 3.5 1 1      # id 1's new box
//! insert 7 9 9 9 10 10 10 fixed layer 2
//! frame                      # frame 2
//! remove 0
//! set 7 8 9 9 9 10 10
//! ```
//!
//! - `box <min> <max> [fixed] [layer L] [group G]`: an object present at the start. Box lines
//!   come before the first `frame` and get the ids 0, 1, 2... in order.
//! - `frame`: starts the next frame (1, 2, ...). The run replays exactly the frames written:
//!   `--frames` defaults to their number and may ask for fewer, never more.
//! - `set <id> <min> <max>`: the object's new box.
//! - `insert <id> <min> <max> [fixed] [layer L] [group G]`: an object arrives. The id is any
//!   whole number from 0 to 4294967295 not in use at the time; an id removed earlier may come
//!   back (it is the same object arriving again, as in the `churn` scene).
//! - `remove <id>`: the object leaves.
//!
//! Within a frame the lines take effect in order, and the frame is handed to the broad phase
//! as one batch of removals, arrivals and moves: an object removed and inserted again in one
//! frame leaves and arrives, and of several `set`s of one object the last counts. Objects are
//! dynamic unless marked `fixed`; `dynamic` may be written too. A header `bplab-scene 1` may
//! open a version 1 file.
//!
//! Every number must be finite, every box must have `min <= max`, layers are `0..64`, groups
//! are `u32`s, an id must name an object present at the time (`set`, `remove`) or one that is
//! not (`insert`), and a file holds at most [`MAX_OBJECTS`] distinct objects: anything else is
//! an error naming the line. [`write()`] writes a [`SceneFile`] back in the same format, and
//! [`record`] records a generated scene as a version 2 file.

use std::collections::HashMap;
use std::fmt;

use broadphase::{Aabb, Group, Layer, Mobility, ProxyDesc};

use crate::scenes::{Frame, Scene, SceneKind};

/// The format in brief, as `bplab list` prints it.
pub const SYNTAX: &str = "\
version 1 (no header): one object per line, # comments; objects with a velocity drift
  box <min x y z> <max x y z> [fixed] [layer L] [group G] [velocity vx vy vz]
version 2 (a trace): a header, the start's boxes (ids 0, 1, 2...), then frames
  bplab-scene 2
  box <min x y z> <max x y z> [fixed] [layer L] [group G]
  frame                                    starts frame 1, 2, ...
  set <id> <min x y z> <max x y z>         the object's new box
  insert <id> <min x y z> <max x y z> [fixed] [layer L] [group G]
                                           an object arrives (an unused or removed id)
  remove <id>                              the object leaves
  `bplab run --scene-file F` replays every frame (--frames may ask for fewer);
  `bplab record` writes a generated scene as a trace
";

/// The newest format version this lab reads and writes.
pub const VERSION: u32 = 2;

/// The word that opens a file's header line, `bplab-scene <version>`.
pub const HEADER: &str = "bplab-scene";

/// One object of a scene file's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileObject {
    /// Its box at frame 0.
    pub aabb: Aabb,
    /// Its mobility, layer and group.
    pub desc: ProxyDesc,
    /// How far it moves each frame (version 1 only; zero in version 2).
    pub velocity: [f32; 3],
}

/// What one frame of a trace does, to objects named by their index in the scene (see
/// [`SceneFile::ids`]). Each list is sorted by index; an object both removed and added left
/// and arrived again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceFrame {
    /// Objects that leave.
    pub removed: Vec<u32>,
    /// Objects that arrive, with their box and description.
    pub added: Vec<(u32, Aabb, ProxyDesc)>,
    /// Objects that stay and move, with their new box.
    pub moved: Vec<(u32, Aabb)>,
}

impl TraceFrame {
    /// The frame as a scene step, ready for a broad phase.
    pub fn to_frame(&self) -> Frame {
        Frame {
            moved: self.moved.clone(),
            removed: self.removed.clone(),
            added: self.added.clone(),
        }
    }
}

/// A scene file: its objects at the start and, in version 2, its frames.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneFile {
    /// The format version: 1 for a file without a header.
    pub version: u32,
    /// The objects present at the start, in file order: object `i` has id `i`.
    pub objects: Vec<FileObject>,
    /// Version 2's frames, in order (empty in version 1).
    pub frames: Vec<TraceFrame>,
    /// The file's id of each scene object: first the start's `0..objects.len()`, then each id
    /// an `insert` names for the first time, in file order. Frames name objects by their index
    /// here, so that an id coming back is the same object.
    pub ids: Vec<u32>,
}

impl Default for SceneFile {
    fn default() -> Self {
        Self {
            version: 1,
            objects: Vec::new(),
            frames: Vec::new(),
            ids: Vec::new(),
        }
    }
}

impl SceneFile {
    /// Whether the file lists its frames (version 2) rather than stepping velocities.
    pub fn is_trace(&self) -> bool {
        self.version >= 2
    }

    /// The number of distinct objects over the whole file: the scene's index range.
    pub fn object_count(&self) -> usize {
        self.ids.len()
    }
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

/// The most distinct objects a file may hold (the library's proxy limit).
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

/// A valid box: `<min x y z> <max x y z>`.
fn aabb<'a>(tokens: &mut impl Iterator<Item = &'a str>) -> Result<Aabb, String> {
    let min = three(tokens, "min")?;
    let max = three(tokens, "max")?;
    let aabb = Aabb::new(min, max);
    aabb.validate().map_err(|e| e.to_string())?;
    Ok(aabb)
}

/// An object id: any `u32`.
fn id(token: Option<&str>) -> Result<u32, String> {
    let token = token.ok_or("missing id")?;
    token
        .parse()
        .map_err(|_| format!("id {token:?} is not a whole number from 0 to {}", u32::MAX))
}

/// The options after a box: mobility, layer, group and (where `velocity` is given somewhere
/// to put it) a velocity.
fn options<'a>(
    tokens: &mut impl Iterator<Item = &'a str>,
    desc: &mut ProxyDesc,
    mut velocity: Option<&mut [f32; 3]>,
) -> Result<(), String> {
    while let Some(word) = tokens.next() {
        match word {
            "fixed" => desc.mobility = Mobility::Fixed,
            "dynamic" => desc.mobility = Mobility::Dynamic,
            "layer" => {
                let t = tokens.next().ok_or("missing layer")?;
                let layer: u8 = t
                    .parse()
                    .ok()
                    .filter(|l| usize::from(*l) < Layer::COUNT)
                    .ok_or_else(|| format!("layer {t:?} is not in 0..64"))?;
                desc.layer = Layer(layer);
            }
            "group" => {
                let t = tokens.next().ok_or("missing group")?;
                let group: u32 = t.parse().map_err(|_| format!("group {t:?} is not a u32"))?;
                desc.group = Group(group);
            }
            "velocity" => match velocity.as_deref_mut() {
                Some(v) => *v = three(tokens, "velocity")?,
                None => {
                    return Err("velocity belongs to version 1; in a version 2 file `set` \
                                lines move the boxes"
                        .to_string())
                }
            },
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(())
}

/// Where an object of a trace stands while the file is read.
#[derive(Clone, Copy, Debug)]
struct Track {
    /// Present now.
    live: bool,
    /// The line that last inserted or removed it (or gave its box line).
    since: usize,
    aabb: Aabb,
    desc: ProxyDesc,
    /// The frame in which it was last touched; the fields below are that frame's.
    frame: usize,
    /// Present when that frame started.
    was_live: bool,
    /// Removed during that frame.
    left: bool,
    /// Given a new box during that frame.
    moved: bool,
}

/// The reader's state.
struct Reader {
    file: SceneFile,
    /// Whether a statement has been read: the header must come before any.
    started: bool,
    /// Scene index of each file id.
    index: HashMap<u32, u32>,
    tracks: Vec<Track>,
    /// Objects touched in the current frame.
    touched: Vec<u32>,
}

impl Reader {
    fn new() -> Self {
        Self {
            file: SceneFile::default(),
            started: false,
            index: HashMap::new(),
            tracks: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// The current frame's number: 0 before the first `frame` line.
    fn frame(&self) -> usize {
        self.file.frames.len()
    }

    fn line(&mut self, line: &str, number: usize) -> Result<(), String> {
        let line = line.split('#').next().unwrap_or("");
        let mut tokens = line.split_whitespace();
        let Some(keyword) = tokens.next() else {
            return Ok(());
        };
        let first = !std::mem::replace(&mut self.started, true);
        match keyword {
            HEADER if first => self.header(&mut tokens)?,
            HEADER => return Err(format!("the {HEADER} header must be the first statement")),
            "box" if self.frame() > 0 => {
                return Err("box lines come before the first frame; use insert".to_string())
            }
            "box" => self.start_box(&mut tokens, number)?,
            "frame" | "set" | "insert" | "remove" if !self.file.is_trace() => {
                return Err(format!(
                    "{keyword:?} needs a version 2 file: begin it with `{HEADER} 2`"
                ))
            }
            "frame" => self.next_frame(),
            "set" | "insert" | "remove" if self.frame() == 0 => {
                return Err(format!(
                    "{keyword:?} outside a frame: write a `frame` line before it"
                ))
            }
            "set" => self.set(&mut tokens)?,
            "insert" => self.insert(&mut tokens, number)?,
            "remove" => self.remove(&mut tokens, number)?,
            other => {
                return Err(format!(
                    "unknown keyword {other:?} (expected box, frame, set, insert or remove)"
                ))
            }
        }
        match tokens.next() {
            Some(extra) => Err(format!("unexpected {extra:?} at the end of the line")),
            None => Ok(()),
        }
    }

    fn header<'a>(&mut self, tokens: &mut impl Iterator<Item = &'a str>) -> Result<(), String> {
        let t = tokens.next().ok_or("missing version after the header")?;
        match t.parse::<u32>() {
            Ok(v @ 1..=VERSION) => {
                self.file.version = v;
                Ok(())
            }
            _ => Err(format!(
                "version {t:?} is not supported (this bplab reads versions 1 to {VERSION})"
            )),
        }
    }

    fn start_box<'a>(
        &mut self,
        tokens: &mut impl Iterator<Item = &'a str>,
        line: usize,
    ) -> Result<(), String> {
        let mut object = FileObject {
            aabb: aabb(tokens)?,
            desc: ProxyDesc::dynamic(),
            velocity: [0.0; 3],
        };
        let velocity = (!self.file.is_trace()).then_some(&mut object.velocity);
        options(tokens, &mut object.desc, velocity)?;
        let id = u32::try_from(self.file.objects.len()).map_err(|_| too_many())?;
        self.new_object(id, object.aabb, object.desc, line)?;
        self.file.objects.push(object);
        Ok(())
    }

    /// Gives file id `id` the next scene index, present from `line`.
    fn new_object(
        &mut self,
        id: u32,
        aabb: Aabb,
        desc: ProxyDesc,
        line: usize,
    ) -> Result<u32, String> {
        if self.tracks.len() >= MAX_OBJECTS {
            return Err(too_many());
        }
        let i = self.tracks.len() as u32;
        self.index.insert(id, i);
        self.file.ids.push(id);
        self.tracks.push(Track {
            live: true,
            since: line,
            aabb,
            desc,
            frame: self.frame(),
            was_live: false,
            left: false,
            moved: false,
        });
        Ok(i)
    }

    /// The object `id` names, noted as touched in this frame.
    fn touch(&mut self, id: u32) -> Option<&mut Track> {
        let i = *self.index.get(&id)?;
        let frame = self.frame();
        let t = &mut self.tracks[i as usize];
        if t.frame != frame {
            *t = Track {
                frame,
                was_live: t.live,
                left: false,
                moved: false,
                ..*t
            };
            self.touched.push(i);
        }
        Some(t)
    }

    /// The live object `id` names, for `what` (`set`, `remove`).
    fn live<'a>(
        &mut self,
        tokens: &mut impl Iterator<Item = &'a str>,
        what: &str,
    ) -> Result<&mut Track, String> {
        let id = id(tokens.next())?;
        let t = self.touch(id).ok_or_else(|| {
            format!("unknown id {id}: no box or insert line before this one gives it")
        })?;
        if t.live {
            Ok(t)
        } else if what == "remove" {
            Err(format!(
                "id {id} is removed twice (first at line {})",
                t.since
            ))
        } else {
            Err(format!(
                "cannot {what} id {id}: it was removed at line {}",
                t.since
            ))
        }
    }

    fn set<'a>(&mut self, tokens: &mut impl Iterator<Item = &'a str>) -> Result<(), String> {
        let t = self.live(tokens, "set")?;
        t.aabb = aabb(tokens)?;
        t.moved = true;
        Ok(())
    }

    fn remove<'a>(
        &mut self,
        tokens: &mut impl Iterator<Item = &'a str>,
        line: usize,
    ) -> Result<(), String> {
        let t = self.live(tokens, "remove")?;
        t.live = false;
        t.left = true;
        t.since = line;
        Ok(())
    }

    fn insert<'a>(
        &mut self,
        tokens: &mut impl Iterator<Item = &'a str>,
        line: usize,
    ) -> Result<(), String> {
        let id = id(tokens.next())?;
        let aabb = aabb(tokens)?;
        let mut desc = ProxyDesc::dynamic();
        options(tokens, &mut desc, None)?;
        match self.touch(id) {
            Some(t) if t.live => Err(format!(
                "id {id} is already in use (since line {}): remove it first",
                t.since
            )),
            Some(t) => {
                *t = Track {
                    live: true,
                    since: line,
                    aabb,
                    desc,
                    ..*t
                };
                Ok(())
            }
            None => {
                let i = self.new_object(id, aabb, desc, line)?;
                self.touched.push(i);
                Ok(())
            }
        }
    }

    /// Closes the current frame (if any) and opens the next.
    fn next_frame(&mut self) {
        self.close_frame();
        self.file.frames.push(TraceFrame::default());
    }

    /// Turns the objects touched in the current frame into its lists.
    fn close_frame(&mut self) {
        let Some(frame) = self.file.frames.last_mut() else {
            return;
        };
        self.touched.sort_unstable();
        for &i in &self.touched {
            let t = &self.tracks[i as usize];
            if t.was_live && t.left {
                frame.removed.push(i);
            }
            if t.live && (t.left || !t.was_live) {
                frame.added.push((i, t.aabb, t.desc));
            } else if t.live && t.moved {
                frame.moved.push((i, t.aabb));
            }
        }
        self.touched.clear();
    }
}

fn too_many() -> String {
    format!("more than {MAX_OBJECTS} objects")
}

/// Parses a scene file of either version.
///
/// # Errors
/// The first bad line, with what is wrong with it.
pub fn parse(text: &str) -> Result<SceneFile, SceneFileError> {
    let mut reader = Reader::new();
    for (i, line) in text.lines().enumerate() {
        reader.line(line, i + 1).map_err(|message| SceneFileError {
            line: i + 1,
            message,
        })?;
    }
    reader.close_frame();
    Ok(reader.file)
}

/// Appends ` fixed`, ` layer L`, ` group G` where `desc` differs from a plain dynamic box.
/// (`user_data` is not part of the format.)
fn write_desc(out: &mut String, desc: &ProxyDesc) {
    if desc.mobility == Mobility::Fixed {
        out.push_str(" fixed");
    }
    if desc.layer != Layer::default() {
        out.push_str(&format!(" layer {}", desc.layer.0));
    }
    if desc.group != Group::NONE {
        out.push_str(&format!(" group {}", desc.group.0));
    }
}

/// Appends ` <min x y z> <max x y z>`. Rust prints the shortest text that parses back to the
/// same `f32`, so a written file replays bit for bit.
fn write_aabb(out: &mut String, aabb: &Aabb) {
    for v in aabb.min.iter().chain(&aabb.max) {
        out.push_str(&format!(" {v}"));
    }
}

/// Writes `file` in its version's format; [`parse`] reads it back equal (but for objects that
/// arrive and leave within one frame: they leave no line, so no index either).
pub fn write(file: &SceneFile) -> String {
    let mut out = format!("{HEADER} {}\n", file.version);
    for o in &file.objects {
        out.push_str("box");
        write_aabb(&mut out, &o.aabb);
        write_desc(&mut out, &o.desc);
        if o.velocity != [0.0; 3] {
            let [x, y, z] = o.velocity;
            out.push_str(&format!(" velocity {x} {y} {z}"));
        }
        out.push('\n');
    }
    for (n, frame) in file.frames.iter().enumerate() {
        out.push_str(&format!("frame  # {}\n", n + 1));
        let id = |i: u32| file.ids[i as usize];
        for &i in &frame.removed {
            out.push_str(&format!("remove {}\n", id(i)));
        }
        for (i, aabb, desc) in &frame.added {
            out.push_str(&format!("insert {}", id(*i)));
            write_aabb(&mut out, aabb);
            write_desc(&mut out, desc);
            out.push('\n');
        }
        for (i, aabb) in &frame.moved {
            out.push_str(&format!("set {}", id(*i)));
            write_aabb(&mut out, aabb);
            out.push('\n');
        }
    }
    out
}

/// Records `frames` frames of the generated scene `kind` (`n` objects, `seed`) as a version 2
/// file: replayed, it hands a broad phase the same boxes as the scene. Object `i` of the scene
/// has id `i`.
pub fn record(kind: SceneKind, n: usize, seed: u64, frames: usize) -> SceneFile {
    let mut scene = Scene::new(kind, n, seed);
    let objects = scene
        .initial()
        .into_iter()
        .map(|(aabb, desc)| FileObject {
            aabb,
            desc,
            velocity: [0.0; 3],
        })
        .collect();
    let frames = (0..frames)
        .map(|_| {
            let f = scene.step();
            let mut t = TraceFrame {
                removed: f.removed,
                added: f.added,
                moved: f.moved,
            };
            // The canonical order `parse` gives, so that a recording reads back equal.
            t.removed.sort_unstable();
            t.added.sort_unstable_by_key(|a| a.0);
            t.moved.sort_unstable_by_key(|m| m.0);
            t
        })
        .collect();
    SceneFile {
        version: VERSION,
        objects,
        frames,
        ids: (0..scene.len() as u32).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let text = "# a comment\nbox 0 0 0 1 1 1\n\nbox 0.5 0.5 0.5 2 2 2 fixed layer 1  # trailing\nbox 3 0 0 4 1 1 velocity 0.1 0 0 group 7\n";
        let f = parse(text).unwrap();
        assert_eq!(f.version, 1);
        assert_eq!(f.objects.len(), 3);
        assert_eq!(f.objects[1].desc.mobility, Mobility::Fixed);
        assert_eq!(f.objects[1].desc.layer, Layer(1));
        assert_eq!(f.objects[2].velocity, [0.1, 0.0, 0.0]);
        assert_eq!(f.objects[2].desc.group, Group(7));
        assert_eq!(f.ids, vec![0, 1, 2]);
        assert!(f.frames.is_empty() && !f.is_trace());
    }

    const TRACE: &str = "bplab-scene 2
box 0 0 0 1 1 1            # id 0
box 3 0 0 4 1 1            # id 1
frame                      # frame 1
set 1 2.5 0 0 3.5 1 1      # id 1's new box
insert 7 9 9 9 10 10 10 fixed layer 2
frame                      # frame 2
remove 0
set 7 8 9 9 9 10 10
";

    fn b(min: f32, max: f32) -> Aabb {
        Aabb::new([min; 3], [max; 3])
    }

    #[test]
    fn parses_the_documented_trace() {
        let f = parse(TRACE).unwrap();
        assert_eq!((f.version, f.objects.len(), f.frames.len()), (2, 2, 2));
        assert_eq!(f.ids, vec![0, 1, 7]);
        let fixed = ProxyDesc::fixed().with_layer(Layer(2));
        assert_eq!(
            f.frames[0],
            TraceFrame {
                removed: vec![],
                added: vec![(2, b(9.0, 10.0), fixed)],
                moved: vec![(1, Aabb::new([2.5, 0.0, 0.0], [3.5, 1.0, 1.0]))],
            }
        );
        assert_eq!(
            f.frames[1],
            TraceFrame {
                removed: vec![0],
                added: vec![],
                moved: vec![(2, Aabb::new([8.0, 9.0, 9.0], [9.0, 10.0, 10.0]))],
            }
        );
    }

    #[test]
    fn a_frame_is_its_net_effect() {
        let text = "bplab-scene 2\nbox 0 0 0 1 1 1\nbox 5 5 5 6 6 6\nframe
set 0 1 1 1 2 2 2\nset 0 2 2 2 3 3 3
remove 1\ninsert 1 7 7 7 8 8 8\nset 1 8 8 8 9 9 9
insert 4 0 0 0 1 1 1\nremove 4
insert 5 0 0 0 1 1 1 group 3\nset 5 1 1 1 2 2 2\n";
        let f = parse(text).unwrap();
        // Id 4 came and went within the frame: it still has an index, but no event.
        assert_eq!(f.ids, vec![0, 1, 4, 5]);
        let g = ProxyDesc::dynamic().with_group(Group(3));
        assert_eq!(
            f.frames[0],
            TraceFrame {
                removed: vec![1],
                added: vec![(1, b(8.0, 9.0), ProxyDesc::dynamic()), (3, b(1.0, 2.0), g)],
                moved: vec![(0, b(2.0, 3.0))],
            }
        );
    }

    #[test]
    fn writing_and_parsing_round_trips() {
        let documented = parse(TRACE).unwrap();
        let v1 =
            parse("box 0 0 0 1 1 1 fixed group 4 layer 9\nbox 1 2 3 4 5 6 velocity 0.1 -2 1e-7\n")
                .unwrap();
        for kind in [
            SceneKind::Churn,
            SceneKind::StaticWorld,
            SceneKind::Sleeping,
        ] {
            let recorded = record(kind, 300, 4, 5);
            assert_eq!(parse(&write(&recorded)).unwrap(), recorded, "{kind}");
        }
        for file in [documented, v1] {
            let text = write(&file);
            assert_eq!(parse(&text).unwrap(), file, "{text}");
        }
    }

    #[test]
    fn a_recording_replays_the_scene() {
        let recorded = record(SceneKind::Churn, 200, 9, 3);
        let mut scene = Scene::new(SceneKind::Churn, 200, 9);
        let start: Vec<_> = recorded.objects.iter().map(|o| (o.aabb, o.desc)).collect();
        assert_eq!(start, scene.initial());
        for frame in &recorded.frames {
            let mut want = scene.step();
            want.removed.sort_unstable();
            want.added.sort_unstable_by_key(|a| a.0);
            assert_eq!(frame.removed, want.removed);
            assert_eq!(frame.added, want.added);
            assert_eq!(frame.moved, want.moved);
            assert!(!frame.removed.is_empty());
        }
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, needle) in [
            ("box 0 0 0 1 1", 1, "missing max z"),
            ("\nbox 0 0 0 1 1 NaN", 2, "not finite"),
            ("box 0 0 0 1 1 inf", 1, "not finite"),
            ("box 2 0 0 1 1 1", 1, "min > max"),
            ("box 0 0 0 1 1 1 layer 64", 1, "0..64"),
            ("box 0 0 0 1 1 1 group -1", 1, "not a u32"),
            ("sphere 0 0 0 1", 1, "unknown keyword"),
            ("box 0 0 0 1 1 1 wobble", 1, "unknown option"),
            ("box 0 0 0 1 1 1 velocity 1 2", 1, "missing velocity z"),
            // Versions and where things may stand.
            ("bplab-scene 3\n", 1, "version \"3\" is not supported"),
            ("bplab-scene two\n", 1, "not supported"),
            ("bplab-scene\n", 1, "missing version"),
            (
                "# hi\nbox 0 0 0 1 1 1\nbplab-scene 2",
                3,
                "must be the first",
            ),
            ("bplab-scene 2 3", 1, "unexpected \"3\""),
            ("box 0 0 0 1 1 1\nframe", 2, "needs a version 2 file"),
            (
                "bplab-scene 1\nset 0 0 0 0 1 1 1",
                2,
                "needs a version 2 file",
            ),
            ("bplab-scene 2\nset 0 0 0 0 1 1 1", 2, "outside a frame"),
            (
                "bplab-scene 2\nframe\nbox 0 0 0 1 1 1",
                3,
                "before the first frame",
            ),
            ("bplab-scene 2\nframe 3", 2, "unexpected \"3\""),
            ("bplab-scene 2\nframe\nteleport 0", 3, "unknown keyword"),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1 velocity 1 0 0",
                2,
                "velocity belongs to version 1",
            ),
            // Ids.
            ("bplab-scene 2\nframe\nset 3 0 0 0 1 1 1", 3, "unknown id 3"),
            ("bplab-scene 2\nframe\nremove 0", 3, "unknown id 0"),
            (
                "bplab-scene 2\nframe\nremove x",
                3,
                "id \"x\" is not a whole number",
            ),
            ("bplab-scene 2\nframe\nremove -1", 3, "not a whole number"),
            ("bplab-scene 2\nframe\nremove", 3, "missing id"),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nremove 0\nframe\nremove 0",
                6,
                "id 0 is removed twice (first at line 4)",
            ),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nremove 0\nremove 0",
                5,
                "removed twice",
            ),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nremove 0\nset 0 0 0 0 1 1 1",
                5,
                "cannot set id 0: it was removed at line 4",
            ),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\ninsert 0 0 0 0 1 1 1",
                4,
                "id 0 is already in use (since line 2)",
            ),
            (
                "bplab-scene 2\nframe\ninsert 9 0 0 0 1 1 1\nframe\ninsert 9 0 0 0 1 1 1",
                5,
                "already in use (since line 3)",
            ),
            // Boxes of frames.
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nset 0 0 0 0 1 1 nan",
                4,
                "not finite",
            ),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nset 0 0 0 0 1 -1 1",
                4,
                "min > max",
            ),
            (
                "bplab-scene 2\nframe\ninsert 1 0 0 0 1 1 1 layer 99",
                3,
                "0..64",
            ),
            (
                "bplab-scene 2\nframe\ninsert 1 0 0 0 1 1 1 velocity 1 0 0",
                3,
                "version 1",
            ),
            (
                "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nset 0 0 0 0 1 1 1 fixed",
                4,
                "unexpected",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn an_id_may_come_back_after_it_left() {
        let text = "bplab-scene 2\nbox 0 0 0 1 1 1\nframe\nremove 0\nframe\ninsert 0 2 2 2 3 3 3\n";
        let f = parse(text).unwrap();
        assert_eq!(f.ids, vec![0]);
        assert_eq!(f.frames[0].removed, vec![0]);
        assert_eq!(
            f.frames[1].added,
            vec![(0, b(2.0, 3.0), ProxyDesc::dynamic())]
        );
    }
}
