//! The "云端" screen (DESIGN.md §12): PKU harness Cloud on this device — its server, whether
//! it is set up or reachable, the account's devices and space, the recovery code once right
//! after setup, joining by a recovery code, the app's backup switch with its disclosure, the
//! last backup, and what the last restore left for the student to do. A device set up shows
//! the pairing QR another device scans to join (issue 39); one not set up scans it.

use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::pay_code::qr_modules;
use super::texts::{local_time, tr};
use super::{Action, Button, ButtonRole, LabelValue, ShellEffect};
use crate::cloud::backup::{self, Restored};
use crate::cloud::{CloudDevice, CloudError, NOT_A_PAIRING_CODE, PAIRING_CODE_SPENT, PAIRING_MS};
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
    /// 显示配对二维码 (`Action::CloudShowPairing`): only when set up and no QR is shown.
    pub show_pairing: Option<Button>,
    /// The pairing QR another device scans to join, until 隐藏 or its ten minutes are over.
    pub pairing: Option<CloudPairing>,
    /// 扫码加入 (`Action::CloudScanToJoin`, which opens the shell's scanner): only when not
    /// set up.
    pub scan_join: Option<Button>,
}

/// The pairing QR on the 云端 screen of a device set up: a one-time token for ten minutes and
/// the account key, drawn by the core. It is kept in the screen's memory alone, never stored,
/// and the shell keeps the window out of screenshots while it is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CloudPairing {
    /// The QR code, `qr_width` modules to a row, row after row: true is dark. The shell paints
    /// each module a square, with a quiet zone of four around them.
    pub qr_modules: Vec<bool>,
    pub qr_width: u32,
    /// When it stops working, local time, with its label.
    pub expires: LabelValue,
    /// That it lets one phone join this account and must be shown to no one else.
    pub note: String,
    /// 隐藏 (`Action::CloudHidePairing`).
    pub hide: Button,
    /// Read the screen again after this long: the QR is gone from it then.
    pub refresh_after_ms: i64,
}

/// What the shell's scanner does after a frame (`Screens::cloud_scanned`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum PairingScan {
    /// No QR code in the frame: keep scanning, say nothing.
    Nothing,
    /// This device joined the account: close the scanner and read 云端 again.
    Joined,
    /// The QR code read was refused (not a pairing code, used or expired): show the words
    /// under the camera and keep scanning.
    Refused { words: String },
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
    /// The pairing code shown and when it expires (ms, the engine's clock): in memory only.
    pairing: Option<(String, i64)>,
    /// The SHA-256 of the last code the scanner read that was refused, and why: the camera
    /// sees the same code many times a second, and the server is asked once.
    refused: Option<([u8; 32], String)>,
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
    let now = engine.now_ms();
    let (code, restored, pairing) = {
        let mut d = crate::lock(draft);
        // A pairing code past its ten minutes is dropped, not only hidden.
        if d.pairing.as_ref().is_some_and(|(_, until)| now >= *until) {
            d.pairing = None;
        }
        (d.code.take(), d.restored.clone(), d.pairing.clone())
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
    // Shown only while the account answers: a removed device has no account to pair with.
    let pairing = pairing
        .filter(|_| state == CloudState::SetUp)
        .and_then(|(payload, until)| pairing_card(lang, &zone, &payload, until, now));
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
        show_pairing: (state == CloudState::SetUp && pairing.is_none()).then(|| {
            Button::new(
                tr(lang, "显示配对二维码", "Show pairing QR").into(),
                ButtonRole::Normal,
                Action::CloudShowPairing,
            )
        }),
        pairing,
        scan_join: (!set_up).then(|| {
            Button::new(
                tr(lang, "扫码加入", "Join by scanning").into(),
                ButtonRole::Normal,
                Action::CloudScanToJoin,
            )
        }),
    }
}

/// The pairing QR's card: its modules, when it expires, what it does, 隐藏.
fn pairing_card(
    lang: Language,
    zone: &str,
    payload: &str,
    until: i64,
    now: i64,
) -> Option<CloudPairing> {
    let (qr_modules, qr_width) = qr_modules(payload)?;
    Some(CloudPairing {
        qr_modules,
        qr_width,
        expires: LabelValue {
            label: tr(lang, "有效至", "Works until").into(),
            value: local_time(zone, until),
        },
        note: tr(
            lang,
            "用另一部手机上的 PKU harness 扫这个码，那部手机就加入这个账户、能读取你的云端数据。它只能用一次，10 分钟内有效；不要给任何别人看或拍下。",
            "Scan this code with PKU harness on another phone and that phone joins this account and reads your cloud data. It works once, for 10 minutes; do not show it to anyone else or let it be photographed.",
        )
        .into(),
        hide: Button::new(
            tr(lang, "隐藏", "Hide").into(),
            ButtonRole::Normal,
            Action::CloudHidePairing,
        ),
        refresh_after_ms: until - now,
    })
}

/// Asks the server for a pairing token and keeps its code for the screen until it expires.
pub(super) async fn show_pairing(
    engine: &Engine,
    draft: &Mutex<CloudDraft>,
) -> Result<(), CloudError> {
    let payload = engine.cloud_pairing().await?;
    // Counted from before the server's answer would be later than the server's own expiry.
    let until = engine.now_ms() + PAIRING_MS;
    crate::lock(draft).pairing = Some((payload, until));
    Ok(())
}

pub(super) fn hide_pairing(draft: &Mutex<CloudDraft>) {
    crate::lock(draft).pairing = None;
}

/// What the shell's scanner shows around the camera, in words.
pub(super) fn scanner(lang: Language) -> ShellEffect {
    ShellEffect::ScanPairingQr {
        title: tr(lang, "扫码加入", "Join by scanning").into(),
        hint: tr(
            lang,
            "把相机对准另一部手机「云端」页上的配对二维码。",
            "Point the camera at the pairing QR on the other phone's Cloud page.",
        )
        .into(),
        camera_denied: tr(
            lang,
            "没有相机权限就不能扫码：请在系统设置里允许 PKU harness 使用相机，或用恢复码加入。",
            "Scanning needs the camera: allow PKU harness to use it in the system settings, or join with the recovery code.",
        )
        .into(),
        cancel: tr(lang, "取消", "Cancel").into(),
    }
}

/// Joins the account of a pairing code the scanner read (the iOS scanner's string, or one the
/// Android scanner read from a frame); the refusal in words. The same code refused before is refused again
/// without asking the server.
pub(super) async fn join_scanned(
    engine: &Engine,
    lang: Language,
    draft: &Mutex<CloudDraft>,
    payload: &str,
) -> Result<(), String> {
    let digest: [u8; 32] = Sha256::digest(payload.as_bytes()).into();
    if let Some((seen, words)) = &crate::lock(draft).refused
        && *seen == digest
    {
        return Err(words.clone());
    }
    match engine.cloud_join_paired(payload).await {
        Ok(()) => {
            crate::lock(draft).refused = None;
            Ok(())
        }
        Err(e) => {
            let words = scan_words(lang, &e);
            // A cloud out of reach may answer the next frame: only a code's own refusal stays.
            if !matches!(e, CloudError::Unavailable(_)) {
                crate::lock(draft).refused = Some((digest, words.clone()));
            }
            Err(words)
        }
    }
}

/// A scanned code's refusal in words.
fn scan_words(lang: Language, e: &CloudError) -> String {
    match (lang, e) {
        (Language::Zh, CloudError::Invalid(m)) if m == NOT_A_PAIRING_CODE => {
            "这不是 PKU harness 云端的配对二维码".into()
        }
        (Language::Zh, CloudError::Invalid(m)) if m == PAIRING_CODE_SPENT => {
            "这个配对二维码已用过或已过期：请在另一部手机上重新显示一个".into()
        }
        _ => format!("{}{e}", tr(lang, "配对二维码：", "Pairing QR: ")),
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
    if r.plugin_values > 0 {
        words.push(match lang {
            Language::Zh => format!("插件数据：放回了 {} 项", r.plugin_values),
            Language::En => format!("Plugins' data: {} values put back", r.plugin_values),
        });
    }
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
