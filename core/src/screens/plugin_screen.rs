//! A plugin's own screens (DESIGN.md §2, seed 004: "a screen calls it with invoke when the user
//! taps"), declared as data in its manifest (`screens`) and turned here into one screen model
//! that each shell draws with one renderer: no plugin code runs in a shell. A value, list or
//! table reads a data source through its cache or a read tool as the student's own call; the
//! only taps that call anything else are a form's send and an action's button, each `invoke`
//! with actor `user` through the one path every gate decides. Each section carries its own
//! state — ready, empty, error, or the campus sign-in or check it waits for, with the tap that
//! mends it — so one failing service never blanks the others.
//!
//! Today (route `Today`) is the same idea across plugins: a tile per data source, its value in
//! words and its age, read through the cache by the source's TTL; a tap opens the plugin's
//! screen that shows the source.

use std::sync::Mutex;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value, json};

use super::campus::CampusCheck;
use super::remote::{FieldValue, FormFieldRow, row, typed};
use super::results::{field_label, value_words};
use super::texts::{refusal_words, title, tr};
use super::{Acted, Action, Button, ButtonRole, LabelValue, Route, tap};
use crate::datasource::SourceError;
use crate::engine::{Engine, EngineError};
use crate::invoke::{Call, Outcome};
use crate::plugins::elicitation::Elicitation;
use crate::policy::{Actor, Code};
use crate::registry::{
    Effect, FieldLabel, Plugin, ScreenManifest, SectionManifest, SectionShow, Tool,
};
use crate::settings::Language;

/// What a section has to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum SectionState {
    /// Read, with something to show (a form or an action is always ready).
    Ready,
    /// Read, and the list has nothing in it: `message` says so.
    Empty,
    /// The read failed or was refused: `message` says why.
    Error,
    /// The campus account must sign in again: `button` opens the sign-in.
    SignInRequired,
    /// A second check is asked (Treehole's SMS, the course API's): `button` opens it.
    VerificationRequired,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum SectionKind {
    Value,
    List,
    Table,
    Form,
    Action,
}

/// One section of a plugin screen.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ScreenSection {
    pub title: String,
    pub kind: SectionKind,
    pub state: SectionState,
    /// The words of a state that is not ready.
    pub message: Option<String>,
    /// A value's fields: labelled, units in the label.
    pub values: Vec<LabelValue>,
    /// A list's or table's column labels, in the declared order.
    pub columns: Vec<String>,
    /// A list's or table's items: each one's cells under `columns`.
    pub rows: Vec<Vec<String>>,
    /// How old the data source's value is ("2 分钟前"); none for a tool read now.
    pub age: Option<String>,
    /// A form's inputs, typed by its tool's schema.
    pub fields: Vec<FormFieldRow>,
    /// A form's send, an action's button, or the tap that mends the state.
    pub button: Option<Button>,
}

/// A plugin's declared screen, read now.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PluginScreen {
    pub plugin: String,
    pub screen: String,
    pub title: String,
    pub sections: Vec<ScreenSection>,
}

/// One tile of Today: a data source's value in words and its age.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TodayTile {
    pub plugin: String,
    pub source: String,
    pub title: String,
    pub state: SectionState,
    /// The value's first fields, or what the list holds first.
    pub lines: Vec<LabelValue>,
    pub message: Option<String>,
    pub age: Option<String>,
    /// The plugin's declared screen that shows this source, which a tap opens
    /// (`Screens::plugin_screen(plugin, screen)`).
    pub screen: Option<String>,
    /// The tile's tap: opens that screen (`Action::OpenPluginScreen`), whatever the tile's
    /// state (the screen shows its own, with the tap that mends it); none without a screen.
    pub open: Option<Action>,
    /// The tap that mends a state that is not ready (the campus sign-in).
    pub fix: Option<Button>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TodayScreen {
    pub title: String,
    pub tiles: Vec<TodayTile>,
    /// The campus card's pay code, one tap away (it stays on its own screen).
    pub pay_code: Option<Button>,
    /// What Today says with no tile.
    pub empty: Option<String>,
}

/// The data sources Today shows when the student has chosen none (issue 36: the card's
/// balance, the canteens' crowding, the newest notices, Treehole's follows).
pub const TODAY_DEFAULT: [(&str, &str); 4] = [
    ("wallet", "balance"),
    ("canteen", "crowd"),
    ("notices", "latest"),
    ("treehole", "follows"),
];

/// How many lines a tile shows of its value.
const TILE_LINES: usize = 3;

fn label(lang: Language, words: &FieldLabel) -> String {
    title(lang, &words.zh, words.en.as_deref())
}

fn find_plugin(engine: &Engine, plugin: &str) -> Option<std::sync::Arc<Plugin>> {
    engine
        .installed()
        .read(|s| s.registry.plugin(plugin).cloned())
}

fn no_screen(lang: Language, plugin: &str, screen: &str) -> EngineError {
    EngineError::Invalid(match lang {
        Language::Zh => format!("插件「{plugin}」没有名为「{screen}」的页面"),
        Language::En => format!("plugin \"{plugin}\" has no screen \"{screen}\""),
    })
}

/// Where a tap on one of `plugin`'s screens leads: that screen, if the plugin declares it.
pub(super) fn open(
    engine: &Engine,
    lang: Language,
    plugin: &str,
    screen: &str,
) -> Result<Acted, EngineError> {
    find_plugin(engine, plugin)
        .filter(|p| p.screens.iter().any(|s| s.id == screen))
        .map(|_| Acted::OpenPluginScreen {
            plugin: plugin.into(),
            screen: screen.into(),
        })
        .ok_or_else(|| no_screen(lang, plugin, screen))
}

/// A tap for each screen `plugin` declares, in its order, titled in the student's language:
/// what its page lists so each opens from there.
pub(super) fn links(lang: Language, plugin: &Plugin) -> Vec<Button> {
    plugin
        .screens
        .iter()
        .map(|s| {
            Button::new(
                label(lang, &s.title),
                ButtonRole::Normal,
                Action::OpenPluginScreen {
                    plugin: plugin.id.clone(),
                    screen: s.id.clone(),
                },
            )
        })
        .collect()
}

/// What the student last sent in each form whose tool is a read (a search, a building and a
/// day): the sections reading that tool show its answer to these values. By plugin and tool.
#[derive(Default)]
pub(super) struct Asked(Mutex<FxHashMap<(String, String), Map<String, Value>>>);

impl Asked {
    fn of(&self, plugin: &str, tool: &str) -> Option<Map<String, Value>> {
        crate::lock(&self.0)
            .get(&(plugin.to_owned(), tool.to_owned()))
            .cloned()
    }
}

/// Reads `plugin`'s declared screen `screen` now: each section's data source through its
/// cache, each read tool as the student's own read, with what its form last asked.
pub(super) async fn build(
    engine: &Engine,
    lang: Language,
    asked: &Asked,
    plugin: &str,
    screen: &str,
) -> Result<PluginScreen, EngineError> {
    let p = find_plugin(engine, plugin).ok_or_else(|| no_screen(lang, plugin, screen))?;
    let declared = p
        .screens
        .iter()
        .find(|s| s.id == screen)
        .ok_or_else(|| no_screen(lang, plugin, screen))?;
    let mut sections = Vec::with_capacity(declared.sections.len());
    for section in &declared.sections {
        sections.push(self::section(engine, lang, asked, &p, section).await);
    }
    Ok(PluginScreen {
        plugin: p.id.clone(),
        screen: declared.id.clone(),
        title: label(lang, &declared.title),
        sections,
    })
}

/// Why a section or a tile has nothing to show, in words, with the tap that mends it.
struct Unread {
    state: SectionState,
    message: String,
    button: Option<Button>,
}

/// What a read gave: the value and, for a data source, when it was fetched.
type Read = Result<(Value, Option<i64>), Box<Unread>>;

async fn read(
    engine: &Engine,
    lang: Language,
    plugin: &Plugin,
    section: &SectionManifest,
    input: Value,
) -> Read {
    let (code, message) = if let Some(key) = &section.source {
        match engine.use_tool_data(&plugin.id, key).await {
            Ok(read) => return Ok((read.value, Some(read.fetched_at_ms))),
            Err(SourceError::Refused { code, .. }) => (Some(code), String::new()),
            Err(e) => (None, e.to_string()),
        }
    } else {
        let tool = section.tool.as_deref().unwrap_or_default();
        let call = Call {
            tool: format!("{}.{tool}", plugin.id),
            actor: Actor::User,
            input,
            conversation: None,
        };
        match engine.invoke(call).await.outcome {
            Outcome::Ran { result, .. } => return Ok((result, None)),
            Outcome::Refused { code, .. } => (Some(code), String::new()),
            Outcome::Failed { message } => (None, message),
        }
    };
    Err(Box::new(unread(lang, plugin, code, message)))
}

/// A refused or failed read in the student's words: a campus plugin unavailable while the
/// account is signed out waits for the sign-in; any other refusal says its code's words.
fn unread(lang: Language, plugin: &Plugin, code: Option<Code>, message: String) -> Unread {
    let campus = plugin.requires.iter().any(|r| r == "campus-session");
    match code {
        Some(Code::Unavailable) if campus => signin(lang),
        Some(code) => Unread {
            state: SectionState::Error,
            message: refusal_words(lang, code).into(),
            button: None,
        },
        None => Unread {
            state: SectionState::Error,
            message: match lang {
                Language::Zh => format!("没能读取：{message}"),
                Language::En => format!("Could not read it: {message}"),
            },
            button: None,
        },
    }
}

fn signin(lang: Language) -> Unread {
    Unread {
        state: SectionState::SignInRequired,
        message: tr(
            lang,
            "校园账号需要登录",
            "Your campus account needs to sign in",
        )
        .into(),
        button: Some(Button::new(
            tr(lang, "去登录", "Sign in").into(),
            ButtonRole::Primary,
            Action::Open {
                route: Route::CampusAccount,
            },
        )),
    }
}

/// The state a status answer (seed 004: `{status: …}` is a result) puts a section in, with
/// the tap that mends it.
fn status(lang: Language, value: &Value) -> Option<Unread> {
    match value["status"].as_str()? {
        "signin_required" => Some(signin(lang)),
        "verification_required" => Some(Unread {
            state: SectionState::VerificationRequired,
            message: tr(lang, "需要先完成验证", "A verification is needed first").into(),
            // DESIGN.md §10: the screen of the check the status names, none for one unknown.
            button: CampusCheck::asked_by(value).map(|check| {
                Button::new(
                    tr(lang, "去验证", "Verify").into(),
                    ButtonRole::Primary,
                    Action::Open {
                        route: check.route(),
                    },
                )
            }),
        }),
        _ => None,
    }
}

/// How long ago `at_ms` was, in words.
fn age_words(lang: Language, now_ms: i64, at_ms: i64) -> String {
    let minutes = (now_ms - at_ms).max(0) / 60_000;
    match (lang, minutes) {
        (Language::Zh, 0) => "刚刚更新".into(),
        (Language::En, 0) => "Updated just now".into(),
        (Language::Zh, m) if m < 60 => format!("{m} 分钟前更新"),
        (Language::En, 1) => "Updated 1 minute ago".into(),
        (Language::En, m) if m < 60 => format!("Updated {m} minutes ago"),
        (Language::Zh, m) => format!("{} 小时前更新", m / 60),
        (Language::En, m) if m < 120 => "Updated 1 hour ago".into(),
        (Language::En, m) => format!("Updated {} hours ago", m / 60),
    }
}

fn kind(show: SectionShow) -> SectionKind {
    match show {
        SectionShow::Value => SectionKind::Value,
        SectionShow::List => SectionKind::List,
        SectionShow::Table => SectionKind::Table,
        SectionShow::Form => SectionKind::Form,
        SectionShow::Action => SectionKind::Action,
    }
}

/// The tool a section reads or calls: its data source's, or its own.
fn tool_of<'a>(plugin: &'a Plugin, section: &SectionManifest) -> Option<&'a Tool> {
    match &section.source {
        Some(key) => source_tool(plugin, key),
        None => named(plugin, section.tool.as_deref()?),
    }
}

fn source_tool<'a>(plugin: &'a Plugin, key: &str) -> Option<&'a Tool> {
    named(
        plugin,
        &plugin.data_sources.iter().find(|s| s.key == key)?.tool,
    )
}

fn named<'a>(plugin: &'a Plugin, name: &str) -> Option<&'a Tool> {
    plugin
        .tools
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.as_ref())
}

/// A list's or table's items, in the declared order.
fn items<'a>(value: &'a Value, section: &SectionManifest) -> Vec<&'a Value> {
    let mut items: Vec<&Value> = value[section.items.as_deref().unwrap_or_default()]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if let Some(by) = &section.sort_by {
        items.sort_by(|a, b| order(&a[by.as_str()], &b[by.as_str()]));
        if section.descending {
            items.reverse();
        }
    }
    items
}

fn tool_title(lang: Language, tool: &Tool) -> String {
    title(lang, &tool.title, tool.title_en.as_deref())
}

async fn section(
    engine: &Engine,
    lang: Language,
    asked: &Asked,
    plugin: &Plugin,
    section: &SectionManifest,
) -> ScreenSection {
    let tool = tool_of(plugin, section);
    let mut view = ScreenSection {
        title: section.title.as_ref().map_or_else(
            || tool.map(|t| tool_title(lang, t)).unwrap_or_default(),
            |t| label(lang, t),
        ),
        kind: kind(section.show),
        state: SectionState::Ready,
        message: None,
        values: Vec::new(),
        columns: Vec::new(),
        rows: Vec::new(),
        age: None,
        fields: Vec::new(),
        button: None,
    };
    let Some(tool) = tool else {
        return view;
    };
    match section.show {
        SectionShow::Action => {
            view.button = Some(Button::new(
                view.title.clone(),
                ButtonRole::Primary,
                Action::RunTool {
                    tool: tool.id.clone(),
                },
            ));
            return view;
        }
        SectionShow::Form => {
            view.fields = form_fields(lang, tool, asked.of(&plugin.id, &tool.name));
            view.button = Some(Button::new(
                tr(lang, "提交", "Send").into(),
                ButtonRole::Primary,
                Action::SubmitScreenForm {
                    plugin: plugin.id.clone(),
                    tool: tool.name.clone(),
                    values: Vec::new(),
                },
            ));
            return view;
        }
        SectionShow::Value | SectionShow::List | SectionShow::Table => {}
    }
    // A read tool's input: the declared args, and what its form last asked.
    let mut input = section.args.clone().unwrap_or_else(|| json!({}));
    if let (Value::Object(args), Some(typed)) = (&mut input, asked.of(&plugin.id, &tool.name)) {
        args.extend(typed);
    }
    if section.source.is_none() && tool.input.validate(&input).is_err() {
        view.state = SectionState::Empty;
        view.message = Some(
            tr(
                lang,
                "填写上面的表单后显示",
                "Fill in the form above to see this",
            )
            .into(),
        );
        return view;
    }
    let read = read(engine, lang, plugin, section, input).await;
    let shown = read.and_then(|(value, at)| match status(lang, &value) {
        Some(unread) => Err(Box::new(unread)),
        None => Ok((value, at)),
    });
    let (value, fetched_at) = match shown {
        Ok(read) => read,
        Err(unread) => {
            view.state = unread.state;
            view.message = Some(unread.message);
            view.button = unread.button;
            return view;
        }
    };
    view.age = fetched_at.map(|at| age_words(lang, engine.now_ms(), at));
    let declared = tool.output.as_ref().map(|o| o.source());
    if section.show == SectionShow::Value {
        view.values = section
            .fields
            .iter()
            .filter(|f| value.get(f.as_str()).is_some())
            .map(|f| LabelValue {
                label: field_label(lang, f, Some(tool), declared),
                value: value_words(lang, &value[f.as_str()]),
            })
            .collect();
        return view;
    }
    view.columns = section
        .fields
        .iter()
        .map(|f| item_label(lang, section, f))
        .collect();
    view.rows = items(&value, section)
        .iter()
        .map(|item| {
            section
                .fields
                .iter()
                .map(|f| cell_words(lang, &item[f.as_str()]))
                .collect()
        })
        .collect();
    if view.rows.is_empty() {
        view.state = SectionState::Empty;
        view.message = Some(section.empty.as_ref().map_or_else(
            || tr(lang, "暂时没有内容", "Nothing here yet").into(),
            |e| label(lang, e),
        ));
    }
    view
}

/// An item's value in a list or table cell: a list of plain values whole (a room's free
/// periods), anything else as a result row says it.
fn cell_words(lang: Language, value: &Value) -> String {
    match value.as_array() {
        Some(items)
            if !items.is_empty() && items.iter().all(|v| !v.is_array() && !v.is_object()) =>
        {
            items
                .iter()
                .map(|v| value_words(lang, v))
                .collect::<Vec<_>>()
                .join(tr(lang, "、", ", "))
        }
        _ => value_words(lang, value),
    }
}

/// Two item values in order: numbers by size, text by its characters; a missing value last.
fn order(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Greater,
        (_, Value::Null) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// An item field's label: the section's `labels`, else the name made readable.
fn item_label(lang: Language, section: &SectionManifest, field: &str) -> String {
    match section.labels.get(field) {
        Some(words) => label(lang, words),
        None => super::results::readable_name(lang, field),
    }
}

/// A form's inputs from its tool's input schema, each labelled as the tool labels it, with
/// what was last sent in it.
fn form_fields(lang: Language, tool: &Tool, sent: Option<Map<String, Value>>) -> Vec<FormFieldRow> {
    let schema = tool.input.source();
    let Ok(fields) = Elicitation::form("", schema) else {
        return Vec::new();
    };
    fields
        .iter()
        .map(|f| {
            let mut shown = FormFieldRow {
                label: field_label(lang, &f.name, Some(tool), Some(schema)),
                ..row(f)
            };
            match sent.as_ref().and_then(|s| s.get(&f.name)) {
                Some(Value::String(text)) => shown.value = text.clone(),
                Some(other) => shown.value = other.to_string(),
                None => {}
            }
            shown
        })
        .collect()
}

/// A form's send: what the student typed, read by the tool's schema. A read tool's values
/// are kept for the sections that read it (the screen read again shows its answer); any other
/// tool is called now as the student's own call, and its answer's status leads where a tap's
/// does.
pub(super) async fn submit(
    engine: &Engine,
    lang: Language,
    asked: &Asked,
    plugin: &str,
    tool: &str,
    values: &[FieldValue],
) -> Result<Acted, EngineError> {
    let p = find_plugin(engine, plugin).ok_or_else(|| no_screen(lang, plugin, tool))?;
    // Only a tool a declared form of the plugin names: a screen never calls another.
    let declared = p
        .screens
        .iter()
        .flat_map(|s| &s.sections)
        .any(|s| s.show == SectionShow::Form && s.tool.as_deref() == Some(tool));
    let t = p
        .tools
        .iter()
        .find(|t| t.name == tool)
        .filter(|_| declared)
        .ok_or_else(|| no_screen(lang, plugin, tool))?;
    let schema = t.input.source();
    let fields = Elicitation::form("", schema).map_err(EngineError::Invalid)?;
    let input = typed(lang, &fields, schema, values).map_err(EngineError::Invalid)?;
    if t.effect == Effect::Read {
        crate::lock(&asked.0).insert((p.id.clone(), t.name.clone()), input);
        return Ok(Acted::Done);
    }
    let call = Call {
        tool: t.id.clone(),
        actor: Actor::User,
        input: Value::Object(input),
        conversation: None,
    };
    match engine.invoke(call).await.outcome {
        Outcome::Ran { result, .. } => tap::follow(lang, &result),
        Outcome::Failed { message } | Outcome::Refused { message, .. } => {
            Err(EngineError::Invalid(message))
        }
    }
}

/// The plugin screen that shows data source `key`, if one does.
fn screen_of<'a>(plugin: &'a Plugin, key: &str) -> Option<&'a ScreenManifest> {
    plugin
        .screens
        .iter()
        .find(|s| s.sections.iter().any(|x| x.source.as_deref() == Some(key)))
}

/// Today: the default data sources of the enabled plugins, each read through its cache.
pub(super) async fn today(engine: &Engine, lang: Language) -> TodayScreen {
    let mut tiles = Vec::new();
    for (plugin, key) in TODAY_DEFAULT {
        let enabled = engine
            .data_sources()
            .iter()
            .any(|s| s.plugin == plugin && s.key == key);
        let Some(p) = find_plugin(engine, plugin).filter(|_| enabled) else {
            continue;
        };
        let Some(source) = p.data_sources.iter().find(|s| s.key == key) else {
            continue;
        };
        tiles.push(tile(engine, lang, &p, &source.key, &source.title).await);
    }
    let wallet = find_plugin(engine, "wallet")
        .filter(|p| engine.data_sources().iter().any(|s| s.plugin == p.id));
    TodayScreen {
        title: tr(lang, "今天", "Today").into(),
        empty: tiles.is_empty().then(|| {
            tr(
                lang,
                "还没有可显示的内容：在「插件」里打开校园插件",
                "Nothing to show yet: turn on a campus plugin under Plugins",
            )
            .into()
        }),
        tiles,
        pay_code: wallet.map(|_| {
            Button::new(
                tr(lang, "付款码", "Pay code").into(),
                ButtonRole::Primary,
                Action::Open {
                    route: Route::PayCode,
                },
            )
        }),
    }
}

async fn tile(
    engine: &Engine,
    lang: Language,
    plugin: &Plugin,
    key: &str,
    name: &str,
) -> TodayTile {
    let tool = source_tool(plugin, key);
    let shown = screen_of(plugin, key);
    let mut view = TodayTile {
        plugin: plugin.id.clone(),
        source: key.into(),
        title: match (lang, shown) {
            (Language::En, Some(s)) => label(lang, &s.title),
            _ => name.into(),
        },
        state: SectionState::Ready,
        lines: Vec::new(),
        message: None,
        age: None,
        screen: shown.map(|s| s.id.clone()),
        open: shown.map(|s| Action::OpenPluginScreen {
            plugin: plugin.id.clone(),
            screen: s.id.clone(),
        }),
        fix: None,
    };
    let read = match engine.use_tool_data(&plugin.id, key).await {
        Ok(read) => Ok(read),
        Err(SourceError::Refused { code, .. }) => {
            Err(Box::new(unread(lang, plugin, Some(code), String::new())))
        }
        Err(e) => Err(Box::new(unread(lang, plugin, None, e.to_string()))),
    };
    let read = read.and_then(|read| match status(lang, &read.value) {
        Some(unread) => Err(Box::new(unread)),
        None => Ok(read),
    });
    let read = match read {
        Ok(read) => read,
        Err(unread) => {
            view.state = unread.state;
            view.message = Some(unread.message);
            view.fix = unread.button;
            return view;
        }
    };
    view.age = Some(age_words(lang, engine.now_ms(), read.fetched_at_ms));
    // The lines the plugin's own screen shows first: its value's fields, or its list's items.
    let section = shown.and_then(|s| s.sections.iter().find(|x| x.source.as_deref() == Some(key)));
    let declared = tool.and_then(|t| t.output.as_ref()).map(|o| o.source());
    view.lines = match section {
        Some(s) if s.show == SectionShow::Value => s
            .fields
            .iter()
            .filter(|f| read.value.get(f.as_str()).is_some())
            .take(TILE_LINES)
            .map(|f| LabelValue {
                label: field_label(lang, f, tool, declared),
                value: value_words(lang, &read.value[f.as_str()]),
            })
            .collect(),
        Some(s) => items(&read.value, s)
            .iter()
            .take(TILE_LINES)
            .map(|item| {
                let mut cells = s
                    .fields
                    .iter()
                    .map(|f| value_words(lang, &item[f.as_str()]));
                LabelValue {
                    label: cells.next().unwrap_or_default(),
                    value: cells.collect::<Vec<_>>().join(" · "),
                }
            })
            .collect(),
        None => super::results::rows(lang, &read.value, tool)
            .into_iter()
            .take(TILE_LINES)
            .collect(),
    };
    if view.lines.is_empty() {
        view.state = SectionState::Empty;
        view.message = Some(tr(lang, "暂时没有内容", "Nothing here yet").into());
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_waiting_on_a_check_opens_the_screen_of_the_check_its_status_names() {
        // DESIGN.md §10: Treehole's status names no check; the course API's names `grades`.
        let fix =
            |v: Value| status(Language::En, &v).map(|u| (u.state, u.button.map(|b| b.action)));
        let opens = |route| {
            Some((
                SectionState::VerificationRequired,
                Some(Action::Open { route }),
            ))
        };
        assert_eq!(
            fix(json!({"status": "verification_required", "methods": ["sms", "otp"]})),
            opens(Route::TreeholeCheck)
        );
        assert_eq!(
            fix(json!({"status": "verification_required", "check": "grades"})),
            opens(Route::GradesCheck)
        );
        assert_eq!(
            fix(json!({"status": "verification_required", "check": "library"})),
            Some((SectionState::VerificationRequired, None))
        );
    }
}
