//! The flag store: a handful of boolean flags, a version counter, and a broadcast of changes
//! that SSE streams forward to their clients.

use std::collections::BTreeMap;
use std::sync::RwLock;

use rand::Rng;
use serde::Serialize;
use tokio::sync::broadcast;

/// Flags the store starts with; any other key resolves to a stable default.
pub const SEEDED_FLAGS: [&str; 4] = ["demo", "checkout", "new-ui", "search-v2"];

/// One flag as the API returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    pub key: String,
    pub enabled: bool,
    /// Store version at which this value was last set (0 = default, never changed).
    pub version: u64,
}

/// All flags plus a change feed.
#[derive(Debug)]
pub struct FlagStore {
    flags: RwLock<BTreeMap<String, Flag>>,
    changes: broadcast::Sender<Flag>,
}

impl Default for FlagStore {
    fn default() -> Self {
        Self::new()
    }
}

impl FlagStore {
    pub fn new() -> Self {
        let flags = SEEDED_FLAGS
            .iter()
            .map(|k| {
                let flag = Flag {
                    key: k.to_string(),
                    enabled: default_value(k),
                    version: 0,
                };
                (k.to_string(), flag)
            })
            .collect();
        let (changes, _) = broadcast::channel(256);
        Self {
            flags: RwLock::new(flags),
            changes,
        }
    }

    /// The flag's current value; unknown keys get a stable default derived from the key.
    pub fn get(&self, key: &str) -> Flag {
        let flags = self.flags.read().unwrap_or_else(|e| e.into_inner());
        flags.get(key).cloned().unwrap_or_else(|| Flag {
            key: key.to_string(),
            enabled: default_value(key),
            version: 0,
        })
    }

    /// Flips one seeded flag chosen by `rng`, and tells every subscriber.
    pub fn flip_random(&self, rng: &mut impl Rng) -> Flag {
        let key = SEEDED_FLAGS[rng.random_range(0..SEEDED_FLAGS.len())];
        let changed = {
            let mut flags = self.flags.write().unwrap_or_else(|e| e.into_inner());
            let version = flags.values().map(|f| f.version).max().unwrap_or(0) + 1;
            let flag = flags.get_mut(key).expect("seeded flags are always present");
            flag.enabled = !flag.enabled;
            flag.version = version;
            flag.clone()
        };
        // No subscriber is not an error: nobody is streaming right now.
        let _ = self.changes.send(changed.clone());
        changed
    }

    /// A receiver of every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Flag> {
        self.changes.subscribe()
    }

    /// Snapshot of the seeded flags, for a new stream's first event.
    pub fn snapshot(&self) -> Vec<Flag> {
        let flags = self.flags.read().unwrap_or_else(|e| e.into_inner());
        flags.values().cloned().collect()
    }
}

fn default_value(key: &str) -> bool {
    key.bytes()
        .fold(0u32, |acc, b| acc.wrapping_add(u32::from(b)))
        % 2
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn unknown_keys_are_stable_and_flips_are_broadcast() {
        let store = FlagStore::new();
        assert_eq!(store.get("anything"), store.get("anything"));
        let mut rx = store.subscribe();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let first = store.flip_random(&mut rng);
        let second = store.flip_random(&mut rng);
        assert_eq!(first.version, 1);
        assert_eq!(second.version, 2);
        assert_eq!(rx.try_recv().unwrap(), first);
        assert_eq!(rx.try_recv().unwrap(), second);
        assert_eq!(store.get(&second.key), second);
    }
}
