//! `harness usage`: what the model cost this month (the local month), in tokens and in 元 at
//! each provider's price (`agent::prices`, or `model.priceYuanPerMillion`), the cap
//! (`model.monthlyCapYuan`) and each conversation's share.

use std::path::Path;
use std::sync::Arc;

use harness_core::agent::prices::{PRICES, PRICES_DATED, Spend};
use harness_core::agent::providers;

use crate::tools::NoPrompts;

fn line(spend: &Spend) -> String {
    let unpriced = if spend.unpriced_turns > 0 {
        format!(
            " ({} turns at an address with no known price: set model.priceYuanPerMillion)",
            spend.unpriced_turns
        )
    } else {
        String::new()
    };
    format!(
        "{} turns, {} prompt tokens ({} cached), {} answer tokens, {:.2} 元{unpriced}",
        spend.turns, spend.prompt_tokens, spend.cached_tokens, spend.completion_tokens, spend.yuan
    )
}

pub fn run(data_dir: &Path) -> Result<(), String> {
    let engine = crate::open::engine(data_dir, Arc::new(NoPrompts))?;
    let settings = engine.settings();
    let agent = engine.agent();
    let month = agent.month_spend(&settings).map_err(|e| e.to_string())?;
    outln!("This month: {}", line(&month));
    match settings.model.monthly_cap_yuan {
        Some(cap) => outln!("Cap: {cap} 元 a month (model.monthlyCapYuan)"),
        None => outln!("Cap: none (set model.monthlyCapYuan to refuse new turns past it)"),
    }
    let provider = providers::for_endpoint(&settings.model.endpoint).id;
    match (
        settings.model.price_yuan_per_million,
        PRICES.iter().find(|p| p.provider == provider),
    ) {
        (Some(p), _) => outln!(
            "Price of {provider}: {} / {} cached / {} answer 元 per million tokens (model.priceYuanPerMillion)",
            p.input,
            p.cached_input,
            p.output
        ),
        (None, Some(p)) => outln!(
            "Price of {provider}: {} / {} cached / {} answer 元 per million tokens (read {PRICES_DATED} from {})",
            p.price.input,
            p.price.cached_input,
            p.price.output,
            p.source
        ),
        (None, None) => {
            outln!("Price of {provider}: unknown (set model.priceYuanPerMillion to count it in 元)")
        }
    }
    for (conversation, spend) in agent
        .month_spend_by_conversation(&settings)
        .map_err(|e| e.to_string())?
    {
        outln!("  {conversation}: {}", line(&spend));
    }
    Ok(())
}
