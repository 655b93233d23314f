//! The app's backup in PKU harness Cloud (issue 39.5): what the engine gathers (settings under
//! their keys, approved memories, jobs, the conversations with their titles, settings and own
//! rules, and their histories when the student chose that) as one document, kept as records
//! of a reserved plugin id so that it is sealed and named like any plugin's. A record holds at
//! most 64 KiB, so the document is cut into parts; the parts of one backup share a generation,
//! and the manifest naming the generation is written last, so a backup cut off halfway leaves
//! the one before it whole.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Cloud, CloudError, seal::random};
use crate::policy::Rule;
use crate::store::history::MessageRow;
use crate::turn::ConversationSettings;

/// The records' plugin id: not a plugin id (those are lowercase letters, digits and '-'), so no
/// plugin's `services.cloud` reaches it.
pub const PLUGIN: &str = "@harness/backup";
const MANIFEST: &str = "manifest";
/// What this version writes; a newer backup is refused rather than half read. The
/// conversations (with their histories), their scopes' sites and the consenting plugins'
/// stores were added under format 1: a reader before them skips those fields and still reads
/// `conversationTitles`, which is written beside them.
const FORMAT: u32 = 1;
/// A part's bytes as JSON text: escaped inside a string (a quote or a backslash doubles) it
/// stays under the record's bound.
const PART_BYTES: usize = 30_000;

/// What the student is told before turning the backup on (seed 000: plain words about what is
/// stored online), in zh and en.
pub const DISCLOSURE_ZH: [&str; 3] = [
    "设置、规则、已批准的记忆、定时任务、对话的标题和设置，以及你允许云端的插件存在手机上的数据，加密后存到 PKU harness Cloud",
    "不包括密码、登录会话和模型 API 密钥",
    "云端看不到内容；只有持有恢复码的设备能读取",
];
pub const DISCLOSURE_EN: [&str; 3] = [
    "Settings, rules, approved memories, jobs, conversations' titles and settings, and what the plugins you allowed the cloud keep on the phone, encrypted, in PKU harness Cloud",
    "Never passwords, sign-in sessions or the model's API key",
    "The cloud cannot read them; only a device with the recovery code can",
];

/// The second choice under the backup switch, and its own disclosure line (seed 000).
pub const HISTORIES_ZH: &str = "连同对话内容";
pub const HISTORIES_EN: &str = "Include conversation histories";
pub const HISTORIES_DISCLOSURE_ZH: &str =
    "打开后，每个对话的全部内容（你说的话、回答和工具结果）也加密存到云端";
pub const HISTORIES_DISCLOSURE_EN: &str = "When on, every conversation's messages (your words, the answers and the tools' results) are stored too, encrypted";

/// The backup's document. Each part is read on restore as the engine's checks take it: a
/// setting through `parse_change`, a job through the scheduler's spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Backup {
    pub format: u32,
    /// Each setting as `Engine::setting_values` gives it: (key, value).
    pub settings: Vec<(String, Value)>,
    /// The texts of the memories the student approved (or wrote).
    pub memories: Vec<String>,
    /// Each job: `{"spec": …, "owner": …, "pausedReason": …}`.
    pub jobs: Vec<Value>,
    /// The titles, also for a reader written before `conversations`.
    pub conversation_titles: Vec<String>,
    /// Each conversation the student chats in, by id.
    pub conversations: Vec<BackedConversation>,
    /// The plugins whose "Allow cloud" switch was on: their records are in the cloud already.
    pub cloud_plugins: Vec<String>,
    /// The store (`ctx.store`) of each of those plugins, by plugin id: key to value.
    pub plugin_stores: BTreeMap<String, BTreeMap<String, String>>,
}

/// A conversation in the backup: its id, title, settings (model, effort, preset), own rules,
/// the sites and apps of its scope and turns, and its history's rows as the history store keeps them (empty unless the student
/// chose histories). The history holds no secret: a service's answer had every secret its
/// request carried taken out (`redact`) before a plugin, the model or the history read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BackedConversation {
    pub id: String,
    pub title: Option<String>,
    pub settings: ConversationSettings,
    pub rules: Vec<Rule>,
    /// The sites and apps its scope lists. A folder is a path on the device that listed it
    /// (its data directory's), so folders stay there.
    pub scope_hosts: Vec<String>,
    pub scope_apps: Vec<String>,
    pub turns: u64,
    pub history: Vec<MessageRow>,
}

/// What a backup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub bytes: usize,
    pub parts: usize,
}

/// What a restore did, field by field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Restored {
    /// The settings keys set to the backup's values.
    pub applied: Vec<String>,
    /// The settings the backup holds looser than those in effect (DESIGN.md §3 8e): left for
    /// the student to make, each as its key and value.
    pub pending: Vec<(String, Value)>,
    /// The settings and jobs that could not be brought back, each named with why.
    pub refused: Vec<(String, String)>,
    pub memories: usize,
    pub jobs: usize,
    pub conversations: usize,
    /// The messages brought back with them (a backup with histories).
    pub messages: usize,
    /// The plugins installed here whose "Allow cloud" switch was on in the backup and is off
    /// here: a consent, so the student turns each on (seed 000), never the restore.
    pub cloud_consents_pending: Vec<String>,
    /// The keys put back into those plugins' stores (one this device holds already is kept).
    pub plugin_values: usize,
}

/// `text` cut into pieces of at most `PART_BYTES` bytes, on character boundaries.
fn parts(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(PART_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (part, tail) = rest.split_at(end);
        out.push(part);
        rest = tail;
    }
    out
}

/// The backup's document as it is stored.
fn document(backup: &Backup) -> String {
    serde_json::to_string(&Backup {
        format: FORMAT,
        ..backup.clone()
    })
    .expect("a backup serialises")
}

fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn part_key(generation: &str, index: usize) -> String {
    format!("part/{generation}/{index}")
}

impl Cloud {
    /// Writes `backup` as this account's backup: its parts under a new generation, then the
    /// manifest, then the parts of the backup it replaced are deleted.
    pub async fn write_backup(&self, backup: &Backup) -> Result<Written, CloudError> {
        let text = document(backup);
        let before = self.get(PLUGIN, MANIFEST).await?;
        let generation: String = random::<8>().iter().map(|b| format!("{b:02x}")).collect();
        let pieces = parts(&text);
        for (i, piece) in pieces.iter().enumerate() {
            self.set(PLUGIN, &part_key(&generation, i), Some(&json!(piece)), None)
                .await?;
        }
        let manifest = json!({ "format": FORMAT, "generation": generation, "parts": pieces.len() });
        self.set(PLUGIN, MANIFEST, Some(&manifest), None).await?;
        if let Some(old) = before
            && let (Some(old_generation), Some(count)) = (
                old.value["generation"].as_str(),
                old.value["parts"].as_u64(),
            )
            && old_generation != generation
        {
            for i in 0..count as usize {
                self.set(PLUGIN, &part_key(old_generation, i), None, None)
                    .await?;
            }
        }
        let mut config = crate::lock(&self.config).clone().ok_or_else(|| {
            CloudError::Unavailable("PKU harness Cloud was set aside during the backup".into())
        })?;
        config.backup_digest = Some(digest(&text));
        config.backup_at_ms = Some(self.clock.now_ms());
        self.keep(config)?;
        Ok(Written {
            bytes: text.len(),
            parts: pieces.len(),
        })
    }

    /// Whether `backup` is what this device wrote last: then there is nothing to write.
    pub fn backup_unchanged(&self, backup: &Backup) -> bool {
        let digest = digest(&document(backup));
        crate::lock(&self.config)
            .as_ref()
            .is_some_and(|c| c.backup_digest.as_deref() == Some(digest.as_str()))
    }

    /// This account's backup, or none when no device wrote one.
    pub async fn read_backup(&self) -> Result<Option<Backup>, CloudError> {
        let Some(manifest) = self.get(PLUGIN, MANIFEST).await? else {
            return Ok(None);
        };
        let newer = || {
            CloudError::Invalid(
                "the backup in the cloud was written by a newer version of the app: update the app, then restore".into(),
            )
        };
        if manifest.value["format"].as_u64().unwrap_or(0) > u64::from(FORMAT) {
            return Err(newer());
        }
        let broken = || {
            CloudError::Unavailable(
                "the backup in the cloud is incomplete (another device was writing one): back up again on the device that has the data".into(),
            )
        };
        let generation = manifest.value["generation"].as_str().ok_or_else(broken)?;
        let count = manifest.value["parts"].as_u64().ok_or_else(broken)?;
        let mut text = String::new();
        for i in 0..count as usize {
            let part = self
                .get(PLUGIN, &part_key(generation, i))
                .await?
                .ok_or_else(broken)?;
            text.push_str(part.value.as_str().ok_or_else(broken)?);
        }
        let backup: Backup = serde_json::from_str(&text).map_err(|_| broken())?;
        if backup.format > FORMAT {
            return Err(newer());
        }
        Ok(Some(backup))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A record holds at most 64 KiB: each part, escaped as a JSON string with its key around
    // it, stays under the bound even when every character doubles.
    #[test]
    fn parts_cut_on_character_boundaries_and_each_fits_a_record_escaped() {
        let text = format!("{}{}", "\"".repeat(40_000), "北".repeat(20_000));
        let pieces = parts(&text);
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces.len(), 4);
        for piece in pieces {
            let sealed = json!({ "key": part_key("0011223344556677", 99), "value": piece });
            assert!(sealed.to_string().len() <= super::super::MAX_VALUE_BYTES);
        }
    }
}
