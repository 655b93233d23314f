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
use super::remote::{FieldOption, FieldValue, FormFieldRow, row, typed};
use super::results::{declared_value_words, field_label, value_words};
use super::texts::{refusal_words, title, tr};
use super::{Acted, Action, Button, ButtonRole, LabelValue, Route, tap};
use crate::datasource::SourceError;
use crate::engine::{Engine, EngineError};
use crate::invoke::{Call, Outcome};
use crate::plugins::elicitation::Elicitation;
use crate::policy::{Actor, Code};
use crate::registry::{
    DataSource, Effect, FieldLabel, Plugin, ScreenManifest, SectionManifest, SectionShow, Tool,
};
use crate::settings::{Language, parse_change, today_tile};

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
    /// Each row's tap, in the order of `rows`, where the section's items open a screen (a
    /// feed's post opens the post); empty where they open none.
    pub row_opens: Vec<Action>,
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
    /// The plugin's declared screen that shows this source, if one does.
    pub screen: Option<String>,
    /// The tile's tap (`Action::OpenDataSource`): the screen that shows the source, else its
    /// value, whatever the tile's state (the screen shows its own, with the tap that mends
    /// it); none while the plugin is off or gone.
    pub open: Option<Action>,
    /// The tap that mends a state that is not ready (the campus sign-in, the plugins screen
    /// where a plugin that is off is turned on).
    pub fix: Option<Button>,
    /// Today's edit mode: take the tile off Today.
    pub remove: Action,
    /// Today's edit mode: one place up or down; none at either end.
    pub move_up: Option<Action>,
    pub move_down: Option<Action>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TodayScreen {
    pub title: String,
    /// Exactly the tiles the student chose (`today.tiles`), in their order.
    pub tiles: Vec<TodayTile>,
    /// The campus card's pay code, one tap away (it stays on its own screen).
    pub pay_code: Option<Button>,
    /// What Today says with no tile.
    pub empty: Option<String>,
    /// The words of the button that enters Today's edit mode, and of the one that leaves it
    /// (the mode is the shell's: each change in it is an `Action` of the tile or of `addable`).
    pub edit_label: String,
    pub done_label: String,
    /// The heading over `addable`, in edit mode.
    pub add_label: String,
    /// Each data source of an enabled plugin Today does not show yet, by its plugin and title:
    /// a tap adds it last (`Action::AddTodayTile`).
    pub addable: Vec<Button>,
}

/// What a home-screen widget shows (seed 004: "A widget reads it with host.useToolData").
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum WidgetState {
    /// The source's lines and their age.
    Shown,
    /// Signed out of the campus account: no data, only `message` (登录后显示).
    SignedOut,
    /// Nothing to show, or it could not be read: `message` says which.
    Unavailable,
}

/// One home-screen widget: Today's tile of the same data source, read through the same cache,
/// so the widget and Today agree; a shell only lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct WidgetModel {
    pub plugin: String,
    pub source: String,
    pub title: String,
    pub state: WidgetState,
    /// Empty unless `Shown`: a signed-out widget shows no data.
    pub lines: Vec<LabelValue>,
    pub message: Option<String>,
    pub age: Option<String>,
    /// The tap: the screen that shows the source (`Action::OpenDataSource`).
    pub open: Option<Action>,
    /// How often the shell refreshes it: the source's TTL, never below `WIDGET_REFRESH_FLOOR_MS`.
    pub refresh_ms: u64,
}

/// A data source a student may put on a widget, in the student's language.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct WidgetSource {
    pub plugin: String,
    pub source: String,
    /// "校园卡 · 余额": the plugin's title and the source's.
    pub title: String,
}

/// Android refreshes an app widget at most every 30 minutes (`updatePeriodMillis` below
/// 1 800 000 is raised to it) and WidgetKit budgets an iOS widget's reloads alike: a source
/// fresher than that is still read at most this often.
pub const WIDGET_REFRESH_FLOOR_MS: u64 = 30 * 60_000;

/// The widget of one data source: Today's tile of it, its data hidden while signed out.
pub(super) async fn widget(
    engine: &Engine,
    lang: Language,
    plugin: &str,
    key: &str,
) -> Result<WidgetModel, EngineError> {
    let (p, source) = offered(engine, lang, plugin, key)?;
    let refresh_ms = source.ttl_ms.max(WIDGET_REFRESH_FLOOR_MS);
    let tile = tile(engine, lang, &p, &source).await;
    let (state, lines, message, age) = match tile.state {
        SectionState::Ready => (WidgetState::Shown, tile.lines, None, tile.age),
        SectionState::SignInRequired => (
            WidgetState::SignedOut,
            Vec::new(),
            Some(tr(lang, "登录后显示", "Sign in to see this").into()),
            None,
        ),
        _ => (WidgetState::Unavailable, Vec::new(), tile.message, tile.age),
    };
    Ok(WidgetModel {
        plugin: tile.plugin,
        source: tile.source,
        title: tile.title,
        state,
        lines,
        message,
        age,
        open: tile.open,
        refresh_ms,
    })
}

/// Each data source of an enabled plugin, by its plugin's title and its own: what a widget's
/// configure screen lists.
pub(super) fn widget_sources(engine: &Engine, lang: Language) -> Vec<WidgetSource> {
    engine
        .data_sources()
        .iter()
        .filter_map(|s| {
            let p = find_plugin(engine, &s.plugin)?;
            let source = p.data_sources.iter().find(|d| d.key == s.key)?;
            let plugin_title = title(lang, &p.title, p.title_en.as_deref());
            Some(WidgetSource {
                plugin: p.id.clone(),
                source: s.key.clone(),
                title: format!("{plugin_title} · {}", source_title(lang, &p, source)),
            })
        })
        .collect()
}

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

/// A tap for each screen `plugin` declares that needs nothing to show, in its order, titled
/// in the student's language: what its page lists so each opens from there. A screen an item
/// opens (a post's, from a feed's post) is reached from its items only.
pub(super) fn links(lang: Language, plugin: &Plugin) -> Vec<Button> {
    let opened: Vec<&str> = plugin
        .screens
        .iter()
        .flat_map(|s| &s.sections)
        .filter_map(|x| Some(x.opens.as_ref()?.screen.as_str()))
        .collect();
    plugin
        .screens
        .iter()
        .filter(|s| !opened.contains(&s.id.as_str()))
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

/// A data source's title in the student's language: its declared title, which is Chinese; in
/// English the title of the screen that shows it, where one does.
pub(super) fn source_title(lang: Language, plugin: &Plugin, source: &DataSource) -> String {
    match (lang, screen_of(plugin, &source.key)) {
        (Language::En, Some(s)) => label(lang, &s.title),
        _ => source.title.clone(),
    }
}

/// A tap for each data source `plugin` offers, in its order: what its page lists, each opening
/// where the source is shown ([`open_source`]).
pub(super) fn source_links(lang: Language, plugin: &Plugin) -> Vec<Button> {
    plugin
        .data_sources
        .iter()
        .map(|d| {
            Button::new(
                source_title(lang, plugin, d),
                ButtonRole::Normal,
                Action::OpenDataSource {
                    plugin: plugin.id.clone(),
                    source: d.key.clone(),
                },
            )
        })
        .collect()
}

fn no_source(lang: Language, plugin: &str, source: &str) -> EngineError {
    EngineError::Invalid(match lang {
        Language::Zh => format!("插件「{plugin}」没有开启名为「{source}」的数据"),
        Language::En => format!("plugin \"{plugin}\" offers no data \"{source}\" while it is on"),
    })
}

/// An enabled plugin and its data source `key`.
fn offered(
    engine: &Engine,
    lang: Language,
    plugin: &str,
    key: &str,
) -> Result<(std::sync::Arc<Plugin>, DataSource), EngineError> {
    let enabled = engine
        .data_sources()
        .iter()
        .any(|s| s.plugin == plugin && s.key == key);
    find_plugin(engine, plugin)
        .filter(|_| enabled)
        .and_then(|p| {
            let source = p.data_sources.iter().find(|s| s.key == key)?.clone();
            Some((p, source))
        })
        .ok_or_else(|| no_source(lang, plugin, key))
}

/// Where a tap on a data source leads: the plugin's screen that shows it, else the source's
/// own value ([`source_screen`]). Decided here, so every shell lands in the same place.
pub(super) fn open_source(
    engine: &Engine,
    lang: Language,
    plugin: &str,
    key: &str,
) -> Result<Acted, EngineError> {
    let (p, _) = offered(engine, lang, plugin, key)?;
    Ok(match screen_of(&p, key) {
        Some(shown) => Acted::OpenPluginScreen {
            plugin: p.id.clone(),
            screen: shown.id.clone(),
        },
        None => Acted::OpenDataSource {
            plugin: p.id.clone(),
            source: key.into(),
        },
    })
}

/// A data source no declared screen shows, as a screen of one section: its value's fields,
/// each labelled as the tool labels it, read through the cache with its age.
pub(super) async fn source_screen(
    engine: &Engine,
    lang: Language,
    plugin: &str,
    key: &str,
) -> Result<PluginScreen, EngineError> {
    let (p, source) = offered(engine, lang, plugin, key)?;
    let title = source_title(lang, &p, &source);
    let mut view = ScreenSection {
        title: title.clone(),
        kind: SectionKind::Value,
        state: SectionState::Ready,
        message: None,
        values: Vec::new(),
        columns: Vec::new(),
        rows: Vec::new(),
        row_opens: Vec::new(),
        age: None,
        fields: Vec::new(),
        button: None,
    };
    match read_source(engine, lang, &p, key).await {
        Ok(read) => {
            view.age = Some(age_words(lang, engine.now_ms(), read.fetched_at_ms));
            view.values = super::results::rows(lang, &read.value, source_tool(&p, key));
            if view.values.is_empty() {
                view.state = SectionState::Empty;
                view.message = Some(tr(lang, "暂时没有内容", "Nothing here yet").into());
            }
        }
        Err(unread) => {
            view.state = unread.state;
            view.message = Some(unread.message);
            view.button = unread.button;
        }
    }
    Ok(PluginScreen {
        plugin: p.id.clone(),
        screen: String::new(),
        title,
        sections: vec![view],
    })
}

/// A data source read through its cache, or why it shows nothing (a refusal, a failure, a
/// status answer that waits on the student).
async fn read_source(
    engine: &Engine,
    lang: Language,
    plugin: &Plugin,
    key: &str,
) -> Result<crate::datasource::SourceRead, Box<Unread>> {
    let read = match engine.use_tool_data(&plugin.id, key).await {
        Ok(read) => read,
        Err(SourceError::Refused { code, .. }) => {
            return Err(Box::new(unread(lang, plugin, Some(code), String::new())));
        }
        Err(e) => return Err(Box::new(unread(lang, plugin, None, e.to_string()))),
    };
    match status(lang, &read.value) {
        Some(unread) => Err(Box::new(unread)),
        None => Ok(read),
    }
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

    /// Keeps what a read form of `plugin`'s `tool` last asked, for the sections that read it.
    fn keep(&self, plugin: &str, tool: &str, input: Map<String, Value>) {
        crate::lock(&self.0).insert((plugin.to_owned(), tool.to_owned()), input);
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
        row_opens: Vec::new(),
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
    let items = items(&value, section);
    view.rows = items
        .iter()
        .map(|item| {
            section
                .fields
                .iter()
                .map(|f| cell_words(lang, &item[f.as_str()]))
                .collect()
        })
        .collect();
    if let Some(opens) = &section.opens {
        view.row_opens = items
            .iter()
            .map(|item| Action::OpenScreenItem {
                plugin: plugin.id.clone(),
                screen: opens.screen.clone(),
                values: opens
                    .args
                    .iter()
                    .map(|(input, field)| FieldValue {
                        name: input.clone(),
                        value: match &item[field.as_str()] {
                            Value::String(text) => text.clone(),
                            Value::Null => String::new(),
                            other => other.to_string(),
                        },
                    })
                    .collect(),
            })
            .collect();
    }
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

/// A form's inputs from its tool's input schema, each labelled as the tool labels it, its
/// choices by the words the tool gives its values, with what was last sent in it. The schema's
/// descriptions are the model's English words: a Chinese form shows none of them.
fn form_fields(lang: Language, tool: &Tool, sent: Option<Map<String, Value>>) -> Vec<FormFieldRow> {
    let schema = tool.input.source();
    let Ok(fields) = Elicitation::form("", schema) else {
        return Vec::new();
    };
    fields
        .iter()
        .map(|f| {
            let plain = row(f);
            let mut shown = FormFieldRow {
                label: field_label(lang, &f.name, Some(tool), Some(schema)),
                hint: match lang {
                    Language::Zh => None,
                    Language::En => plain.hint.clone(),
                },
                options: plain
                    .options
                    .iter()
                    .map(|o| FieldOption {
                        label: declared_value_words(lang, Some(tool), &f.name, &o.value)
                            .unwrap_or_else(|| o.label.clone()),
                        value: o.value.clone(),
                    })
                    .collect(),
                ..plain
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

/// An item's tap (`Action::OpenScreenItem`): the screen a section of `plugin` declares its
/// items open, its read form given the item's values through that tool's schema, as if the
/// student had typed them there; the screen then reads that tool with them.
pub(super) fn open_item(
    engine: &Engine,
    lang: Language,
    asked: &Asked,
    plugin: &str,
    screen: &str,
    values: &[FieldValue],
) -> Result<Acted, EngineError> {
    let p = find_plugin(engine, plugin).ok_or_else(|| no_screen(lang, plugin, screen))?;
    // Only a screen a declared section's items open.
    let declared = declares(&p, |x| x.opens.as_ref().is_some_and(|o| o.screen == screen));
    let tool = p
        .screens
        .iter()
        .find(|s| s.id == screen)
        .filter(|_| declared)
        .and_then(|s| s.item_form()?.tool.as_deref())
        .and_then(|name| named(&p, name))
        .filter(|t| t.effect == Effect::Read)
        .ok_or_else(|| no_screen(lang, plugin, screen))?;
    let input = read_typed(lang, tool, values)?;
    asked.keep(&p.id, &tool.name, input);
    Ok(Acted::OpenPluginScreen {
        plugin: p.id.clone(),
        screen: screen.into(),
    })
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
    let declared = declares(&p, |s| {
        s.show == SectionShow::Form && s.tool.as_deref() == Some(tool)
    });
    let t = named(&p, tool)
        .filter(|_| declared)
        .ok_or_else(|| no_screen(lang, plugin, tool))?;
    let input = read_typed(lang, t, values)?;
    if t.effect == Effect::Read {
        asked.keep(&p.id, &t.name, input);
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

/// Whether a section of one of the plugin's declared screens is as `is` asks.
fn declares(plugin: &Plugin, is: impl Fn(&SectionManifest) -> bool) -> bool {
    plugin.screens.iter().flat_map(|s| &s.sections).any(is)
}

/// What the student typed into `tool`'s form, read by its input schema as the tool takes it.
fn read_typed(
    lang: Language,
    tool: &Tool,
    values: &[FieldValue],
) -> Result<Map<String, Value>, EngineError> {
    let schema = tool.input.source();
    let fields = Elicitation::form("", schema).map_err(EngineError::Invalid)?;
    typed(lang, &fields, schema, values).map_err(EngineError::Invalid)
}

/// The plugin screen that shows data source `key`, if one does.
fn screen_of<'a>(plugin: &'a Plugin, key: &str) -> Option<&'a ScreenManifest> {
    plugin
        .screens
        .iter()
        .find(|s| s.sections.iter().any(|x| x.source.as_deref() == Some(key)))
}

/// Today: the tiles the student chose (`today.tiles`), in their order, each read through its
/// cache; one whose plugin is off or gone says so, so Today shows exactly what was chosen.
pub(super) async fn today(engine: &Engine, lang: Language) -> TodayScreen {
    let chosen: Vec<(String, String)> = engine
        .settings()
        .today
        .tiles
        .iter()
        .filter_map(|t| today_tile(t))
        .map(|(p, s)| (p.to_owned(), s.to_owned()))
        .collect();
    let mut tiles = Vec::with_capacity(chosen.len());
    for (i, (plugin, key)) in chosen.iter().enumerate() {
        let mut view = match offered(engine, lang, plugin, key) {
            Ok((p, source)) => tile(engine, lang, &p, &source).await,
            Err(_) => unavailable(engine, lang, plugin, key),
        };
        let to = |place: usize| Action::MoveTodayTile {
            plugin: plugin.clone(),
            source: key.clone(),
            to: place as u32,
        };
        view.move_up = (i > 0).then(|| to(i - 1));
        view.move_down = (i + 1 < chosen.len()).then(|| to(i + 1));
        tiles.push(view);
    }
    let addable = engine
        .data_sources()
        .iter()
        .filter(|s| !chosen.iter().any(|(p, k)| *p == s.plugin && *k == s.key))
        .filter_map(|s| {
            let p = find_plugin(engine, &s.plugin)?;
            let source = p.data_sources.iter().find(|d| d.key == s.key)?;
            let plugin_title = title(lang, &p.title, p.title_en.as_deref());
            Some(Button::new(
                format!("{plugin_title} · {}", source_title(lang, &p, source)),
                ButtonRole::Normal,
                Action::AddTodayTile {
                    plugin: p.id.clone(),
                    source: s.key.clone(),
                },
            ))
        })
        .collect();
    let wallet = find_plugin(engine, "wallet")
        .filter(|p| engine.data_sources().iter().any(|s| s.plugin == p.id));
    TodayScreen {
        title: tr(lang, "今天", "Today").into(),
        empty: tiles.is_empty().then(|| {
            tr(
                lang,
                "还没有可显示的内容：点「编辑」添加，或在「插件」里打开校园插件",
                "Nothing to show yet: tap Edit to add some, or turn on a campus plugin under Plugins",
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
        edit_label: tr(lang, "编辑", "Edit").into(),
        done_label: tr(lang, "完成", "Done").into(),
        add_label: tr(lang, "添加到今天", "Add to Today").into(),
        addable,
    }
}

/// A chosen tile whose plugin is off or no longer installed: what it was, and why it shows
/// nothing.
fn unavailable(engine: &Engine, lang: Language, plugin: &str, key: &str) -> TodayTile {
    let installed = find_plugin(engine, plugin);
    let name = installed.as_ref().map_or_else(
        || plugin.to_owned(),
        |p| title(lang, &p.title, p.title_en.as_deref()),
    );
    let title = installed
        .as_ref()
        .and_then(|p| {
            let source = p.data_sources.iter().find(|d| d.key == key)?;
            Some(source_title(lang, p, source))
        })
        .unwrap_or_else(|| name.clone());
    let (message, fix) = match installed {
        Some(_) => (
            match lang {
                Language::Zh => format!("「{name}」已关闭：在「插件」里打开它，这里就会显示"),
                Language::En => format!("{name} is off: turn it on under Plugins to see this"),
            },
            Some(Button::new(
                tr(lang, "去插件", "Open Plugins").into(),
                ButtonRole::Normal,
                Action::Open {
                    route: Route::Plugins,
                },
            )),
        ),
        None => (
            match lang {
                Language::Zh => format!("「{name}」已不在这台手机上：可以把它从今天移除"),
                Language::En => format!("{name} is no longer on this phone: remove it from Today"),
            },
            None,
        ),
    };
    TodayTile {
        plugin: plugin.into(),
        source: key.into(),
        title,
        state: SectionState::Error,
        lines: Vec::new(),
        message: Some(message),
        age: None,
        screen: None,
        open: None,
        fix,
        remove: Action::RemoveTodayTile {
            plugin: plugin.into(),
            source: key.into(),
        },
        move_up: None,
        move_down: None,
    }
}

/// One change to Today's tiles from its edit mode, through the setting's own check.
pub(super) fn edit_today(
    engine: &Engine,
    lang: Language,
    edit: TodayEdit,
) -> Result<(), EngineError> {
    let mut tiles = engine.settings().today.tiles;
    match edit {
        TodayEdit::Add { plugin, source } => {
            offered(engine, lang, &plugin, &source)?;
            let tile = format!("{plugin}.{source}");
            if !tiles.contains(&tile) {
                tiles.push(tile);
            }
        }
        TodayEdit::Remove { plugin, source } => {
            tiles.retain(|t| *t != format!("{plugin}.{source}"));
        }
        TodayEdit::Move { plugin, source, to } => {
            let tile = format!("{plugin}.{source}");
            let Some(at) = tiles.iter().position(|t| *t == tile) else {
                return Ok(());
            };
            let moved = tiles.remove(at);
            tiles.insert((to as usize).min(tiles.len()), moved);
        }
    }
    let change = parse_change("today.tiles", &json!(tiles))?;
    engine.change_setting(change).map_err(|e| match e {
        // A tile kept whose plugin is gone is not the tap's fault: say which one.
        EngineError::Settings(err) => EngineError::Invalid(match lang {
            Language::Zh => format!("today.tiles（今天的卡片）：{}", err.message),
            Language::En => format!("today.tiles (Today's tiles): {}", err.message),
        }),
        other => other,
    })
}

/// A change Today's edit mode makes.
pub(super) enum TodayEdit {
    Add {
        plugin: String,
        source: String,
    },
    Remove {
        plugin: String,
        source: String,
    },
    Move {
        plugin: String,
        source: String,
        to: u32,
    },
}

async fn tile(engine: &Engine, lang: Language, plugin: &Plugin, source: &DataSource) -> TodayTile {
    let key = source.key.as_str();
    let tool = source_tool(plugin, key);
    let shown = screen_of(plugin, key);
    let mut view = TodayTile {
        plugin: plugin.id.clone(),
        source: key.into(),
        title: source_title(lang, plugin, source),
        state: SectionState::Ready,
        lines: Vec::new(),
        message: None,
        age: None,
        screen: shown.map(|s| s.id.clone()),
        open: Some(Action::OpenDataSource {
            plugin: plugin.id.clone(),
            source: key.into(),
        }),
        fix: None,
        remove: Action::RemoveTodayTile {
            plugin: plugin.id.clone(),
            source: key.into(),
        },
        move_up: None,
        move_down: None,
    };
    let read = match read_source(engine, lang, plugin, key).await {
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
        // What the plugin's own screen says of it empty, where it says something.
        view.message = Some(section.and_then(|s| s.empty.as_ref()).map_or_else(
            || tr(lang, "暂时没有内容", "Nothing here yet").into(),
            |e| label(lang, e),
        ));
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
