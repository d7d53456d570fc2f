//! Random call sequences, decoded from the fuzzer's bytes, on every algorithm against
//! `BruteForce`: the shared differential suite's replay (`testing::check_sequence`), which also
//! checks errors, queries and determinism on one thread.
#![no_main]

use broadphase::testing::{check_sequence, BadBox, Op, Pick, Query};
use broadphase::{
    Aabb, Abp, AbpSettings, Algorithm, BroadPhase, Config, Group, Layer, LayerMask, Mobility, Obb,
    ProxyDesc, Ray,
};
use libfuzzer_sys::fuzz_target;

/// Reads values off the fuzzer's bytes; `None` once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn f32_raw(&mut self) -> Option<f32> {
        let b = [self.u8()?, self.u8()?, self.u8()?, self.u8()?];
        Some(f32::from_le_bytes(b))
    }

    /// Mostly a half-unit lattice (exact contacts are common), sometimes any float at all.
    fn coord(&mut self) -> Option<f32> {
        match self.u8()? {
            255 => self.f32_raw(),
            b => Some(f32::from(b as i8) * 0.5),
        }
    }

    fn point(&mut self) -> Option<[f32; 3]> {
        Some([self.coord()?, self.coord()?, self.coord()?])
    }

    fn aabb(&mut self) -> Option<Aabb> {
        let min = self.point()?;
        let size = [self.u8()?, self.u8()?, self.u8()?].map(|s| f32::from(s % 6) * 0.5);
        Some(Aabb::new(min, std::array::from_fn(|i| min[i] + size[i])))
    }

    fn desc(&mut self) -> Option<ProxyDesc> {
        let b = self.u8()?;
        Some(ProxyDesc {
            mobility: if b & 1 == 0 {
                Mobility::Dynamic
            } else {
                Mobility::Fixed
            },
            layer: Layer((b >> 1) & 3),
            group: Group(u32::from(b >> 6)),
            user_data: u64::from(b),
        })
    }

    fn pick(&mut self) -> Option<Pick> {
        Some(Pick(usize::from(self.u8()?)))
    }

    fn mask(&mut self) -> Option<LayerMask> {
        Some(match self.u8()? {
            0..=127 => LayerMask::ALL,
            b => LayerMask(u64::from(b & 15)),
        })
    }

    /// A small move, as a simulation's.
    fn offset(&mut self) -> Option<[f32; 3]> {
        Some([self.coord()?, self.coord()?, self.coord()?].map(|c| c.clamp(-2.0, 2.0)))
    }

    fn bad(&mut self) -> Option<BadBox> {
        Some(
            [
                BadBox::Nan,
                BadBox::PosInf,
                BadBox::NegInf,
                BadBox::Inverted,
            ][usize::from(self.u8()? % 4)],
        )
    }

    fn query(&mut self) -> Option<Query> {
        Some(match self.u8()? % 8 {
            0 => Query::Aabb(self.aabb()?, self.mask()?),
            1 => Query::Point(self.point()?, self.mask()?),
            2 => Query::Sphere(self.point()?, self.coord()?, self.mask()?),
            3 => Query::Obb(
                Obb {
                    center: self.point()?,
                    half_extents: self.point()?,
                    rotation: [self.coord()?, self.coord()?, self.coord()?, self.coord()?],
                },
                self.mask()?,
            ),
            4 => Query::Ray(
                Ray::new(self.point()?, self.point()?),
                self.coord()?.abs() * 4.0,
                self.mask()?,
            ),
            5 => Query::BoxCast(self.aabb()?, self.point()?, self.mask()?),
            6 => Query::Nearest(self.point()?, usize::from(self.u8()? % 8), self.mask()?),
            _ => Query::FirstHit(self.aabb()?),
        })
    }

    fn op(&mut self) -> Option<Op> {
        Some(match self.u8()? % 20 {
            0..=3 => Op::Insert(self.aabb()?, self.desc()?),
            4 => {
                let n = self.u8()? % 12;
                let mut items = Vec::new();
                for _ in 0..n {
                    items.push((self.aabb()?, self.desc()?));
                }
                Op::InsertBatch(items)
            }
            5 => Op::InsertDuplicate(self.pick()?, self.desc()?),
            6 | 7 => Op::SetAabb(self.pick()?, self.aabb()?),
            8 => match self.u8()? % 4 {
                0 => {
                    let n = self.u8()? % 12;
                    let mut moves = Vec::new();
                    for _ in 0..n {
                        moves.push((self.pick()?, self.offset()?));
                    }
                    let bad = match self.u8()? % 4 {
                        0 => Some((
                            usize::from(self.u8()?),
                            self.bad()?,
                            usize::from(self.u8()? % 3),
                        )),
                        _ => None,
                    };
                    Op::NudgeMany(moves, bad)
                }
                _ => Op::Nudge(self.pick()?, self.offset()?),
            },
            9 => Op::SetDesc(self.pick()?, self.desc()?),
            10 => match self.u8()? % 4 {
                0 => {
                    let n = self.u8()? % 12;
                    let mut picks = Vec::new();
                    for _ in 0..n {
                        picks.push(self.pick()?);
                    }
                    let stale = match self.u8()? % 4 {
                        0 => Some(self.pick()?),
                        _ => None,
                    };
                    Op::RemoveMany(picks, stale)
                }
                _ => Op::Remove(self.pick()?),
            },
            11 => Op::SetLayersCollide(
                Layer(self.u8()? % 4),
                Layer(self.u8()? % 4),
                self.u8()? & 1 == 0,
            ),
            12 => Op::ShiftOrigin(self.point()?),
            13 | 14 => Op::Update,
            15 => Op::InsertBad(self.bad()?, usize::from(self.u8()? % 3)),
            16 => match self.u8()? % 4 {
                0 => Op::SetAabbBad(self.pick()?, self.bad()?, usize::from(self.u8()? % 3)),
                1 => Op::RemoveTwice(self.pick()?),
                2 => Op::UseStale(self.pick()?),
                _ => Op::UseForeign(self.pick()?),
            },
            17 => Op::BadLayer(self.pick()?, 64 + self.u8()? % 100),
            18 => Op::BadShift(usize::from(self.u8()? % 6)),
            _ => Op::Query(self.query()?),
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let Some(choice) = bytes.u8() else { return };
    let mut ops = Vec::new();
    while let Some(op) = bytes.op() {
        ops.push(op);
    }
    ops.push(Op::Update);
    // The algorithms of this build, and Abp with columns of two boxes (every box straddles).
    let algorithms: Vec<Algorithm> = Algorithm::ALL
        .iter()
        .copied()
        .filter(|&a| a != Algorithm::BruteForce)
        .collect();
    let k = usize::from(choice) % (algorithms.len() + 1);
    let result = if k == algorithms.len() {
        let settings = {
            let mut s = AbpSettings::default();
            s.boxes_per_column = 2;
            s.min_column_extents = 0.0;
            s.min_proxies_for_columns = 0;
            s
        };
        check_sequence(
            &|| -> Box<dyn BroadPhase> {
                match Abp::with_settings(Config::default(), settings) {
                    Ok(abp) => Box::new(abp),
                    Err(e) => panic!("valid settings rejected: {e}"),
                }
            },
            &ops,
        )
    } else {
        let algorithm = algorithms[k];
        check_sequence(&|| broadphase::new(algorithm, Config::default()), &ops)
    };
    if let Err(e) = result {
        panic!("{e}\nops: {ops:#?}");
    }
});
