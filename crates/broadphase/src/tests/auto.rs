//! Auto against the oracle: as it chooses, and with switches forced mid-sequence (a pin to
//! another algorithm every few updates), so that the suite sees builds from the store at
//! every kind of update, and queries and pairs between a switch and the update after.

use broadphase::{testing, Algorithm, Auto, AutoSettings, BroadPhase, Config, Error, PairEvents};

#[test]
fn auto_matches_brute_force() {
    testing::check_algorithm(|| broadphase::new(Algorithm::Auto, Config::default()));
}

/// Settings that switch as often as the rules allow: every new choice taken at once, and built
/// in the background (on another thread, caught up `build_updates` later) from `background`
/// proxies up.
fn eager(background: usize, build_updates: u32) -> AutoSettings {
    let mut settings = AutoSettings::default();
    settings.hold = 1;
    settings.background_from = background;
    settings.build_updates = build_updates;
    settings
}

#[test]
fn auto_with_no_hold_matches_brute_force() {
    testing::check_algorithm_with(
        || Box::new(Auto::with_settings(Config::default(), eager(usize::MAX, 1))),
        &testing::CheckOptions::scaled(150, 60, 4),
    );
}

#[test]
fn auto_building_in_the_background_matches_brute_force() {
    // Every switch built from a snapshot on another thread and put in one, two, four or eight
    // updates after it (sent the changes two updates after the snapshot; after four and
    // six), through removals, arrivals, reused slots, rule changes and queries.
    for build_updates in [1, 2, 4, 8] {
        testing::check_algorithm_with(
            || {
                Box::new(Auto::with_settings(
                    Config::default(),
                    eager(0, build_updates),
                ))
            },
            &testing::CheckOptions::scaled(150, 60, 4),
        );
    }
}

/// Auto pinned to the next algorithm after every `every` updates, and unpinned between.
struct Switching {
    inner: Auto,
    every: usize,
    updates: usize,
}

impl BroadPhase for Switching {
    forward_all_but_update!(inner);

    fn update(&mut self) -> Result<&PairEvents, Error> {
        self.updates += 1;
        if self.updates.is_multiple_of(self.every) {
            let k = self.updates / self.every;
            // Every algorithm in turn, and every fourth time back to choosing.
            let next = (!k.is_multiple_of(4))
                .then(|| Algorithm::ALL[k % Algorithm::ALL.len()])
                .filter(|&a| a != Algorithm::Auto);
            self.inner.pin(next)?;
        }
        self.inner.update()
    }
}

#[test]
fn auto_switched_mid_sequence_matches_brute_force() {
    for every in [1, 2, 3] {
        for background in [usize::MAX, 0] {
            testing::check_algorithm_with(
                || {
                    Box::new(Switching {
                        inner: Auto::with_settings(Config::default(), eager(background, 2)),
                        every,
                        updates: 0,
                    })
                },
                &testing::CheckOptions::scaled(150, 60, 4),
            );
        }
    }
}
