//! Gate scenarios for the conformance runner (conformance/FORMAT.md, "Gate scenarios"): each
//! drives the real gate, never a copy of its logic. Shapes, beyond FORMAT.md's:
//!
//! Texts. Wherever a text is given (a value to set, a line to send, an expected return), it is
//! a JSON string or `{"repeat": "x", "times": 1048576}` (the string repeated). Wherever a
//! return is checked, `"expect"` takes a text (equal), or `{"prefix": "…", "bytes": N}` (either
//! key optional); `"expectPrefix": "…"` checks the start only.
//!
//! - `network`: `allowNetwork` (default false), `allowlist` (default []), `url`, `trust`
//!   (`bundled` default, `official`, `community`, `remote`: community and remote also refuse
//!   private IP literals), `expect`: `allow` | `refuse` (with `errorPrefix`) | an `error: …`
//!   string (a prefix, as DESIGN.md §9 writes it) | `loadError` (the allowlist is refused at
//!   load; `errorContains` checks the message).
//! - `fs`: a temp dir is made per scenario; `root` (default `root`) is a directory inside it.
//!   `files` paths are relative to the temp dir, so files can sit outside the root:
//!   `{"path", "content"}`, `{"path", "symlinkTo"}`, `{"path", "dir": true}`,
//!   `{"path", "socket": true}` (a unix socket, a non-regular file). `{root}` and `{tmp}` in
//!   `symlinkTo` and `read` stand for their absolute (canonical) paths. `allowFs` (default
//!   true), `read`, `expect` (`allow` | `refuse`), `errorPrefix`, `expectContent`.
//! - `store`: `plugin` (default `memory`), `allowStore` (default true); `ops` of
//!   `{"set": [key, value]}`, `{"get": key}` (each with `expect` / `expectPrefix`),
//!   `{"fill": N}` (writes `key0`…`key{N-1}` = `v` straight into the store file, as earlier
//!   sets would have, and reopens the store), `{"reopen": true}` (a restart).
//! - `context`: `denied` (plugin ids without allow_context); `ops` of
//!   `{"set": text, "plugin": "memory" (default)}` with `expect` / `expectPrefix`,
//!   `{"rendered": text}` (the whole render, equal), `{"announced": N}` (context-change
//!   announcements since the previous `announced`).
//! - `notify`: `plugin` (default `plugin`); `turns`: per turn, a number N (lines `line 1` …
//!   `line N`) or a list of texts; the turn ends after its lines. `expectDelivered`: the number
//!   of notify lines delivered, or the list of them (each checked like `expect`).
//!   `expectSuppressed`: the total N of the `… N more suppressed` lines, or the list of them.
//!   `expectReturns`: every call's return, in order, each checked like `expect`.
//! - `sendMessage`: `turnLoop` (default true; false is headless), `denied` (plugin ids
//!   without allow_send_message); `ops` of
//!   `{"send": text, "plugin": "a" (default "plugin"), "turn": {"running": bool,
//!   "startedBy": id}}` (default: no turn running) with `expect` / `expectPrefix`,
//!   `{"deliver": {"plugin", "text"}}` or `{"deliver": null}` (the next pending message, or
//!   none), `{"echoed": N}` (messages echoed since the previous `echoed`),
//!   `{"repeat": N, "ops": [...]}`.

use std::fs;
use std::path::Path;

use harness_core::gates::{
    ContextBoard, FsGate, Grants, LineKind, MessageGate, NetworkPolicy, Notifier, Outbox,
    PendingMessage, PluginKind, StoreGate, TurnState,
};
use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::{Map, Value};

use crate::{numbered, one_kind, typed, yes};

#[derive(Deserialize)]
#[serde(tag = "gate", rename_all = "camelCase")]
pub(crate) enum Scenario {
    Network(Network),
    Fs(FsRead),
    Store(Store),
    Context(Context),
    Notify(Notify),
    SendMessage(SendMessage),
}

fn ops<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    numbered(d, "op", 0)
}

const NO_CHECKING_OP: &str = "has no op that checks anything (an expect, expectPrefix, rendered, announced, deliver or echoed)";

impl Scenario {
    /// A scenario passes only by checking something, and every expectation it gives is one
    /// its gate's result is checked against.
    pub(crate) fn validate(&self, scenario: &str) -> Result<(), String> {
        let at = |e: String| format!("{scenario}: {e}");
        match self {
            Scenario::Network(s) => s.validate().map_err(at),
            Scenario::Fs(s) => s.validate().map_err(at),
            Scenario::Store(s) if !s.ops.iter().any(StoreOp::checks) => {
                Err(format!("{scenario} {NO_CHECKING_OP}"))
            }
            Scenario::Context(s) if !s.ops.iter().any(ContextOp::checks) => {
                Err(format!("{scenario} {NO_CHECKING_OP}"))
            }
            Scenario::SendMessage(s) if !s.ops.iter().any(MessageOp::checks) => {
                Err(format!("{scenario} {NO_CHECKING_OP}"))
            }
            Scenario::Notify(s)
                if s.expect_delivered.is_none()
                    && s.expect_suppressed.is_none()
                    && s.expect_returns.is_none() =>
            {
                Err(format!(
                    "{scenario} checks nothing (give it expectDelivered, expectSuppressed or \
                     expectReturns)"
                ))
            }
            _ => Ok(()),
        }
    }

    /// Runs the scenario; `Err` is the failure, `expected …, got …`.
    pub(crate) fn run(self) -> Result<(), String> {
        match self {
            Scenario::Network(s) => s.run(),
            Scenario::Fs(s) => s.run(),
            Scenario::Store(s) => s.run(),
            Scenario::Context(s) => s.run(),
            Scenario::Notify(s) => s.run(),
            Scenario::SendMessage(s) => s.run(),
        }
    }
}

/// A network or fs scenario's `expect`.
#[derive(Debug, PartialEq)]
enum Verdict {
    Allow,
    /// `refuse`, or the `error: …` prefix itself.
    Refuse(Option<String>),
    /// The allowlist is refused at load (network only).
    LoadError,
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "allow" => Ok(Verdict::Allow),
            "refuse" => Ok(Verdict::Refuse(None)),
            "loadError" => Ok(Verdict::LoadError),
            prefix if prefix.starts_with("error: ") => Ok(Verdict::Refuse(Some(text))),
            other => Err(D::Error::custom(format!(
                "expect is allow, refuse, loadError or an \"error: …\" prefix, got \"{other}\""
            ))),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Network {
    #[serde(default)]
    allow_network: bool,
    #[serde(default)]
    allowlist: Vec<String>,
    url: Option<String>,
    #[serde(default = "bundled")]
    trust: PluginKind,
    expect: Verdict,
    error_prefix: Option<String>,
    error_contains: Option<String>,
}

fn bundled() -> PluginKind {
    PluginKind::Bundled
}

impl Network {
    fn validate(&self) -> Result<(), String> {
        if self.error_contains.is_some() && self.expect != Verdict::LoadError {
            return Err("errorContains is checked only when expect is loadError".into());
        }
        if self.error_prefix.is_some() && self.expect != Verdict::Refuse(None) {
            return Err("errorPrefix is checked only when expect is refuse".into());
        }
        if self.url.is_none() && self.expect != Verdict::LoadError {
            return Err("missing field `url` (the URL to check)".into());
        }
        Ok(())
    }

    fn run(self) -> Result<(), String> {
        let grants = Grants {
            allow_network: self.allow_network,
            url_allowlist: self.allowlist,
            ..Grants::default()
        };
        let policy = match (
            NetworkPolicy::new("scenario", &grants, self.trust),
            &self.expect,
        ) {
            (Err(err), Verdict::LoadError) => {
                let err = err.to_string();
                return match self.error_contains {
                    Some(part) if !err.contains(&part) => Err(format!(
                        "expected a load error containing {}, got {}",
                        shown(&part),
                        shown(&err)
                    )),
                    _ => Ok(()),
                };
            }
            (Ok(_), Verdict::LoadError) => {
                return Err("expected a load error, got none".to_owned());
            }
            (Err(err), expect) => {
                return Err(format!(
                    "expected {}, got the load error {err}",
                    expect.name()
                ));
            }
            (Ok(policy), _) => policy,
        };
        let url = self.url.expect("validate requires a url unless loadError");
        let got = policy.check(&url).map(String::from);
        expect_verdict(self.expect, self.error_prefix, got, None)
    }
}

impl Verdict {
    fn name(&self) -> &str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Refuse(None) => "refuse",
            Verdict::Refuse(Some(prefix)) => prefix,
            Verdict::LoadError => "loadError",
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FsRead {
    #[serde(default = "root")]
    root: String,
    #[serde(default)]
    files: Vec<FileSpec>,
    #[serde(default = "yes")]
    allow_fs: bool,
    read: String,
    expect: Verdict,
    error_prefix: Option<String>,
    expect_content: Option<String>,
}

fn root() -> String {
    "root".to_owned()
}

/// A file to create before the read: exactly one of `content`, `dir`, `symlinkTo`, `socket`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileSpec {
    path: String,
    content: Option<Text>,
    #[serde(default)]
    dir: bool,
    symlink_to: Option<String>,
    #[serde(default)]
    socket: bool,
}

impl FsRead {
    fn validate(&self) -> Result<(), String> {
        if self.expect == Verdict::LoadError {
            return Err("expect is allow or refuse for an fs read, got \"loadError\"".into());
        }
        if self.expect_content.is_some() && self.expect != Verdict::Allow {
            return Err("expectContent is checked only when expect is allow".into());
        }
        if self.error_prefix.is_some() && self.expect != Verdict::Refuse(None) {
            return Err("errorPrefix is checked only when expect is refuse".into());
        }
        for file in &self.files {
            let kinds = [
                file.content.is_some(),
                file.dir,
                file.symlink_to.is_some(),
                file.socket,
            ];
            if kinds.iter().filter(|k| **k).count() != 1 {
                return Err(format!(
                    "files: \"{}\" gives {} of content, dir, symlinkTo and socket; give exactly one",
                    file.path,
                    kinds.iter().filter(|k| **k).count()
                ));
            }
        }
        Ok(())
    }

    fn run(self) -> Result<(), String> {
        let scratch = Scratch::new()?;
        let root = scratch.path().join(&self.root);
        fs::create_dir_all(&root).map_err(|e| format!("could not create the root: {e}"))?;
        let expand = |text: &str| {
            text.replace("{root}", &root.to_string_lossy())
                .replace("{tmp}", &scratch.path().to_string_lossy())
        };
        for file in &self.files {
            let path = scratch.path().join(&file.path);
            make_file(file, &path, &expand)
                .map_err(|e| format!("could not create {}: {e}", path.display()))?;
        }
        let gate = FsGate::new(
            &Grants {
                allow_fs: self.allow_fs,
                ..Grants::default()
            },
            &root,
        );
        let got = gate.read(&expand(&self.read));
        let got = if got.starts_with("error: ") {
            Err(got)
        } else {
            Ok(got)
        };
        expect_verdict(self.expect, self.error_prefix, got, self.expect_content)
    }
}

fn make_file(file: &FileSpec, path: &Path, expand: &dyn Fn(&str) -> String) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    if let Some(content) = &file.content {
        return fs::write(path, &content.0).map_err(|e| e.to_string());
    }
    if file.dir {
        return fs::create_dir_all(path).map_err(|e| e.to_string());
    }
    #[cfg(unix)]
    {
        if let Some(target) = &file.symlink_to {
            return std::os::unix::fs::symlink(expand(target), path).map_err(|e| e.to_string());
        }
        if file.socket {
            // The socket file stays when the listener is dropped: a non-regular file to refuse.
            return std::os::unix::net::UnixListener::bind(path)
                .map(drop)
                .map_err(|e| e.to_string());
        }
    }
    #[cfg(not(unix))]
    let _ = expand;
    Err("symlinkTo and socket files need unix".to_owned())
}

/// An op's `expect` / `expectPrefix`: what the gate must return.
#[derive(Default)]
struct Reply {
    expect: Option<Match>,
    expect_prefix: Option<String>,
}

impl Reply {
    fn checks(&self) -> bool {
        self.expect.is_some() || self.expect_prefix.is_some()
    }

    fn check(&self, got: &str) -> Result<(), String> {
        if let Some(expected) = &self.expect {
            expected.check(got)?;
        }
        if let Some(prefix) = &self.expect_prefix
            && !got.starts_with(prefix.as_str())
        {
            return Err(format!(
                "expected a return starting {}, got {}",
                shown(prefix),
                shown(got)
            ));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Store {
    #[serde(default = "memory")]
    plugin: String,
    #[serde(default = "yes")]
    allow_store: bool,
    #[serde(deserialize_with = "ops")]
    ops: Vec<StoreOp>,
}

fn memory() -> String {
    "memory".to_owned()
}

enum StoreOp {
    Set(Text, Text, Reply),
    Get(Text, Reply),
    Fill(u64),
    Reopen,
}

impl StoreOp {
    fn checks(&self) -> bool {
        match self {
            StoreOp::Set(_, _, reply) | StoreOp::Get(_, reply) => reply.checks(),
            StoreOp::Fill(_) | StoreOp::Reopen => false,
        }
    }
}

impl<'de> Deserialize<'de> for StoreOp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct SetOp {
            set: (Text, Text),
            expect: Option<Match>,
            expect_prefix: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct GetOp {
            get: Text,
            expect: Option<Match>,
            expect_prefix: Option<String>,
        }
        let mut map = Map::<String, Value>::deserialize(d)?;
        match one_kind(&map, &["set", "get", "fill", "reopen"], "an op")
            .map_err(D::Error::custom)?
        {
            "set" => {
                let op: SetOp = typed(Value::Object(map))?;
                Ok(StoreOp::Set(
                    op.set.0,
                    op.set.1,
                    Reply {
                        expect: op.expect,
                        expect_prefix: op.expect_prefix,
                    },
                ))
            }
            "get" => {
                let op: GetOp = typed(Value::Object(map))?;
                Ok(StoreOp::Get(
                    op.get,
                    Reply {
                        expect: op.expect,
                        expect_prefix: op.expect_prefix,
                    },
                ))
            }
            "fill" => Ok(StoreOp::Fill(typed(only(&mut map, "fill")?)?)),
            _ => match only(&mut map, "reopen")? {
                Value::Bool(true) => Ok(StoreOp::Reopen),
                other => Err(D::Error::custom(format!("reopen is true, got {other}"))),
            },
        }
    }
}

/// The value of an op's one key, when it may have no other.
fn only<E: serde::de::Error>(map: &mut Map<String, Value>, kind: &str) -> Result<Value, E> {
    let value = map.remove(kind).expect("the kind's key is present");
    match map.keys().next() {
        Some(other) => Err(E::custom(format!(
            "unknown field `{other}` beside `{kind}`: a {kind} op has no other key"
        ))),
        None => Ok(value),
    }
}

impl Store {
    fn run(self) -> Result<(), String> {
        let scratch = Scratch::new()?;
        let grants = Grants {
            allow_store: self.allow_store,
            ..Grants::default()
        };
        let open =
            || StoreGate::new(&self.plugin, &grants, scratch.path()).map_err(|e| e.to_string());
        let mut gate = open()?;
        for (i, op) in self.ops.iter().enumerate() {
            let at = |e: String| format!("op {i}: {e}");
            match op {
                StoreOp::Set(key, value, reply) => {
                    reply.check(&gate.set(&key.0, &value.0)).map_err(at)?
                }
                StoreOp::Get(key, reply) => reply.check(&gate.get(&key.0)).map_err(at)?,
                StoreOp::Fill(count) => {
                    // As earlier sets would have left it: key0…key{N-1} = "v", then a restart.
                    let map: Map<String, Value> = (0..*count)
                        .map(|n| (format!("key{n}"), Value::from("v")))
                        .collect();
                    let bytes = serde_json::to_vec(&map).expect("a map of strings serializes");
                    let file = StoreGate::file(scratch.path(), &self.plugin);
                    fs::create_dir_all(file.parent().expect("a store file sits in a directory"))
                        .and_then(|()| fs::write(&file, bytes))
                        .map_err(|e| at(e.to_string()))?;
                    gate = open()?;
                }
                StoreOp::Reopen => gate = open()?,
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Context {
    #[serde(default)]
    denied: Vec<String>,
    #[serde(deserialize_with = "ops")]
    ops: Vec<ContextOp>,
}

enum ContextOp {
    Set {
        text: Text,
        plugin: String,
        reply: Reply,
    },
    Rendered(Text),
    Announced(usize),
}

impl ContextOp {
    fn checks(&self) -> bool {
        match self {
            ContextOp::Set { reply, .. } => reply.checks(),
            ContextOp::Rendered(_) | ContextOp::Announced(_) => true,
        }
    }
}

impl<'de> Deserialize<'de> for ContextOp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct SetOp {
            set: Text,
            #[serde(default = "memory")]
            plugin: String,
            expect: Option<Match>,
            expect_prefix: Option<String>,
        }
        let mut map = Map::<String, Value>::deserialize(d)?;
        match one_kind(&map, &["set", "rendered", "announced"], "an op")
            .map_err(D::Error::custom)?
        {
            "set" => {
                let op: SetOp = typed(Value::Object(map))?;
                Ok(ContextOp::Set {
                    text: op.set,
                    plugin: op.plugin,
                    reply: Reply {
                        expect: op.expect,
                        expect_prefix: op.expect_prefix,
                    },
                })
            }
            "rendered" => Ok(ContextOp::Rendered(typed(only(&mut map, "rendered")?)?)),
            _ => Ok(ContextOp::Announced(typed(only(&mut map, "announced")?)?)),
        }
    }
}

impl Context {
    fn run(self) -> Result<(), String> {
        let outbox = Outbox::new();
        let board = ContextBoard::new(outbox.clone());
        for (i, op) in self.ops.iter().enumerate() {
            let at = |e: String| format!("op {i}: {e}");
            match op {
                ContextOp::Set {
                    text,
                    plugin,
                    reply,
                } => {
                    let grants = Grants {
                        allow_context: !self.denied.contains(plugin),
                        ..Grants::default()
                    };
                    reply
                        .check(&board.set(plugin, &grants, &text.0))
                        .map_err(at)?;
                }
                ContextOp::Rendered(want) => {
                    let got = board.render();
                    if got != want.0 {
                        return Err(at(format!(
                            "expected the render {}, got {}",
                            shown(&want.0),
                            shown(&got)
                        )));
                    }
                }
                ContextOp::Announced(count) => {
                    let got = outbox
                        .drain()
                        .iter()
                        .filter(|l| l.kind == LineKind::ContextChanged)
                        .count();
                    if got != *count {
                        return Err(at(format!("expected {count} announcements, got {got}")));
                    }
                }
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Notify {
    #[serde(default = "plugin")]
    plugin: String,
    turns: Vec<Turn>,
    expect_delivered: Option<Lines>,
    expect_suppressed: Option<Lines>,
    expect_returns: Option<Lines>,
}

fn plugin() -> String {
    "plugin".to_owned()
}

/// A turn's notify lines: a count N (`line 1` … `line N`) or the texts.
struct Turn(Vec<String>);

impl<'de> Deserialize<'de> for Turn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => {
                let count = n.as_u64().ok_or_else(|| {
                    D::Error::custom(format!("a turn's line count is a whole number, got {n}"))
                })?;
                Ok(Turn((1..=count).map(|i| format!("line {i}")).collect()))
            }
            lines @ Value::Array(_) => {
                let lines: Vec<Text> = typed(lines)?;
                Ok(Turn(lines.into_iter().map(|t| t.0).collect()))
            }
            other => Err(D::Error::custom(format!(
                "a turn is a line count or a list of lines, got {other}"
            ))),
        }
    }
}

/// Expected lines: how many, or each one.
enum Lines {
    Count(usize),
    Each(Vec<Match>),
}

impl<'de> Deserialize<'de> for Lines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            count @ Value::Number(_) => Ok(Lines::Count(typed(count)?)),
            each @ Value::Array(_) => Ok(Lines::Each(typed(each)?)),
            other => Err(D::Error::custom(format!(
                "expected lines are a count or a list, got {other}"
            ))),
        }
    }
}

impl Lines {
    fn check(&self, what: &str, got: &[&str]) -> Result<(), String> {
        let want = match self {
            Lines::Count(count) => *count,
            Lines::Each(each) => each.len(),
        };
        if got.len() != want {
            return Err(format!(
                "expected {want} {what}, got {}: {got:?}",
                got.len()
            ));
        }
        if let Lines::Each(each) = self {
            for (i, (want, got)) in each.iter().zip(got).enumerate() {
                want.check(got).map_err(|e| format!("{what} {i}: {e}"))?;
            }
        }
        Ok(())
    }
}

impl Notify {
    fn run(self) -> Result<(), String> {
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        let mut replies = Vec::new();
        for turn in &self.turns {
            for line in &turn.0 {
                replies.push(notifier.notify(&self.plugin, line));
            }
            notifier.end_turn();
        }
        let lines = outbox.drain();
        let of_kind = |kind| {
            lines
                .iter()
                .filter(move |l| l.kind == kind)
                .map(|l| l.text.as_str())
        };
        let delivered: Vec<&str> = of_kind(LineKind::Notify).collect();
        let suppressed: Vec<&str> = of_kind(LineKind::NotifySuppressed).collect();
        if let Some(expected) = &self.expect_delivered {
            expected.check("delivered", &delivered)?;
        }
        match &self.expect_suppressed {
            // A count is the total of the `… N more suppressed` lines, not how many there are.
            Some(Lines::Count(want)) => {
                let total: usize = suppressed
                    .iter()
                    .filter_map(|l| {
                        l.rsplit_once("… ")?
                            .1
                            .split(' ')
                            .next()?
                            .parse::<usize>()
                            .ok()
                    })
                    .sum();
                if *want != total {
                    return Err(format!(
                        "expected {want} suppressed, got {total}: {suppressed:?}"
                    ));
                }
            }
            Some(each) => each.check("suppressed", &suppressed)?,
            None => {}
        }
        if let Some(expected) = &self.expect_returns {
            let got: Vec<&str> = replies.iter().map(String::as_str).collect();
            expected.check("returns", &got)?;
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SendMessage {
    #[serde(default = "yes")]
    turn_loop: bool,
    #[serde(default)]
    denied: Vec<String>,
    #[serde(deserialize_with = "ops")]
    ops: Vec<MessageOp>,
}

enum MessageOp {
    Send {
        text: Text,
        plugin: String,
        turn: TurnState,
        reply: Reply,
    },
    Deliver(Option<PendingMessage>),
    Echoed(usize),
    Repeat(u64, Vec<MessageOp>),
}

impl MessageOp {
    fn checks(&self) -> bool {
        match self {
            MessageOp::Send { reply, .. } => reply.checks(),
            MessageOp::Deliver(_) | MessageOp::Echoed(_) => true,
            MessageOp::Repeat(times, ops) => *times > 0 && ops.iter().any(MessageOp::checks),
        }
    }
}

impl<'de> Deserialize<'de> for MessageOp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct SendOp {
            send: Text,
            #[serde(default = "plugin")]
            plugin: String,
            #[serde(default)]
            turn: TurnSpec,
            expect: Option<Match>,
            expect_prefix: Option<String>,
        }
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct TurnSpec {
            #[serde(default)]
            running: bool,
            started_by: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Delivery {
            plugin: String,
            text: Text,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RepeatOp {
            repeat: u64,
            #[serde(deserialize_with = "ops")]
            ops: Vec<MessageOp>,
        }
        let mut map = Map::<String, Value>::deserialize(d)?;
        match one_kind(&map, &["send", "deliver", "echoed", "repeat"], "an op")
            .map_err(D::Error::custom)?
        {
            "send" => {
                let op: SendOp = typed(Value::Object(map))?;
                Ok(MessageOp::Send {
                    text: op.send,
                    plugin: op.plugin,
                    turn: TurnState {
                        running: op.turn.running,
                        started_by: op.turn.started_by,
                    },
                    reply: Reply {
                        expect: op.expect,
                        expect_prefix: op.expect_prefix,
                    },
                })
            }
            "deliver" => {
                let want: Option<Delivery> = typed(only(&mut map, "deliver")?)?;
                Ok(MessageOp::Deliver(want.map(|d| PendingMessage {
                    plugin_id: d.plugin,
                    text: d.text.0,
                })))
            }
            "echoed" => Ok(MessageOp::Echoed(typed(only(&mut map, "echoed")?)?)),
            _ => {
                let op: RepeatOp = typed(Value::Object(map))?;
                Ok(MessageOp::Repeat(op.repeat, op.ops))
            }
        }
    }
}

impl SendMessage {
    fn run(self) -> Result<(), String> {
        let outbox = Outbox::new();
        let gate = if self.turn_loop {
            MessageGate::new(outbox.clone())
        } else {
            MessageGate::headless()
        };
        run_message_ops(&gate, &outbox, &self.denied, &self.ops, "op ")
    }
}

fn run_message_ops(
    gate: &MessageGate,
    outbox: &Outbox,
    denied: &[String],
    list: &[MessageOp],
    path: &str,
) -> Result<(), String> {
    for (i, op) in list.iter().enumerate() {
        let at = |e: String| format!("{path}{i}: {e}");
        match op {
            MessageOp::Send {
                text,
                plugin,
                turn,
                reply,
            } => {
                let grants = Grants {
                    allow_send_message: !denied.contains(plugin),
                    ..Grants::default()
                };
                reply
                    .check(&gate.send(plugin, &grants, &text.0, turn))
                    .map_err(at)?;
            }
            MessageOp::Deliver(want) => {
                let got = gate.take_next();
                if got != *want {
                    return Err(at(format!("expected delivery of {want:?}, got {got:?}")));
                }
            }
            MessageOp::Echoed(count) => {
                let got = outbox
                    .drain()
                    .iter()
                    .filter(|l| l.kind == LineKind::MessageSent)
                    .count();
                if got != *count {
                    return Err(at(format!("expected {count} echoed messages, got {got}")));
                }
            }
            MessageOp::Repeat(times, ops) => {
                for round in 0..*times {
                    run_message_ops(gate, outbox, denied, ops, &format!("{path}{i}.{round}."))?;
                }
            }
        }
    }
    Ok(())
}

/// `expect` of a network or fs scenario against a verdict: `allow` (and, for fs, the content),
/// `refuse` with an optional `errorPrefix`, or the `error: …` prefix itself.
fn expect_verdict(
    expect: Verdict,
    error_prefix: Option<String>,
    got: Result<String, String>,
    content: Option<String>,
) -> Result<(), String> {
    match (expect, got) {
        (Verdict::Allow, Ok(body)) => match content {
            Some(want) if want != body => Err(format!(
                "expected content {}, got {}",
                shown(&want),
                shown(&body)
            )),
            _ => Ok(()),
        },
        (Verdict::Allow, Err(error)) => Err(format!("expected allow, got {}", shown(&error))),
        (_, Ok(_)) => Err("expected refuse, got allow".to_owned()),
        (expect, Err(error)) => {
            let prefix = match expect {
                Verdict::Refuse(Some(prefix)) => Some(prefix),
                _ => error_prefix,
            };
            match prefix {
                Some(prefix) if !error.starts_with(&prefix) => Err(format!(
                    "expected an error starting {}, got {}",
                    shown(&prefix),
                    shown(&error)
                )),
                _ => Ok(()),
            }
        }
    }
}

/// An expected return: a text (equal), or `{"prefix", "bytes"}` (the start and the length).
#[derive(Debug)]
enum Match {
    Equal(String),
    Shape {
        prefix: Option<String>,
        bytes: Option<usize>,
    },
}

impl<'de> Deserialize<'de> for Match {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Shape {
            prefix: Option<String>,
            bytes: Option<usize>,
        }
        let value = Value::deserialize(d)?;
        if value.get("prefix").is_some() || value.get("bytes").is_some() {
            let shape: Shape = typed(value)?;
            return Ok(Match::Shape {
                prefix: shape.prefix,
                bytes: shape.bytes,
            });
        }
        let text: Text = typed(value)?;
        Ok(Match::Equal(text.0))
    }
}

impl Match {
    fn check(&self, got: &str) -> Result<(), String> {
        match self {
            Match::Equal(want) if want == got => Ok(()),
            Match::Equal(want) => Err(format!("expected {}, got {}", shown(want), shown(got))),
            Match::Shape { prefix, bytes } => {
                if let Some(prefix) = prefix
                    && !got.starts_with(prefix.as_str())
                {
                    return Err(format!("expected {}…, got {}", shown(prefix), shown(got)));
                }
                if let Some(bytes) = bytes
                    && got.len() != *bytes
                {
                    return Err(format!(
                        "expected {bytes} bytes, got {} bytes: {}",
                        got.len(),
                        shown(got)
                    ));
                }
                Ok(())
            }
        }
    }
}

/// A string, or `{"repeat": "x", "times": N}` (the string repeated).
#[derive(Debug)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Repeat {
            repeat: String,
            times: usize,
        }
        match Value::deserialize(d)? {
            Value::String(text) => Ok(Text(text)),
            repeat @ Value::Object(_) => {
                let repeat: Repeat = typed(repeat)?;
                Ok(Text(repeat.repeat.repeat(repeat.times)))
            }
            other => Err(D::Error::custom(format!(
                "expected a string or {{\"repeat\", \"times\"}}, got {other}"
            ))),
        }
    }
}

/// A string for a failure message: quoted, and cut short when long.
fn shown(text: &str) -> String {
    const SHOWN: usize = 160;
    if text.len() <= SHOWN {
        return format!("{text:?}");
    }
    let mut end = SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}… ({} bytes)", &text[..end], text.len())
}

/// A directory of its own for one scenario, removed when dropped; its path is canonical, so
/// `{root}` and `{tmp}` expand to what the gate sees after resolving links.
struct Scratch {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Scratch {
    fn new() -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("harness-gate-")
            .tempdir()
            .map_err(|e| format!("could not create a temp dir: {e}"))?;
        let path = dir
            .path()
            .canonicalize()
            .map_err(|e| format!("no temp dir: {e}"))?;
        Ok(Self { _dir: dir, path })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<Scenario, String> {
        Scenario::deserialize(value).map_err(|e| e.to_string())
    }

    #[test]
    fn an_unknown_gate_is_named() {
        let err = parse(json!({"gate": "teleport"})).err().unwrap();
        assert!(
            err.starts_with("unknown variant `teleport`, expected one of `network`"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_expectation_fails_with_expected_and_got() {
        let scenario = json!({"gate": "network", "allowNetwork": true, "allowlist": ["a.com"],
                              "url": "https://b.com/", "expect": "allow"});
        let failure = parse(scenario).unwrap().run().unwrap_err();
        assert!(
            failure.starts_with("expected allow, got \"error: url_allowlist"),
            "{failure}"
        );
        let scenario = json!({"gate": "store", "ops": [{"get": "k", "expect": "v"}]});
        assert_eq!(
            parse(scenario).unwrap().run().unwrap_err(),
            "op 0: expected \"v\", got \"\""
        );
    }

    #[test]
    fn an_op_of_two_kinds_is_refused_naming_its_index_and_keys() {
        let scenario = json!({"gate": "store", "ops": [{"get": "k", "expect": ""},
                                                       {"get": "k", "reopen": true}]});
        assert_eq!(
            parse(scenario).err().unwrap(),
            "op 1: an op is exactly one of set, get, fill, reopen; this one has get and reopen"
        );
    }

    #[test]
    fn an_expectation_the_verdict_never_reaches_is_refused() {
        let scenario = json!({"gate": "network", "allowlist": [], "url": "https://a.com/",
                              "expect": "allow", "errorPrefix": "error: "});
        assert_eq!(
            parse(scenario).unwrap().validate("scenario \"x\""),
            Err("scenario \"x\": errorPrefix is checked only when expect is refuse".to_owned())
        );
    }

    #[test]
    fn long_texts_are_cut_in_messages() {
        let long = "x".repeat(1000);
        assert!(shown(&long).ends_with("… (1000 bytes)"));
        let text: Text =
            typed::<Text, serde_json::Error>(json!({"repeat": "ab", "times": 3})).unwrap();
        assert_eq!(text.0, "ababab");
    }

    #[test]
    fn scratch_dirs_are_removed() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path().to_owned();
        assert!(path.is_dir());
        drop(scratch);
        assert!(!path.exists());
    }
}
