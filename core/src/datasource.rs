//! Data sources (seed 004, DESIGN.md §2): read tools a plugin lists in `dataSources` with a
//! cache lifetime, for widgets and the agent (`dashboard.sources`).
//!
//! A widget's read ([`DataSources::read`]) is served from the cache while the value is fresh
//! (younger than `ttlMs`). A stale or missing value is refreshed through the one invoke path
//! with actor scheduler — nobody tapped, so it only reads and never asks: an ask-mode source is
//! declined. Concurrent reads of one stale source wait on that source's lock and share the one
//! refresh. The cache lives in the `source_cache` table, so it survives restarts.

use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::{Value, json};

use crate::clock::Clock;
use crate::handler::{PluginHandler, ToolContext};
use crate::installed::InstalledPlugins;
use crate::invoke::{Call, Invoker, Outcome};
use crate::policy::{Actor, Code};
use crate::registry::Tool;
use crate::store::sources as rows;
use crate::store::{Store, StoreError};

pub use crate::installed::SourceInfo;

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
struct SourceLocks {
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

/// The data sources' cache and the refreshes through the invoke path.
pub struct DataSources {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    plugins: Arc<InstalledPlugins>,
    invoker: Arc<Invoker>,
    locks: SourceLocks,
}

impl DataSources {
    pub(crate) fn new(
        store: Arc<Store>,
        clock: Arc<dyn Clock>,
        plugins: Arc<InstalledPlugins>,
        invoker: Arc<Invoker>,
    ) -> Self {
        Self {
            store,
            clock,
            plugins,
            invoker,
            locks: SourceLocks::default(),
        }
    }

    /// A widget's read of `plugin`'s data source `key`: the cached value while fresh, else one
    /// refresh through the invoke path as a scheduled read.
    pub async fn read(&self, plugin: &str, key: &str) -> Result<SourceRead, SourceError> {
        let source = self
            .plugins
            .data_sources()
            .into_iter()
            .find(|s| s.plugin == plugin && s.key == key)
            .ok_or_else(|| SourceError::NoSuchSource {
                plugin: plugin.to_owned(),
                key: key.to_owned(),
            })?;
        let started = self.clock.now_ms();
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
        let lock = self.locks.of(plugin, key);
        let _refreshing = lock.lock().await;
        // Whoever held the lock before us may have refreshed it while we waited.
        let cached = self.cached(plugin, key)?;
        if fresh(&cached, self.clock.now_ms())
            || cached.as_ref().is_some_and(|(_, at)| *at >= started)
        {
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
        match self.invoker.invoke(call).await.outcome {
            // A campus sign-in or check to do is no value: kept for the TTL, it would hide the
            // value for minutes after the student did it.
            Outcome::Ran { result, .. } if waits_on_student(&result) => Ok(SourceRead {
                value: result,
                fetched_at_ms: self.clock.now_ms(),
                cached: false,
            }),
            Outcome::Ran { result, .. } => {
                let at = self.clock.now_ms();
                let text = serde_json::to_string(&result)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                self.store
                    .write(|tx| rows::put_cached(tx, plugin, key, &text, at))?;
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

    /// The value last read for `plugin`'s data source `key`, fresh or not, without a call.
    pub fn last_value(&self, plugin: &str, key: &str) -> Option<Value> {
        self.cached(plugin, key)
            .ok()
            .flatten()
            .map(|(value, _)| value)
    }

    fn cached(&self, plugin: &str, key: &str) -> Result<Option<(Value, i64)>, StoreError> {
        let row = self.store.read(|c| rows::cached(c, plugin, key))?;
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
        "description": "各插件提供的数据（余额、食堂人数等），给小组件和定时检查用。",
        "i18n": {"en": {"title": "Dashboard", "description": "The data plugins offer (the balance, the canteens' crowding…) for widgets and scheduled checks.", "tools": {"sources": {"title": "Data sources"}}}},
        "tools": [
            {"name": "sources", "title": "数据源", "effect": "read",
             "description": "Read tools that plugins offer for widgets and scheduled checks, with what each shows and how long its value stays fresh (ttlMs). Use one as a check's tool in scheduler__create."}
        ]
    })
}

/// Held weakly: the installed plugins hold this plugin, so a strong reference back would be a
/// cycle.
pub(crate) struct DashboardPlugin {
    pub(crate) plugins: Weak<InstalledPlugins>,
}

#[async_trait]
impl PluginHandler for DashboardPlugin {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        let plugins = self.plugins.upgrade().ok_or("the app is closing")?;
        match tool.name.as_str() {
            "sources" => Ok(json!({"sources": plugins.data_sources()})),
            other => Err(format!("dashboard has no tool {other}")),
        }
    }
}

/// A status answer (seed 004: `{status: …}` is a result) that waits on the student: the
/// campus sign-in, or a second check.
fn waits_on_student(result: &Value) -> bool {
    matches!(
        result["status"].as_str(),
        Some("signin_required" | "verification_required")
    )
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
