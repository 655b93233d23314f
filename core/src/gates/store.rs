//! The store gate: a per-plugin JSON map that survives restarts (seed 001, "allow_store").
//!
//! The plugin names keys, never paths: the map lives at `<data dir>/<store name>/store.json`,
//! where the store name is the plugin id lowercased (phones have case-insensitive filesystems).
//! A set writes a temp file, fsyncs it, renames it over `store.json` in the same directory and
//! fsyncs the directory before returning `""`, so a crash leaves the whole old file or the whole
//! new one, and `""` means the bytes reached the disk.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{GrantError, Grants, MIB, denied};

type Map = BTreeMap<String, String>;

/// `host-store-get` / `host-store-set` for one plugin.
#[derive(Debug)]
pub struct StoreGate {
    allow_store: bool,
    dir: PathBuf,
    /// The map as last read or written; `None` until the first call reads the file.
    map: Mutex<Option<Map>>,
}

impl StoreGate {
    /// seed 001: total serialized store.
    pub const QUOTA_BYTES: usize = MIB;
    /// seed 001: number of keys.
    pub const MAX_KEYS: usize = 1000;
    /// seed 001: key length in characters, inclusive.
    pub const MAX_KEY_CHARS: usize = 128;

    /// The store of `plugin_id` under `data_dir`. Nothing is read or created until the first
    /// call. An id that cannot name a directory is a load error when the plugin has the grant.
    pub fn new(plugin_id: &str, grants: &Grants, data_dir: &Path) -> Result<Self, GrantError> {
        let name = store_name(plugin_id);
        let unsafe_name =
            name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']);
        if grants.allow_store && unsafe_name {
            return Err(GrantError::BadStoreName {
                plugin: plugin_id.to_owned(),
            });
        }
        let dir = store_dir(data_dir, plugin_id);
        Ok(Self {
            allow_store: grants.allow_store,
            dir,
            map: Mutex::new(None),
        })
    }

    /// The file `plugin_id`'s store is kept in under `data_dir`, the one a restart reads back.
    /// Public so a conformance scenario can put a store in place as earlier sets would have.
    pub fn file(data_dir: &Path, plugin_id: &str) -> PathBuf {
        store_dir(data_dir, plugin_id).join("store.json")
    }

    /// The value stored under `key`, `""` when absent, or an `error: ` string.
    pub fn get(&self, key: &str) -> String {
        self.with_map(|map, _| Ok(map.get(key).cloned().unwrap_or_default()))
    }

    /// Stores `value` under `key` and returns `""` once it is on disk, or an `error: ` string
    /// after storing nothing. Setting `""` removes the key: `""` already reads as absent, and
    /// removing is how a plugin at the key cap makes room.
    pub fn set(&self, key: &str, value: &str) -> String {
        self.with_map(|map, dir| {
            // seed 001: every bound is checked before anything is written.
            let chars = key.chars().count();
            if chars > Self::MAX_KEY_CHARS {
                return Err(format!(
                    "error: store key is {chars} characters, over the limit of {} characters",
                    Self::MAX_KEY_CHARS
                ));
            }
            let previous = if value.is_empty() {
                match map.remove(key) {
                    Some(previous) => Some(previous),
                    None => return Ok(String::new()),
                }
            } else {
                // seed 001: replacing a key is not counted against the cap.
                if !map.contains_key(key) && map.len() >= Self::MAX_KEYS {
                    return Err(format!(
                        "error: store key limit reached ({} keys); replace an existing key, or \
                         set one to \"\" to remove it",
                        Self::MAX_KEYS
                    ));
                }
                map.insert(key.to_owned(), value.to_owned())
            };
            let restore = |map: &mut Map| match &previous {
                Some(previous) => map.insert(key.to_owned(), previous.clone()),
                None => map.remove(key),
            };
            let bytes = serde_json::to_vec(map).expect("a map of strings serializes");
            if bytes.len() > Self::QUOTA_BYTES {
                restore(map);
                return Err("error: store quota exceeded (1 MiB)".to_owned());
            }
            if let Err(err) = persist(dir, &bytes) {
                restore(map);
                return Err(format!("error: could not write this plugin's store: {err}"));
            }
            Ok(String::new())
        })
    }

    /// Every key with its value, as the plugin's gets read them (the app's backup of a plugin
    /// whose "Allow cloud" is on), or the `error: ` string.
    pub(crate) fn entries(&self) -> Result<BTreeMap<String, String>, String> {
        let mut entries = None;
        let answer = self.with_map(|map, _| {
            entries = Some(map.clone());
            Ok(String::new())
        });
        entries.ok_or(answer)
    }

    /// Runs `op` on the map, reading the file on first use; an `Err` is the `error: ` string.
    fn with_map(&self, op: impl FnOnce(&mut Map, &Path) -> Result<String, String>) -> String {
        if !self.allow_store {
            return denied("store access", "allow_store");
        }
        let mut cached = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.is_none() {
            match load(&self.dir) {
                Ok(map) => *cached = Some(map),
                Err(err) => return err,
            }
        }
        let map = cached.as_mut().expect("loaded above");
        op(map, &self.dir).unwrap_or_else(|err| err)
    }
}

/// seed 001 names the store after the plugin; lowercased because two ids differing in case
/// would share a directory on a case-insensitive filesystem.
fn store_name(plugin_id: &str) -> String {
    plugin_id.to_lowercase()
}

/// The directory holding `plugin_id`'s `store.json` under `data_dir`.
pub(crate) fn store_dir(data_dir: &Path, plugin_id: &str) -> PathBuf {
    data_dir.join(store_name(plugin_id))
}

fn load(dir: &Path) -> Result<Map, String> {
    match fs::read(dir.join("store.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|err| {
            // Refused rather than overwritten: the file holds the plugin's data.
            format!("error: this plugin's store.json is not a JSON object of strings: {err}")
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Map::new()),
        Err(err) => Err(format!("error: could not read this plugin's store: {err}")),
    }
}

/// Temp file, fsync, rename over `store.json`, fsync the directory (so the rename, too, is on
/// disk: seed 001's version survives a process crash; this one a power cut as well).
///
/// Each write has a temp file of its own, `.store.json.<pid>.<n>.tmp`, created with
/// `create_new`: two gates on one directory (two engines, or two processes) must never write
/// into the same temp file, or one renames the other's half-written bytes into place and the
/// other's rename then fails. A write that fails removes its temp file.
pub(crate) fn persist(dir: &Path, bytes: &[u8]) -> io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(dir)?;
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".store.json.{}.{n}.tmp", std::process::id()));
    let mut file = File::create_new(&temp)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            fs::rename(&temp, dir.join("store.json"))
        });
    if let Err(err) = written {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// seed 001: two plugins sharing a store name where either has `allow_store` is a load error
/// for both — with last-one-wins, config order would decide whose memory a plugin gets. Returns
/// one error per plugin and other plugin it collides with, so each plugin named in `plugin`
/// fails to load. Plugins that share a name with the grant off on both touch no store.
pub fn check_store_names<'a>(
    plugins: impl IntoIterator<Item = (&'a str, &'a Grants)>,
) -> Vec<GrantError> {
    let plugins: Vec<(&str, &Grants, String)> = plugins
        .into_iter()
        .map(|(id, grants)| (id, grants, store_name(id)))
        .collect();
    let mut errors = Vec::new();
    for (i, (plugin, grants, store)) in plugins.iter().enumerate() {
        for (j, (other, other_grants, other_store)) in plugins.iter().enumerate() {
            if i != j && store == other_store && (grants.allow_store || other_grants.allow_store) {
                errors.push(GrantError::SharedStore {
                    plugin: (*plugin).to_owned(),
                    other: (*other).to_owned(),
                    store: store.clone(),
                });
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted() -> Grants {
        Grants {
            allow_store: true,
            ..Grants::default()
        }
    }

    fn gate(dir: &Path) -> StoreGate {
        StoreGate::new("Memory", &granted(), dir).unwrap()
    }

    fn on_disk(dir: &Path) -> Map {
        serde_json::from_slice(&fs::read(dir.join("memory/store.json")).unwrap()).unwrap()
    }

    #[test]
    fn off_names_allow_store() {
        let tmp = tempfile::tempdir().unwrap();
        let gate = StoreGate::new("memory", &Grants::default(), tmp.path()).unwrap();
        let refusal = "error: store access denied (set allow_store = true in this plugin's grants)";
        assert_eq!(gate.get("k"), refusal);
        assert_eq!(gate.set("k", "v"), refusal);
        assert!(!tmp.path().join("memory").exists());
    }

    #[test]
    fn absent_reads_empty_and_set_returns_empty_once_on_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let store = gate(tmp.path());
        assert_eq!(store.get("k"), "");
        assert_eq!(store.set("k", "{\"n\":1}"), "");
        assert_eq!(on_disk(tmp.path())["k"], "{\"n\":1}");
        assert_eq!(entries(&tmp.path().join("memory")), ["store.json"]);
        // A new gate (a restart) reads what the old one wrote.
        assert_eq!(gate(tmp.path()).get("k"), "{\"n\":1}");
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn two_gates_on_one_directory_never_share_a_temp_file() {
        // Two engines (or processes) holding the same plugin's store: each write goes through
        // its own temp file, so no write is torn by the other's and none renames a file the
        // other is still writing (or has already moved away).
        const ROUNDS: usize = 60;
        let tmp = tempfile::tempdir().unwrap();
        let padding = "p".repeat(16 * 1024);
        let results: Vec<Vec<String>> = std::thread::scope(|scope| {
            let writers: Vec<_> = ["a", "b"]
                .into_iter()
                .map(|key| {
                    let store = gate(tmp.path());
                    let padding = &padding;
                    scope.spawn(move || {
                        (0..ROUNDS)
                            .map(|round| store.set(key, &format!("{round} {padding}")))
                            .collect::<Vec<String>>()
                    })
                })
                .collect();
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for outcomes in &results {
            assert_eq!(outcomes, &vec![String::new(); ROUNDS]);
        }
        // The last rename wins whole: the file is one gate's last map, never a torn mix. (A
        // gate that first read the file after the other wrote also holds the other's key, at
        // the value it read then; two engines never share a directory — the data directory is
        // locked — so that lost update is not this test's concern.)
        let last = format!("{} {padding}", ROUNDS - 1);
        let file = on_disk(tmp.path());
        let whole = |v: &String| {
            v.split_once(' ').is_some_and(|(n, rest)| {
                n.parse::<usize>().is_ok_and(|n| n < ROUNDS) && rest == padding
            })
        };
        assert!(
            file.keys().all(|k| k == "a" || k == "b"),
            "{:?}",
            file.keys()
        );
        assert!(file.values().all(whole), "a torn value");
        assert!(
            file.values().any(|v| *v == last),
            "neither gate's last write is on disk"
        );
        assert_eq!(entries(&tmp.path().join("memory")), ["store.json"]);
    }

    #[test]
    fn a_failed_write_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        // store.json is a directory: the rename fails after the temp file was written.
        fs::create_dir_all(dir.join("store.json/inside")).unwrap();
        assert!(persist(&dir, b"{}").is_err());
        assert_eq!(entries(&dir), ["store.json"]);
    }

    #[test]
    fn the_store_name_is_the_lowercased_id() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(gate(tmp.path()).set("k", "v"), "");
        assert!(tmp.path().join("memory/store.json").is_file());
    }

    #[test]
    fn key_length_is_inclusive_at_128_characters() {
        let tmp = tempfile::tempdir().unwrap();
        let store = gate(tmp.path());
        assert_eq!(store.set(&"é".repeat(128), "v"), "");
        assert_eq!(
            store.set(&"k".repeat(129), "v"),
            "error: store key is 129 characters, over the limit of 128 characters"
        );
        assert_eq!(store.get(&"k".repeat(129)), "");
    }

    #[test]
    fn a_thousand_keys_then_only_replacements() {
        let tmp = tempfile::tempdir().unwrap();
        let full: Map = (0..999)
            .map(|i| (format!("key{i}"), "v".to_owned()))
            .collect();
        persist(
            &tmp.path().join("memory"),
            &serde_json::to_vec(&full).unwrap(),
        )
        .unwrap();
        let store = gate(tmp.path());
        assert_eq!(store.set("key999", "v"), "");
        assert_eq!(
            store.set("one-too-many", "v"),
            "error: store key limit reached (1000 keys); replace an existing key, or set one to \
             \"\" to remove it"
        );
        assert_eq!(store.get("one-too-many"), "");
        assert_eq!(store.set("key0", "replaced"), "");
        assert_eq!(store.set("key1", ""), "");
        assert_eq!(store.set("now-fits", "v"), "");
        assert_eq!(on_disk(tmp.path()).len(), 1000);
    }

    #[test]
    fn the_quota_is_the_whole_serialized_file() {
        let tmp = tempfile::tempdir().unwrap();
        let store = gate(tmp.path());
        // {"k":"…"} is the value plus 8 bytes.
        assert_eq!(store.set("k", &"x".repeat(MIB - 8)), "");
        assert_eq!(
            fs::metadata(tmp.path().join("memory/store.json"))
                .unwrap()
                .len(),
            MIB as u64
        );
        assert_eq!(
            store.set("k", &"y".repeat(MIB - 7)),
            "error: store quota exceeded (1 MiB)"
        );
        assert_eq!(
            store.set("other", "v"),
            "error: store quota exceeded (1 MiB)"
        );
        // A refusal stores nothing, in memory or on disk.
        assert_eq!(store.get("k"), "x".repeat(MIB - 8));
        assert_eq!(store.get("other"), "");
        assert_eq!(on_disk(tmp.path()).len(), 1);
    }

    #[test]
    fn a_corrupt_file_is_refused_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("memory")).unwrap();
        fs::write(tmp.path().join("memory/store.json"), "[1]").unwrap();
        let store = gate(tmp.path());
        assert!(
            store
                .set("k", "v")
                .starts_with("error: this plugin's store.json is not a JSON")
        );
        assert_eq!(
            fs::read_to_string(tmp.path().join("memory/store.json")).unwrap(),
            "[1]"
        );
    }

    #[test]
    fn ids_that_cannot_name_a_directory_are_refused_with_the_grant() {
        let tmp = tempfile::tempdir().unwrap();
        for id in ["", "..", "a/b"] {
            assert_eq!(
                StoreGate::new(id, &granted(), tmp.path()).unwrap_err(),
                GrantError::BadStoreName {
                    plugin: id.to_owned()
                }
            );
            assert!(StoreGate::new(id, &Grants::default(), tmp.path()).is_ok());
        }
    }

    #[test]
    fn shared_store_names_fail_both_plugins() {
        let on = granted();
        let off = Grants::default();
        let errors = check_store_names([("Memory", &on), ("memory", &off), ("notes", &on)]);
        assert_eq!(
            errors,
            [
                GrantError::SharedStore {
                    plugin: "Memory".into(),
                    other: "memory".into(),
                    store: "memory".into()
                },
                GrantError::SharedStore {
                    plugin: "memory".into(),
                    other: "Memory".into(),
                    store: "memory".into()
                },
            ]
        );
        assert_eq!(
            errors[0].to_string(),
            "plugin \"Memory\" and plugin \"memory\" share the store name \"memory\" and at least \
             one of them has allow_store; rename one of them (store names ignore case)"
        );
        assert!(check_store_names([("a", &off), ("A", &off)]).is_empty());
    }
}
