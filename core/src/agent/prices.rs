//! What a provider charges, in 元 per million tokens, and what a month of turns cost (DESIGN.md
//! §13). A table in the core, dated, each price with the page it was read from; the student
//! replaces the configured provider's with the setting `model.priceYuanPerMillion`.
//!
//! Read 2025-10 from each provider's price page for the first suggested model (the short
//! context tier where a price rises with length); prices in dollars at 7.2 元 to the dollar.
//! Prices change: check the page named.

use serde::{Deserialize, Serialize};

use crate::store::usage::UsageRow;

/// When the table was read.
pub const PRICES_DATED: &str = "2025-10";

/// 元 per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// Prompt tokens the provider did not serve from its cache.
    pub input: f64,
    /// Prompt tokens served from its cache of an earlier request's prefix.
    pub cached_input: f64,
    pub output: f64,
}

/// Never NaN (`settings::parse_change` checks a price the student sets), so it is `Eq`.
impl Eq for Price {}

/// A provider's price and where it was read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PriceInfo {
    /// The provider's id (`agent::providers`).
    pub provider: &'static str,
    pub price: Price,
    pub source: &'static str,
}

pub const PRICES: &[PriceInfo] = &[
    PriceInfo {
        provider: "deepseek",
        price: Price {
            input: 2.0,
            cached_input: 0.2,
            output: 3.0,
        },
        source: "https://api-docs.deepseek.com/zh-cn/quick_start/pricing",
    },
    PriceInfo {
        provider: "qwen",
        price: Price {
            input: 0.8,
            cached_input: 0.16,
            output: 2.0,
        },
        source: "https://help.aliyun.com/zh/model-studio/models",
    },
    PriceInfo {
        provider: "kimi",
        price: Price {
            input: 4.0,
            cached_input: 1.0,
            output: 16.0,
        },
        source: "https://platform.moonshot.cn/docs/pricing/chat",
    },
    PriceInfo {
        provider: "zhipu",
        price: Price {
            input: 2.0,
            cached_input: 0.4,
            output: 8.0,
        },
        source: "https://open.bigmodel.cn/pricing",
    },
    PriceInfo {
        provider: "doubao",
        price: Price {
            input: 0.8,
            cached_input: 0.16,
            output: 8.0,
        },
        source: "https://www.volcengine.com/docs/82379/1544106",
    },
    PriceInfo {
        provider: "siliconflow",
        price: Price {
            input: 2.0,
            cached_input: 2.0,
            output: 8.0,
        },
        source: "https://siliconflow.cn/pricing",
    },
    PriceInfo {
        provider: "openrouter",
        price: Price {
            input: 1.44,
            cached_input: 1.44,
            output: 5.76,
        },
        source: "https://openrouter.ai/deepseek/deepseek-chat-v3.1",
    },
    PriceInfo {
        provider: "openai",
        price: Price {
            input: 2.88,
            cached_input: 0.72,
            output: 11.52,
        },
        source: "https://openai.com/api/pricing/",
    },
    PriceInfo {
        provider: "local",
        price: Price {
            input: 0.0,
            cached_input: 0.0,
            output: 0.0,
        },
        source: "a model on the phone or computer itself costs nothing a token",
    },
];

/// The price of `provider`: `chosen` (the setting `model.priceYuanPerMillion`, for the
/// configured provider) else the table's; none for an address the table does not know.
pub fn price_of(provider: &str, configured: &str, chosen: Option<Price>) -> Option<Price> {
    if provider == configured
        && let Some(price) = chosen
    {
        return Some(price);
    }
    PRICES
        .iter()
        .find(|p| p.provider == provider)
        .map(|p| p.price)
}

/// What `row` cost in 元 at `price`.
pub fn cost_yuan(row: &UsageRow, price: Price) -> f64 {
    let cached = row.cached_tokens.min(row.prompt_tokens);
    let fresh = row.prompt_tokens - cached;
    (fresh as f64 * price.input
        + cached as f64 * price.cached_input
        + row.completion_tokens as f64 * price.output)
        / 1_000_000.0
}

/// The tokens and 元 of some turns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spend {
    pub turns: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub yuan: f64,
    /// Turns whose provider has no known price: counted in tokens, not in 元.
    pub unpriced_turns: u64,
}

/// The spend of `rows`, each at its provider's price.
pub fn spend(rows: &[UsageRow], configured: &str, chosen: Option<Price>) -> Spend {
    let mut out = Spend::default();
    for row in rows {
        out.turns += 1;
        out.prompt_tokens += row.prompt_tokens;
        out.completion_tokens += row.completion_tokens;
        out.cached_tokens += row.cached_tokens;
        match price_of(&row.provider, configured, chosen) {
            Some(price) => out.yuan += cost_yuan(row, price),
            None => out.unpriced_turns += 1,
        }
    }
    out
}

/// The local month holding `now_ms` in `time_zone`: its first and the next month's first
/// midnight, in ms.
pub fn local_month(now_ms: i64, time_zone: &str) -> (i64, i64) {
    use chrono::{Datelike, NaiveDate, TimeZone};
    let zone = crate::zone::Zone::named_or_campus(time_zone);
    let Some(now) = zone.timestamp_millis_opt(now_ms).single() else {
        return (now_ms, now_ms + 1);
    };
    let start_of = |date: Option<NaiveDate>| -> Option<i64> {
        let midnight = date?.and_hms_opt(0, 0, 0)?;
        // Where midnight does not exist (a zone's clock change), the first time that does.
        (0..=24 * 4).find_map(|quarter| {
            zone.from_local_datetime(&(midnight + chrono::Duration::minutes(15 * quarter)))
                .earliest()
                .map(|t| t.timestamp_millis())
        })
    };
    let (year, month) = (now.year(), now.month());
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)
    };
    (
        start_of(NaiveDate::from_ymd_opt(year, month, 1)).unwrap_or(now_ms),
        start_of(next).unwrap_or(now_ms + 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(provider: &str, prompt: u64, cached: u64, completion: u64) -> UsageRow {
        UsageRow {
            provider: provider.into(),
            prompt_tokens: prompt,
            cached_tokens: cached,
            completion_tokens: completion,
            ..UsageRow::default()
        }
    }

    #[test]
    fn a_turn_costs_its_fresh_cached_and_answer_tokens_each_at_its_price() {
        // DeepSeek: 1M prompt tokens of which 0.8M cached, 0.1M answer:
        // 0.2M × 2 + 0.8M × 0.2 + 0.1M × 3 = 0.4 + 0.16 + 0.3 元.
        let deepseek = price_of("deepseek", "deepseek", None).unwrap();
        let cost = cost_yuan(&row("deepseek", 1_000_000, 800_000, 100_000), deepseek);
        assert!((cost - 0.86).abs() < 1e-9, "{cost}");
        // The student's price replaces the table's for the configured provider only.
        let mine = Price {
            input: 1.0,
            cached_input: 1.0,
            output: 1.0,
        };
        assert_eq!(price_of("deepseek", "deepseek", Some(mine)), Some(mine));
        assert_eq!(
            price_of("qwen", "deepseek", Some(mine)),
            Some(PRICES[1].price)
        );
        assert_eq!(price_of("custom", "deepseek", None), None);
        let s = spend(
            &[row("deepseek", 1_000_000, 0, 0), row("custom", 10, 0, 5)],
            "deepseek",
            None,
        );
        assert_eq!(
            (s.turns, s.unpriced_turns, s.prompt_tokens),
            (2, 1, 1_000_010)
        );
        assert!((s.yuan - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_month_is_the_local_one() {
        // 2026-12-31 20:00 UTC is 2027-01-01 04:00 in Shanghai: January there.
        let (from, to) = local_month(1_798_747_200_000, "Asia/Shanghai");
        assert_eq!(from, 1_798_732_800_000); // 2027-01-01 00:00 +08:00
        assert_eq!(to, 1_801_411_200_000); // 2027-02-01 00:00 +08:00
    }

    #[test]
    fn every_priced_provider_is_in_the_list_and_names_its_source() {
        for p in PRICES {
            assert!(
                super::super::providers::PROVIDERS
                    .iter()
                    .any(|q| q.id == p.provider),
                "{}",
                p.provider
            );
            assert!(!p.source.is_empty());
        }
    }
}
