//! The "云端" screen (DESIGN.md §12): PKU harness Cloud on this device — its server, whether
//! it is set up or reachable, the account's devices and space, the recovery code once right
//! after setup, joining by a recovery code, the app's backup switch with its disclosure, the
//! last backup, and what the last restore left for the student to do.

use std::sync::Mutex;

use super::texts::{local_time, tr};
use super::{Action, Button, ButtonRole, LabelValue};
use crate::cloud::backup::{self, Restored};
use crate::cloud::{CloudDevice, CloudError};
use crate::engine::Engine;
use crate::settings::Language;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum CloudState {
    /// No cloud account on this device: the screen offers setup and join.
    NotSetUp,
    SetUp,
    /// An account is set up but its server did not answer (or refused this device).
    Unreachable,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CloudScreen {
    pub title: String,
    pub state: CloudState,
    /// The state in words; for an unreachable server, what the server or the network said.
    pub state_words: String,
    /// The server address field: its label and what it holds (the account's server once set
    /// up; else empty for the student to type).
    pub address_label: String,
    pub address: String,
    /// The account's devices and the space it uses, once the server answered.
    pub devices: Option<LabelValue>,
    /// Each device of the account, oldest first: this one marked 本机, each other with 移除.
    pub device_rows: Vec<CloudDeviceRow>,
    /// How this device leaves the account (it is not removed from itself); with the rows.
    pub leave_note: Option<String>,
    pub space: Option<LabelValue>,
    /// The recovery code, shown once: on the first read after setup, never again.
    pub recovery_code: Option<String>,
    /// What the recovery code is for, beside it.
    pub recovery_note: String,
    /// Makes an account on the typed address (`Action::CloudSetup`); only when not set up.
    pub setup_label: Option<String>,
    /// The recovery code field and its tap (`Action::CloudJoin`); only when not set up.
    pub code_label: Option<String>,
    pub join_label: Option<String>,
    /// The app's own backup switch (`Action::SetCloudBackup` with `!backup_on`), its words
    /// and what it stores and what it never does.
    pub backup_label: String,
    pub backup_on: bool,
    pub disclosure: Vec<String>,
    /// The second choice under the switch, 连同对话内容 (`Action::SetCloudBackupHistories`
    /// with `!histories_on`), and its own disclosure line beside it.
    pub histories_label: String,
    pub histories_on: bool,
    pub histories_disclosure: String,
    pub last_backup: LabelValue,
    /// 立即备份 and 恢复: only when set up (backup also only with the switch on).
    pub backup_now: Option<Button>,
    pub restore: Option<Button>,
    /// What the last restore on this screen did and left for the student, in words.
    pub restored: Vec<String>,
    /// The heading over the pending rows; only when there are some.
    pub pending_title: Option<String>,
    /// Each value a restore left pending (looser than the one in effect), kept until the
    /// student applies or dismisses it.
    pub pending: Vec<CloudPendingRow>,
}

/// A value a restore did not make because it is looser than the one in effect (DESIGN.md §3
/// 8e): the student makes it (`Action::CloudApplyPending`, the settings screen's change) or
/// leaves it (`Action::CloudDismissPending`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CloudPendingRow {
    /// The setting's key (data) and the backup's value, in words.
    pub words: String,
    pub apply: Button,
    pub dismiss: Button,
}

/// One device of the account on the 云端 screen.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CloudDeviceRow {
    /// What kind of device it is, in words (Android 手机, iPhone, 电脑上的 harness 命令行).
    pub name: String,
    /// When it joined the account, local time, with its label.
    pub joined: LabelValue,
    pub this_device: bool,
    /// "本机" on this device's row.
    pub this_label: Option<String>,
    /// 移除 (`Action::CloudRemoveDevice`): on every row but this device's.
    pub remove: Option<Button>,
}

/// What the screen keeps between taps: the code to show once, and the last restore's words.
#[derive(Default)]
pub(super) struct CloudDraft {
    code: Option<String>,
    restored: Vec<String>,
}

pub(super) async fn build(
    engine: &Engine,
    lang: Language,
    draft: &Mutex<CloudDraft>,
) -> CloudScreen {
    let kept = engine.cloud_kept();
    let status = engine.cloud_status().await;
    let (state, state_words) = match (&kept, &status) {
        (None, _) => (
            CloudState::NotSetUp,
            tr(
                lang,
                "未设置：创建账户，或用恢复码加入",
                "Not set up: make an account, or join one with its recovery code",
            )
            .to_owned(),
        ),
        (Some(_), Ok(_)) => (CloudState::SetUp, tr(lang, "已设置", "Set up").to_owned()),
        (Some(_), Err(CloudError::Removed)) => (
            CloudState::NotSetUp,
            tr(
                lang,
                "这台设备已被这个账户的另一台设备移除：要再用云端，请输入恢复码重新加入",
                "Another device of the account removed this one: to use the cloud again, join with the recovery code",
            )
            .to_owned(),
        ),
        (Some(_), Err(e)) => (
            CloudState::Unreachable,
            format!(
                "{}{e}",
                tr(lang, "连不上服务器：", "The server cannot be reached: ")
            ),
        ),
    };
    let account = status.ok().flatten();
    let (code, restored) = {
        let mut d = crate::lock(draft);
        (d.code.take(), d.restored.clone())
    };
    let consent = engine.consent();
    let backup_on = consent.cloud_backup;
    // A store that cannot be read shows no row rather than no screen; the next read retries.
    let pending: Vec<CloudPendingRow> = engine
        .cloud_pending()
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| pending_row(lang, key, &value))
        .collect();
    let set_up = state != CloudState::NotSetUp;
    let zone = engine.settings().time_zone;
    let when = kept.as_ref().and_then(|(_, at)| *at).map_or_else(
        || tr(lang, "从未", "Never").to_owned(),
        |at| local_time(&zone, at),
    );
    let offered = |yes: bool, words: &'static str| yes.then(|| words.to_owned());
    CloudScreen {
        title: tr(lang, "云端", "Cloud").into(),
        state,
        state_words,
        address_label: tr(lang, "服务器地址", "Server address").into(),
        // The account's server; before one, the address this build offers (its
        // PKU_HARNESS_CLOUD_URL), for the student to keep or change.
        address: kept
            .as_ref()
            .map(|(s, _)| s.clone())
            .or_else(|| engine.cloud_offered_address())
            .unwrap_or_default(),
        devices: account.as_ref().map(|a| LabelValue {
            label: tr(lang, "这个账户的设备", "This account's devices").into(),
            value: match lang {
                Language::Zh => format!("{} 台", a.devices.len()),
                Language::En => format!("{}", a.devices.len()),
            },
        }),
        device_rows: account
            .as_ref()
            .map(|a| a.devices.iter().map(|d| device_row(lang, &zone, d)).collect())
            .unwrap_or_default(),
        leave_note: account.as_ref().map(|_| {
            tr(
                lang,
                "本机不能在这里移除自己：要让这台设备退出，请在这个账户的另一台设备上点它的「移除」。",
                "This device cannot remove itself here: to take it out of the account, tap Remove on its row on another device of the account.",
            )
            .to_owned()
        }),
        space: account.as_ref().map(|a| LabelValue {
            label: tr(lang, "已用空间", "Space used").into(),
            value: format!("{} / {} KiB", a.used_bytes / 1024, a.quota_bytes / 1024),
        }),
        recovery_code: code,
        recovery_note: tr(
            lang,
            "恢复码只显示这一次，请抄下来收好：新手机凭它加入这个账户、读取你的数据；丢了它又没有别的设备，数据就取不回来。",
            "The recovery code is shown this once: write it down and keep it. A new phone joins this account and reads your data with it; lose it with no other device and the data cannot be read again.",
        )
        .into(),
        setup_label: offered(!set_up, tr(lang, "创建云端账户", "Make a cloud account")),
        code_label: offered(!set_up, tr(lang, "恢复码", "Recovery code")),
        join_label: offered(!set_up, tr(lang, "用恢复码加入", "Join with the recovery code")),
        backup_label: tr(lang, "备份到云端", "Back up to the cloud").into(),
        backup_on,
        disclosure: match lang {
            Language::Zh => backup::DISCLOSURE_ZH.map(String::from).to_vec(),
            Language::En => backup::DISCLOSURE_EN.map(String::from).to_vec(),
        },
        histories_label: tr(lang, backup::HISTORIES_ZH, backup::HISTORIES_EN).into(),
        histories_on: consent.cloud_backup_histories,
        histories_disclosure: tr(
            lang,
            backup::HISTORIES_DISCLOSURE_ZH,
            backup::HISTORIES_DISCLOSURE_EN,
        )
        .into(),
        last_backup: LabelValue {
            label: tr(lang, "上次备份", "Last backup").into(),
            value: when,
        },
        backup_now: (set_up && backup_on).then(|| {
            Button::new(tr(lang, "立即备份", "Back up now").into(), ButtonRole::Primary, Action::CloudBackupNow)
        }),
        restore: set_up.then(|| {
            Button::new(tr(lang, "从云端恢复", "Restore from the cloud").into(), ButtonRole::Normal, Action::CloudRestore)
        }),
        restored,
        pending_title: (!pending.is_empty()).then(|| {
            tr(
                lang,
                "恢复时没有自动改的设置（比现在宽松），由你决定",
                "Restored values not made (looser than now): yours to decide",
            )
            .to_owned()
        }),
        pending,
    }
}

/// A pending restored value's row: the key (data) and the backup's value, 应用 and 不用了.
fn pending_row(lang: Language, key: String, value: &serde_json::Value) -> CloudPendingRow {
    let words = match lang {
        Language::Zh => format!("{key}：备份里是 {value}"),
        Language::En => format!("{key}: {value} in the backup"),
    };
    CloudPendingRow {
        words,
        apply: Button::new(
            tr(lang, "应用", "Apply").into(),
            ButtonRole::Primary,
            Action::CloudApplyPending { key: key.clone() },
        ),
        dismiss: Button::new(
            tr(lang, "不用了", "Dismiss").into(),
            ButtonRole::Normal,
            Action::CloudDismissPending { key },
        ),
    }
}

/// A device's row: its kind in words, when it joined, 本机 or 移除.
fn device_row(lang: Language, zone: &str, d: &CloudDevice) -> CloudDeviceRow {
    let name = match d.kind.as_str() {
        "android" => tr(lang, "Android 手机", "Android phone"),
        "ios" => tr(lang, "iPhone", "iPhone"),
        "terminal" => tr(
            lang,
            "电脑上的 harness 命令行",
            "The harness command line on a computer",
        ),
        _ => tr(lang, "设备", "Device"),
    };
    CloudDeviceRow {
        name: name.to_owned(),
        joined: LabelValue {
            label: tr(lang, "加入时间", "Joined").into(),
            value: local_time(zone, d.added_at.saturating_mul(1000)),
        },
        this_device: d.this_device,
        this_label: d
            .this_device
            .then(|| tr(lang, "本机", "This device").to_owned()),
        remove: (!d.this_device).then(|| {
            Button::new(
                tr(lang, "移除", "Remove").into(),
                ButtonRole::Destructive,
                Action::CloudRemoveDevice {
                    device: d.key.clone(),
                },
            )
        }),
    }
}

/// Keeps the code a setup returned for the screen's next read, and only that one.
pub(super) fn keep_code(draft: &Mutex<CloudDraft>, code: String) {
    crate::lock(draft).code = Some(code);
}

pub(super) fn keep_restored(draft: &Mutex<CloudDraft>, lang: Language, r: &Restored) {
    let mut words = vec![match lang {
        Language::Zh => format!(
            "已恢复：{} 项设置、{} 条记忆、{} 个定时任务、{} 个对话标题",
            r.applied.len(),
            r.memories,
            r.jobs,
            r.conversations
        ),
        Language::En => format!(
            "Restored: {} settings, {} memories, {} jobs, {} conversation titles",
            r.applied.len(),
            r.memories,
            r.jobs,
            r.conversations
        ),
    }];
    for (key, value) in &r.pending {
        words.push(match lang {
            Language::Zh => format!("待你确认：{key} 在备份里是 {value}，比现在宽松，没有自动改；要改请点下面它的「应用」"),
            Language::En => format!("For you to decide: {key} is {value} in the backup, looser than now, so it was not changed; tap Apply on its row below if you want it"),
        });
    }
    for plugin in &r.cloud_consents_pending {
        words.push(match lang {
            Language::Zh => format!("待你确认：插件 {plugin} 在备份里开着「允许云端」，这里没有打开；要用请到 插件 → {plugin} 打开"),
            Language::En => format!("For you to decide: plugin {plugin} had Allow cloud on in the backup; it is off here: turn it on in Plugins → {plugin} if you want it"),
        });
    }
    for (key, why) in &r.refused {
        words.push(match lang {
            Language::Zh => format!("没有恢复 {key}：{why}"),
            Language::En => format!("Not restored {key}: {why}"),
        });
    }
    crate::lock(draft).restored = words;
}

/// A cloud refusal in words naming the field to change: the address for a server that cannot
/// be reached or refused, the recovery code for a code that does not check out.
pub(super) fn field_error(lang: Language, code_typed: bool, e: &CloudError) -> String {
    let field = match e {
        CloudError::Invalid(m) if code_typed && m.contains("--code") => {
            tr(lang, "恢复码", "Recovery code")
        }
        _ => tr(lang, "服务器地址", "Server address"),
    };
    format!("{field}: {e}")
}
