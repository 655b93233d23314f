//! The core's own bundled plugins (seed 000): `settings` (the agent changes settings through
//! it, under its own write mode), `memory` (pending approval after untrusted content), and
//! `files` (attached documents, whose content is third-party and taints the turn). The
//! `time` (campus time: 明天第3-4节 as exact Beijing times, `campus_time`). The `scheduler` and
//! `dashboard` plugins are listed here too; their code is in `scheduler::plugin` and
//! `datasource`.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::conversations::Conversations;
use crate::error::EngineError;
use crate::handler::{Assessment, PluginHandler, ToolContext};
use crate::installed::{InstalledPlugins, PluginView};
use crate::memories::{Memories, MemoryState};
use crate::registry::{Plugin, PluginKind, Tool, parse_manifest};
use crate::scheduler::Scheduler;
use crate::settings::{Change, KEYS, Settings, parse_change};
use crate::turn::Scope;

/// Characters per page of an attached document.
pub const PAGE_CHARS: usize = 4000;

/// The screens the agent may ask the shell to open: what needs the user's hands (seed 000:
/// secrets and hands-on steps are uiOnly).
pub const SCREENS: [&str; 6] = [
    "api-keys",
    "campus-account",
    "system-permissions",
    "cloud",
    "treehole-verification",
    "grades-verification",
];

/// The ids of the core's own plugins, made by [`plugins`]: no other plugin may take one (an
/// author's bundle is refused by name, `script::WithAuthored`).
pub const IDS: [&str; 6] = [
    "settings",
    "memory",
    "files",
    "scheduler",
    "dashboard",
    "time",
];

/// What the settings plugin needs of the core. The engine implements it: a change reaches
/// several owners (the settings, the installed plugins, the rules).
pub(crate) trait SettingsControl: Send + Sync {
    fn settings(&self) -> Settings;
    fn plugins(&self) -> Vec<PluginView>;
    /// Whether a change loosens a permission (DESIGN.md §3 8e).
    fn loosens(&self, change: &Change) -> bool;
    /// Applies a checked change.
    fn apply(&self, change: Change) -> Result<(), EngineError>;
    /// Asks the shell to open one of [`SCREENS`].
    fn open_screen(&self, screen: &str);
}

/// What the core's own plugins are given. Those the installed plugins reach back to are held
/// weakly, so that no cycle of strong references keeps the core alive.
pub(crate) struct Owners {
    pub settings: Weak<dyn SettingsControl>,
    pub memories: Arc<Memories>,
    pub conversations: Arc<Conversations>,
    pub scheduler: Weak<Scheduler>,
    pub plugins: Weak<InstalledPlugins>,
}

/// The core's own plugins' manifests, in the order [`plugins`] gives them.
fn manifests() -> [Value; 6] {
    [
        settings_manifest(),
        time_manifest(),
        memory_manifest(),
        files_manifest(),
        crate::scheduler::plugin::manifest(),
        crate::datasource::dashboard_manifest(),
    ]
}

pub(crate) fn plugins(owners: Owners) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
    // Built with the library and checked whole by its tests (below): their schemas are compiled
    // on a tool's first use, so that opening a data directory runs no JavaScript (issue 40).
    let [settings, time, memory, files, scheduler, dashboard] = manifests();
    let load = |json: Value| {
        Plugin::reload(
            parse_manifest(&json).expect("built-in manifest"),
            PluginKind::Bundled,
        )
        .expect("built-in plugin")
    };
    vec![
        (
            load(settings),
            Arc::new(SettingsPlugin {
                core: owners.settings.clone(),
            }) as Arc<dyn PluginHandler>,
        ),
        (
            load(time),
            Arc::new(TimePlugin {
                core: owners.settings,
            }),
        ),
        (
            load(memory),
            Arc::new(MemoryPlugin {
                memories: owners.memories,
            }),
        ),
        (
            load(files),
            Arc::new(FilesPlugin {
                conversations: owners.conversations,
            }),
        ),
        (
            load(scheduler),
            Arc::new(crate::scheduler::plugin::SchedulerPlugin {
                scheduler: owners.scheduler,
            }),
        ),
        (
            load(dashboard),
            Arc::new(crate::datasource::DashboardPlugin {
                plugins: owners.plugins,
            }),
        ),
    ]
}

fn settings_manifest() -> Value {
    json!({
        "id": "settings",
        "title": "设置",
        "description": "应用的设置：语言、时区、模型和各插件的权限；也能打开相应的设置页面。",
        "i18n": {"en": {"title": "Settings", "description": "The app's settings: language, time zone, the model and each plugin's permissions; it also opens the settings' screens.", "tools": {
            "get": {"title": "Read settings"}, "change": {"title": "Change a setting"}, "openScreen": {"title": "Open a settings screen"}
        }}},
        "tools": [
            {"name": "get", "title": "查看设置", "effect": "read",
             "description": "The app's settings: appearance, language, time zone, model, and each plugin's switch and AI permission modes."},
            {"name": "change", "title": "修改设置", "effect": "write",
             "description": format!("Change one setting. key is one of: {KEYS}. Changes that loosen a permission ask the user first."),
             "input": {"type": "object", "properties": {
                 "key": {"type": "string", "description": "The setting's key"},
                 "value": {"description": "The new value"}
             }, "required": ["key", "value"], "additionalProperties": false}},
            {"name": "openScreen", "title": "打开设置页面", "effect": "read",
             "description": "Ask the app to open a screen where the user does something only they can do: enter an API key, sign in to the campus account, grant a system permission, or allow a plugin's cloud use.",
             "input": {"type": "object", "properties": {"screen": {"enum": SCREENS}}, "required": ["screen"], "additionalProperties": false}}
        ]
    })
}

fn time_manifest() -> Value {
    json!({
        "id": "time",
        "title": "校园时间",
        "description": "把“明天第3-4节”“第12周星期二”“下周三下午3点”换算成北京时间。",
        "i18n": {"en": {"title": "Campus time", "description": "Turns 明天第3-4节, 第12周星期二 or 下周三下午3点 into exact Beijing times.", "tools": {
            "resolve": {"title": "Resolve a campus time"}
        }}},
        "tools": [
            {"name": "resolve", "title": "换算校园时间", "effect": "read",
             "description": "Exact Beijing times for a time said in words: 今天/明天/后天, 下周三, 明天下午3点, 8点半, 第N周星期X (teaching weeks from the semester's first Monday, the setting campus.semesterStart), 第3-4节 (PKU's class periods: 第1节 08:00, 第12节 ends 21:30), 单周/双周. Returns start and end (YYYY-MM-DD HH:mm, Beijing; equal for a moment, the next day's 00:00 for a whole day), startMs/endMs, date, weekday (1 = Monday), week (teaching week, null before the semester) and periods. Use it before setting a reminder or reading a timetable; never work out week numbers yourself.",
             "input": {"type": "object", "properties": {
                 "text": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The time as the student said it, e.g. 明天第3-4节"}
             }, "required": ["text"], "additionalProperties": false}}
        ]
    })
}

fn memory_manifest() -> Value {
    json!({
        "id": "memory",
        "title": "记忆",
        "description": "助手记住的关于你的事；新的记忆要你同意后才生效。",
        "i18n": {"en": {"title": "Memory", "description": "What the assistant remembers about you; a new memory counts only once you approve it.", "tools": {
            "write": {"title": "Remember"}, "list": {"title": "Memories"}, "approve": {"title": "Approve a memory"}, "reject": {"title": "Reject a memory"}
        }}},
        "tools": [
            {"name": "write", "title": "记住", "effect": "write",
             "description": "Remember a fact about the user for later conversations. After untrusted content was read in this turn, the memory waits for the user's approval.",
             "input": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 2000}}, "required": ["text"], "additionalProperties": false}},
            {"name": "list", "title": "查看记忆", "effect": "read", "description": "Every memory with its state (active, pending, rejected) and the conversation and turn it came from."},
            {"name": "approve", "title": "批准记忆", "effect": "write", "userOnly": true,
             "input": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}},
            {"name": "reject", "title": "拒绝记忆", "effect": "write", "userOnly": true,
             "input": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}}
        ]
    })
}

fn files_manifest() -> Value {
    json!({
        "id": "files",
        "title": "文件",
        "description": "你附加到对话里的文档：分页阅读和搜索。",
        "i18n": {"en": {"title": "Files", "description": "The documents you attach to a conversation, read page by page and searched.", "tools": {
            "list": {"title": "Attached documents"}, "page": {"title": "Read a page"}, "search": {"title": "Search a document"}
        }}},
        "tools": [
            {"name": "list", "title": "已附加的文档", "effect": "read", "untrusted": true,
             "description": "Documents the user attached to this conversation, with their ids and page counts."},
            {"name": "page", "title": "阅读文档", "effect": "read", "untrusted": true,
             "description": format!("One page ({PAGE_CHARS} characters) of an attached document. Pages count from 1."),
             "input": {"type": "object", "properties": {"document": {"type": "integer"}, "page": {"type": "integer", "minimum": 1}}, "required": ["document", "page"], "additionalProperties": false}},
            {"name": "search", "title": "搜索文档", "effect": "read", "untrusted": true,
             "description": "Where a word or phrase appears in an attached document: page numbers and a snippet around each match.",
             "input": {"type": "object", "properties": {"document": {"type": "integer"}, "query": {"type": "string", "minLength": 1}}, "required": ["document", "query"], "additionalProperties": false}}
        ]
    })
}

struct SettingsPlugin {
    core: Weak<dyn SettingsControl>,
}

#[async_trait]
impl PluginHandler for SettingsPlugin {
    fn assess(&self, tool: &Tool, input: &Value, _scope: &Scope) -> Assessment {
        let sensitive = tool.name == "change"
            && match (self.core.upgrade(), input["key"].as_str()) {
                (Some(core), Some(key)) => {
                    parse_change(key, &input["value"]).is_ok_and(|change| core.loosens(&change))
                }
                _ => false,
            };
        Assessment {
            sensitive,
            ..Assessment::default()
        }
    }

    async fn run(&self, tool: &Tool, input: Value, _ctx: ToolContext) -> Result<Value, String> {
        let core = self.core.upgrade().ok_or("the app is closing")?;
        match tool.name.as_str() {
            "get" => {
                let plugins: Vec<Value> = core
                    .plugins()
                    .into_iter()
                    .map(|p| {
                        let modes: serde_json::Map<String, Value> =
                            p.modes.iter().map(|(e, m, _)| (e.as_str().to_owned(), json!(m.as_str()))).collect();
                        json!({"id": p.plugin.id, "title": p.plugin.title, "enabled": p.enabled, "modes": modes})
                    })
                    .collect();
                Ok(json!({"settings": core.settings(), "plugins": plugins}))
            }
            "change" => {
                let key = input["key"].as_str().unwrap_or_default();
                let change = parse_change(key, &input["value"]).map_err(|e| e.to_string())?;
                core.apply(change).map_err(|e| e.to_string())?;
                Ok(json!({"status": "changed", "key": key}))
            }
            "openScreen" => {
                // The input schema allows only SCREENS, so the shell gets a route it knows.
                let screen = input["screen"].as_str().unwrap_or_default().to_owned();
                core.open_screen(&screen);
                Ok(json!({"status": "open_screen", "screen": screen}))
            }
            other => Err(format!("settings has no tool {other}")),
        }
    }
}

/// `time.resolve`: the core's clock (the call's `now`) and the semester setting.
struct TimePlugin {
    core: Weak<dyn SettingsControl>,
}

#[async_trait]
impl PluginHandler for TimePlugin {
    async fn run(&self, _tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let core = self.core.upgrade().ok_or("the app is closing")?;
        let text = input["text"].as_str().unwrap_or_default();
        let start = core.settings().campus.semester_start;
        crate::campus_time::resolve_setting(text, ctx.now.ms, &start)
            .map(|resolved| json!(resolved))
            .map_err(|e| e.to_string())
    }
}

struct MemoryPlugin {
    memories: Arc<Memories>,
}

#[async_trait]
impl PluginHandler for MemoryPlugin {
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let memories = &self.memories;
        let id = || input["id"].as_i64().ok_or("id is missing".to_owned());
        match tool.name.as_str() {
            "write" => {
                let text = input["text"].as_str().unwrap_or_default();
                // seed 000: after untrusted content, a memory waits for the user's approval.
                let tainted = ctx.actor != crate::policy::Actor::User && ctx.tainted;
                let memory = memories
                    .write(
                        text,
                        ctx.conversation.as_deref(),
                        ctx.turn.as_ref().map(|t| t.number),
                        tainted,
                    )
                    .map_err(|e| e.to_string())?;
                let message = match memory.state {
                    MemoryState::Pending => {
                        "Saved as pending: it takes effect once the user approves it on the memory screen."
                    }
                    _ => "Remembered.",
                };
                Ok(json!({"id": memory.id, "state": memory.state, "message": message}))
            }
            "list" => Ok(json!({"memories": memories.all().map_err(|e| e.to_string())?})),
            "approve" => {
                Ok(json!({"memory": memories.decide(id()?, true).map_err(|e| e.to_string())?}))
            }
            "reject" => {
                Ok(json!({"memory": memories.decide(id()?, false).map_err(|e| e.to_string())?}))
            }
            other => Err(format!("memory has no tool {other}")),
        }
    }
}

struct FilesPlugin {
    conversations: Arc<Conversations>,
}

#[async_trait]
impl PluginHandler for FilesPlugin {
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let conversation = ctx
            .conversation
            .ok_or("attached documents belong to a conversation")?;
        let documents = self
            .conversations
            .documents(&conversation)
            .map_err(|e| e.to_string())?;
        let pages = |text: &str| text.chars().count().div_ceil(PAGE_CHARS).max(1);
        if tool.name == "list" {
            let list: Vec<Value> = documents
                .iter()
                .map(|(id, name, text)| json!({"id": id, "name": name, "pages": pages(text)}))
                .collect();
            return Ok(json!({"documents": list}));
        }
        let wanted = input["document"].as_i64().unwrap_or_default();
        let (_, name, text) = documents
            .iter()
            .find(|(id, _, _)| *id == wanted)
            .ok_or_else(|| {
                format!(
                    "no document {wanted} is attached to this conversation; files__list shows them"
                )
            })?;
        match tool.name.as_str() {
            "page" => {
                let page = input["page"].as_u64().unwrap_or(1) as usize;
                let total = pages(text);
                if page > total {
                    return Ok(json!({"status": "no_such_page", "pages": total}));
                }
                let body: String = text
                    .chars()
                    .skip((page - 1) * PAGE_CHARS)
                    .take(PAGE_CHARS)
                    .collect();
                Ok(json!({"document": name, "page": page, "pages": total, "text": body}))
            }
            "search" => {
                let query = input["query"].as_str().unwrap_or_default().to_lowercase();
                let chars: Vec<char> = text.chars().collect();
                let lower: Vec<char> = text.to_lowercase().chars().collect();
                let needle: Vec<char> = query.chars().collect();
                let mut matches = Vec::new();
                // Lowercasing keeps one char per char for the scripts documents here use; when
                // it does not, matching falls back to the original text.
                let haystack = if lower.len() == chars.len() {
                    &lower
                } else {
                    &chars
                };
                let mut at = 0;
                while at + needle.len() <= haystack.len() && matches.len() < 20 {
                    if haystack[at..at + needle.len()] == needle[..] {
                        let from = at.saturating_sub(60);
                        let to = (at + needle.len() + 60).min(chars.len());
                        matches.push(json!({"page": at / PAGE_CHARS + 1, "snippet": chars[from..to].iter().collect::<String>()}));
                        at += needle.len().max(1);
                    } else {
                        at += 1;
                    }
                }
                Ok(json!({"document": name, "matches": matches}))
            }
            other => Err(format!("files has no tool {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_built_in_manifest_is_checked_whole_as_an_installed_plugin_is() {
        for json in manifests() {
            let id = json["id"].clone();
            let plugin = Plugin::load(parse_manifest(&json).unwrap(), PluginKind::Bundled)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            assert!(!plugin.tools.is_empty(), "{id}");
        }
    }
}
