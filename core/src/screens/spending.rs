//! The "花钱" screen: the student's money limits (settings `money.perPaymentYuan` and
//! `money.perDayYuan`), editable here, and what was paid today (DESIGN.md §3 8e).

use super::LabelValue;
use super::texts::tr;
use crate::engine::{Engine, EngineError};
use crate::invoke::yuan;
use crate::settings::Language;

/// One limit: its words, its value in whole 元 as the field shows it, and the settings key
/// `Action::SetMoneyLimit` takes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct MoneyLimitRow {
    pub key: String,
    pub label: String,
    pub yuan: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct SpendingScreen {
    pub title: String,
    pub limits: Vec<MoneyLimitRow>,
    /// Today's total beside the day's limit.
    pub today: LabelValue,
    /// What the limits do, and that the agent cannot raise them.
    pub note: String,
    /// The tap that sets a limit to what was typed in its field (`Action::SetMoneyLimit`).
    pub save_label: String,
}

pub(super) fn build(engine: &Engine, lang: Language) -> Result<SpendingScreen, EngineError> {
    let money = engine.settings().money;
    let spent = engine.spent_today_fen()?;
    Ok(SpendingScreen {
        title: tr(lang, "花钱", "Spending").into(),
        limits: vec![
            MoneyLimitRow {
                key: "money.perPaymentYuan".into(),
                label: tr(lang, "每笔最多（元）", "Most per payment (yuan)").into(),
                yuan: money.per_payment_yuan.to_string(),
            },
            MoneyLimitRow {
                key: "money.perDayYuan".into(),
                label: tr(lang, "每天最多（元）", "Most per day (yuan)").into(),
                yuan: money.per_day_yuan.to_string(),
            },
        ],
        today: LabelValue {
            label: tr(lang, "今天已花", "Spent today").into(),
            value: match lang {
                Language::Zh => format!("{} 元 / {} 元", yuan(spent), money.per_day_yuan),
                Language::En => format!("{} / {} yuan", yuan(spent), money.per_day_yuan),
            },
        },
        note: tr(
            lang,
            "助手超过限额的付款会被直接拒绝，不会问你。助手不能调高限额。",
            "The assistant's payments past a limit are refused without asking you. The assistant cannot raise them.",
        )
        .into(),
        save_label: tr(lang, "保存", "Save").into(),
    })
}
