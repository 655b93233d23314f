//! Data sources (seed 004, DESIGN.md §2): read tools a plugin lists in `dataSources` with a
//! cache lifetime, for widgets and the agent (`dashboard.sources`).
//!
//! A widget's read ([`Engine::use_tool_data`]) is served from the cache while the value is fresh
//! (younger than `ttlMs`). A stale or missing value is refreshed through the one invoke path
//! with actor scheduler — nobody tapped, so it only reads and never asks: an ask-mode source is
//! declined. Concurrent reads of one stale source wait on that source's lock and share the one
//! refresh. The cache lives in the `source_cache` table, so it survives restarts.

use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::{Value, json};

use crate::engine::{Engine, Shared};
use crate::invoke::{Call, Outcome, PluginHandler, ToolContext};
use crate::policy::{Actor, Code};
use crate::registry::{Tool, model_name};
use crate::store::StoreError;

/// One data source, as `dashboard.sources` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub plugin: String,
    pub key: String,
    pub title: String,
    /// The tool id, `plugin.tool`.
    pub tool: String,
    /// The name the model calls it by.
    pub model_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    pub ttl_ms: u64,
}

/// A value read through the cache.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRead {
    pub value: Value,
    pub fetched_at_ms: i64,
    /// Served from the cache without a call.
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("plugin \"{plugin}\" has no data source \"{key}\"")]
    NoSuchSource { plugin: String, key: String },
    /// The invoke path refused the refresh (e.g. `declined` for an ask-mode source).
    #[error("{}: {message}", code.as_str())]
    Refused { code: Code, message: String },
    #[error("the source's tool failed: {0}")]
    Failed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The refresh lock of one source.
type RefreshLock = Arc<tokio::sync::Mutex<()>>;

/// One lock per source, so concurrent refreshes of a source collapse into one call.
#[derive(Default)]
pub struct SourceLocks {
    locks: Mutex<FxHashMap<(String, String), RefreshLock>>,
}

impl SourceLocks {
    fn of(&self, plugin: &str, key: &str) -> RefreshLock {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks
            .entry((plugin.to_owned(), key.to_owned()))
            .or_default()
            .clone()
    }
}

impl Engine {
    /// Every enabled plugin's data sources.
    pub fn data_sources(&self) -> Vec<SourceInfo> {
        let state = self.state();
        state
            .registry
            .plugins()
            .filter(|p| state.installed.get(&p.id).is_some_and(|i| i.enabled))
            .flat_map(|p| {
                p.data_sources.iter().map(|s| {
                    let tool = format!("{}.{}", p.id, s.tool);
                    SourceInfo {
                        plugin: p.id.clone(),
                        key: s.key.clone(),
                        title: s.title.clone(),
                        model_name: model_name(&tool),
                        tool,
                        args: s.args.clone(),
                        ttl_ms: s.ttl_ms,
                    }
                })
            })
            .collect()
    }

    /// A widget's read of `plugin`'s data source `key`: the cached value while fresh, else one
    /// refresh through the invoke path as a scheduled read.
    pub async fn use_tool_data(&self, plugin: &str, key: &str) -> Result<SourceRead, SourceError> {
        let source = self
            .data_sources()
            .into_iter()
            .find(|s| s.plugin == plugin && s.key == key)
            .ok_or_else(|| SourceError::NoSuchSource {
                plugin: plugin.to_owned(),
                key: key.to_owned(),
            })?;
        let started = self.now_ms();
        let fresh = |cached: &Option<(Value, i64)>, now: i64| {
            cached
                .as_ref()
                .is_some_and(|(_, at)| within_ttl(now, *at, source.ttl_ms))
        };
        let cached = self.cached(plugin, key)?;
        if fresh(&cached, started) {
            let (value, fetched_at_ms) = cached.expect("fresh");
            return Ok(SourceRead {
                value,
                fetched_at_ms,
                cached: true,
            });
        }
        let lock = self.shared.sources.of(plugin, key);
        let _refreshing = lock.lock().await;
        // Whoever held the lock before us may have refreshed it while we waited.
        let cached = self.cached(plugin, key)?;
        if fresh(&cached, self.now_ms()) || cached.as_ref().is_some_and(|(_, at)| *at >= started) {
            let (value, fetched_at_ms) = cached.expect("fresh");
            return Ok(SourceRead {
                value,
                fetched_at_ms,
                cached: true,
            });
        }
        // DESIGN.md §2: a stale entry is refreshed with actor scheduler rules (read only).
        let input = source.args.clone().unwrap_or_else(|| json!({}));
        let call = Call {
            tool: source.tool.clone(),
            actor: Actor::Scheduler,
            input,
            conversation: None,
        };
        match self.invoke(call).await.outcome {
            Outcome::Ran { result, .. } => {
                let at = self.now_ms();
                let text = serde_json::to_string(&result)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                self.shared.store.write(|tx| {
                    tx.execute(
                        "INSERT INTO source_cache (plugin, key, value, fetched_at) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT (plugin, key) DO UPDATE SET value = ?3, fetched_at = ?4",
                        params![plugin, key, text, at],
                    )?;
                    Ok(())
                })?;
                Ok(SourceRead {
                    value: result,
                    fetched_at_ms: at,
                    cached: false,
                })
            }
            Outcome::Refused { code, message } => Err(SourceError::Refused { code, message }),
            Outcome::Failed { message } => Err(SourceError::Failed(message)),
        }
    }

    fn cached(&self, plugin: &str, key: &str) -> Result<Option<(Value, i64)>, StoreError> {
        let row: Option<(String, i64)> = self.shared.store.read(|c| {
            Ok(c.query_row(
                "SELECT value, fetched_at FROM source_cache WHERE plugin = ?1 AND key = ?2",
                [plugin, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
        })?;
        row.map(|(text, at)| {
            serde_json::from_str(&text)
                .map(|v| (v, at))
                .map_err(|e| StoreError::Corrupt(format!("source_cache {plugin}.{key}: {e}")))
        })
        .transpose()
    }
}

pub(crate) fn dashboard_manifest() -> Value {
    json!({
        "id": "dashboard",
        "title": "仪表盘",
        "i18n": {"en": {"title": "Dashboard", "tools": {"sources": {"title": "Data sources"}}}},
        "tools": [
            {"name": "sources", "title": "数据源", "effect": "read",
             "description": "Read tools that plugins offer for widgets and scheduled checks, with what each shows and how long its value stays fresh (ttlMs). Use one as a check's tool in scheduler__create."}
        ]
    })
}

pub(crate) struct DashboardPlugin {
    pub(crate) engine: Weak<Shared>,
}

#[async_trait]
impl PluginHandler for DashboardPlugin {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        let engine = Engine::from_weak(&self.engine).ok_or("the app is closing")?;
        match tool.name.as_str() {
            "sources" => Ok(json!({"sources": engine.data_sources()})),
            other => Err(format!("dashboard has no tool {other}")),
        }
    }
}

/// Whether a value fetched at `at` is still fresh at `now`. Counted without overflow: a clock
/// set back (`now` before `at`) counts as fresh only within the ttl, and a ttl past what i64
/// holds never expires.
fn within_ttl(now: i64, at: i64, ttl_ms: u64) -> bool {
    let age = i128::from(now) - i128::from(at);
    age < i128::from(ttl_ms)
}

#[cfg(test)]
mod tests {
    #[test]
    fn freshness_is_counted_without_overflow_at_the_ends_of_time() {
        assert!(super::within_ttl(i64::MAX, 0, u64::MAX));
        assert!(!super::within_ttl(i64::MAX, i64::MIN, u64::MAX));
        assert!(!super::within_ttl(i64::MAX, i64::MIN, 1));
        assert!(super::within_ttl(i64::MIN, i64::MAX, 0));
        assert!(super::within_ttl(1_000, 0, 1_001));
        assert!(!super::within_ttl(1_000, 0, 1_000));
    }
}
