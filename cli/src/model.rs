//! `harness model`: the providers a student picks from, and the model screen's "Test
//! connection" from a terminal — one tiny request to the endpoint and model (the settings', or
//! those given), said in words: a wrong key, no balance, an unknown model, no network, no
//! answer in time. The key comes from HARNESS_API_KEY, else the keyring (the provider's own key,
//! or the single `model.apiKey`); it is never printed.

use std::path::Path;
use std::sync::Arc;

use clap::Subcommand;
use harness_core::agent::check;
use harness_core::agent::providers::{self, PROVIDERS};
use harness_core::settings::Language;

use crate::secrets::KeyringSecrets;
use crate::tools::NoPrompts;

#[derive(Subcommand)]
pub enum ModelCommand {
    /// The providers: id, name, base URL, suggested models (the first the default), where to
    /// get a key, and the context size.
    Providers,
    /// Send one tiny request and say whether the provider answers, and if not, why.
    Test {
        /// The OpenAI-compatible base URL; the model.endpoint setting without it.
        #[arg(long)]
        endpoint: Option<String>,
        /// The model; the model.name setting without it, else the provider's first suggestion.
        #[arg(long)]
        model: Option<String>,
    },
}

pub async fn run(data_dir: &Path, command: ModelCommand) -> Result<(), String> {
    match command {
        ModelCommand::Providers => {
            for p in PROVIDERS {
                outln!("{}  {} / {}", p.id, p.name_zh, p.name_en);
                if !p.base_url.is_empty() {
                    outln!("    endpoint: {}", p.base_url);
                }
                if !p.models.is_empty() {
                    outln!("    models: {}", p.models.join(", "));
                }
                if let Some(url) = p.key_url {
                    outln!("    key: {url}");
                }
                outln!("    context: {} tokens", p.context_tokens);
            }
            Ok(())
        }
        ModelCommand::Test { endpoint, model } => {
            let settings = crate::open::engine(data_dir, Arc::new(NoPrompts))?.settings();
            let endpoint = endpoint.unwrap_or(settings.model.endpoint);
            if endpoint.trim().is_empty() {
                return Err(
                    "no endpoint: pass --endpoint URL or set model.endpoint (`harness model providers` lists them)".into(),
                );
            }
            let provider = providers::for_endpoint(&endpoint);
            let model = model
                .or((!settings.model.name.trim().is_empty()).then_some(settings.model.name))
                .or(provider.models.first().map(|m| (*m).to_owned()))
                .ok_or("no model: pass --model M or set model.name")?;
            let key = match std::env::var("HARNESS_API_KEY") {
                Ok(key) if !key.is_empty() => Some(key),
                _ => providers::api_key(&KeyringSecrets::for_data_dir(data_dir), &endpoint)
                    .map_err(|e| e.to_string())?,
            };
            let Some(key) = key else {
                return Err(format!(
                    "no API key for {}: {}",
                    provider.name_en,
                    crate::chat::API_KEY_HELP
                ));
            };
            let found = check::test(&endpoint, &model, &key, check::limits()).await;
            let name = match provider.id {
                providers::CUSTOM | providers::LOCAL => endpoint.trim().to_owned(),
                _ => provider.name_en.to_owned(),
            };
            let words = found.words(Language::En, &name, provider.key_url);
            if !found.works() {
                return Err(words);
            }
            outln!("{words}");
            Ok(())
        }
    }
}
