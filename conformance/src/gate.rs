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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use harness_core::gates::{
    ContextBoard, FsGate, Grants, LineKind, MessageGate, NetworkPolicy, Notifier, Outbox,
    PendingMessage, PluginKind, StoreGate, TurnState,
};

/// Runs one gate scenario; `Err` is the failure, `expected …, got …`.
pub fn run_gate_scenario(scenario: &Value) -> Result<(), String> {
    match scenario.get("gate").and_then(Value::as_str) {
        Some("network") => network(scenario),
        Some("fs") => fs_read(scenario),
        Some("store") => store(scenario),
        Some("context") => context(scenario),
        Some("notify") => notify(scenario),
        Some("sendMessage") => send_message(scenario),
        Some(other) => Err(format!(
            "expected a gate of network, fs, store, context, notify or sendMessage, got \"{other}\""
        )),
        None => Err("expected a \"gate\" name, got none".to_owned()),
    }
}

fn network(scenario: &Value) -> Result<(), String> {
    let grants = Grants {
        allow_network: flag(scenario, "allowNetwork", false)?,
        url_allowlist: strings(scenario, "allowlist")?,
        ..Grants::default()
    };
    let trust = match opt_str(scenario, "trust")?.unwrap_or("bundled") {
        "bundled" => PluginKind::Bundled,
        "official" => PluginKind::Official,
        "community" => PluginKind::Community,
        "remote" => PluginKind::Remote,
        other => {
            return Err(format!(
                "expected a trust of bundled, official, community or remote, got \"{other}\""
            ));
        }
    };
    let expect = req_str(scenario, "expect")?;
    let policy = match (NetworkPolicy::new("scenario", &grants, trust), expect) {
        (Err(err), "loadError") => {
            let err = err.to_string();
            return match opt_str(scenario, "errorContains")? {
                Some(part) if !err.contains(part) => Err(format!(
                    "expected a load error containing {}, got {}",
                    shown(part),
                    shown(&err)
                )),
                _ => Ok(()),
            };
        }
        (Ok(_), "loadError") => return Err("expected a load error, got none".to_owned()),
        (Err(err), _) => return Err(format!("expected {expect}, got the load error {err}")),
        (Ok(policy), _) => policy,
    };
    let got = policy.check(req_str(scenario, "url")?).map(String::from);
    expect_verdict(scenario, expect, got, None)
}

fn fs_read(scenario: &Value) -> Result<(), String> {
    let scratch = Scratch::new()?;
    let root = scratch
        .path()
        .join(opt_str(scenario, "root")?.unwrap_or("root"));
    fs::create_dir_all(&root).map_err(|e| format!("could not create the root: {e}"))?;
    let expand = |text: &str| {
        text.replace("{root}", &root.to_string_lossy())
            .replace("{tmp}", &scratch.path().to_string_lossy())
    };
    for file in scenario
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = scratch.path().join(req_str(file, "path")?);
        make_file(file, &path, &expand)
            .map_err(|e| format!("could not create {}: {e}", path.display()))?;
    }
    let gate = FsGate::new(
        &Grants {
            allow_fs: flag(scenario, "allowFs", true)?,
            ..Grants::default()
        },
        &root,
    );
    let got = gate.read(&expand(req_str(scenario, "read")?));
    let got = if got.starts_with("error: ") {
        Err(got)
    } else {
        Ok(got)
    };
    let content = opt_str(scenario, "expectContent")?;
    expect_verdict(scenario, req_str(scenario, "expect")?, got, content)
}

fn make_file(file: &Value, path: &Path, expand: &dyn Fn(&str) -> String) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    if let Some(content) = file.get("content") {
        return fs::write(path, text(content)?).map_err(|e| e.to_string());
    }
    if flag(file, "dir", false)? {
        return fs::create_dir_all(path).map_err(|e| e.to_string());
    }
    #[cfg(unix)]
    {
        if let Some(target) = opt_str(file, "symlinkTo")? {
            return std::os::unix::fs::symlink(expand(target), path).map_err(|e| e.to_string());
        }
        if flag(file, "socket", false)? {
            // The socket file stays when the listener is dropped: a non-regular file to refuse.
            return std::os::unix::net::UnixListener::bind(path)
                .map(drop)
                .map_err(|e| e.to_string());
        }
    }
    #[cfg(not(unix))]
    let _ = expand;
    Err("expected content, dir, symlinkTo or socket (the last two on unix)".to_owned())
}

fn store(scenario: &Value) -> Result<(), String> {
    let scratch = Scratch::new()?;
    let plugin = opt_str(scenario, "plugin")?.unwrap_or("memory");
    let grants = Grants {
        allow_store: flag(scenario, "allowStore", true)?,
        ..Grants::default()
    };
    let open = || StoreGate::new(plugin, &grants, scratch.path()).map_err(|e| e.to_string());
    let mut gate = open()?;
    for (i, op) in ops(scenario)?.iter().enumerate() {
        let at = |e: String| format!("op {i}: {e}");
        if let Some(set) = op.get("set") {
            let [key, value] = set.as_array().map(Vec::as_slice).unwrap_or_default() else {
                return Err(at(format!("expected set: [key, value], got {set}")));
            };
            let got = gate.set(&text(key).map_err(at)?, &text(value).map_err(at)?);
            check_reply(op, &got).map_err(at)?;
        } else if let Some(key) = op.get("get") {
            check_reply(op, &gate.get(&text(key).map_err(at)?)).map_err(at)?;
        } else if let Some(count) = op.get("fill") {
            let count = count
                .as_u64()
                .ok_or_else(|| at(format!("expected a key count, got {count}")))?;
            let map: serde_json::Map<String, Value> = (0..count)
                .map(|n| (format!("key{n}"), Value::from("v")))
                .collect();
            let bytes = serde_json::to_vec(&map).expect("a map of strings serializes");
            let file = StoreGate::file(scratch.path(), plugin);
            fs::create_dir_all(file.parent().expect("a store file sits in a directory"))
                .and_then(|()| fs::write(&file, bytes))
                .map_err(|e| at(e.to_string()))?;
            gate = open()?;
        } else if op.get("reopen").is_some() {
            gate = open()?;
        } else {
            return Err(at(format!(
                "expected a set, get, fill or reopen op, got {op}"
            )));
        }
    }
    Ok(())
}

fn context(scenario: &Value) -> Result<(), String> {
    let outbox = Outbox::new();
    let board = ContextBoard::new(outbox.clone());
    let denied = strings(scenario, "denied")?;
    for (i, op) in ops(scenario)?.iter().enumerate() {
        let at = |e: String| format!("op {i}: {e}");
        if let Some(set) = op.get("set") {
            let plugin = opt_str(op, "plugin").map_err(at)?.unwrap_or("memory");
            let grants = Grants {
                allow_context: !denied.iter().any(|d| d == plugin),
                ..Grants::default()
            };
            check_reply(op, &board.set(plugin, &grants, &text(set).map_err(at)?)).map_err(at)?;
        } else if let Some(rendered) = op.get("rendered") {
            let want = text(rendered).map_err(at)?;
            let got = board.render();
            if got != want {
                return Err(at(format!(
                    "expected the render {}, got {}",
                    shown(&want),
                    shown(&got)
                )));
            }
        } else if let Some(count) = op.get("announced") {
            let got = outbox
                .drain()
                .iter()
                .filter(|l| l.kind == LineKind::ContextChanged)
                .count();
            if Some(got as u64) != count.as_u64() {
                return Err(at(format!("expected {count} announcements, got {got}")));
            }
        } else {
            return Err(at(format!(
                "expected a set, rendered or announced op, got {op}"
            )));
        }
    }
    Ok(())
}

fn notify(scenario: &Value) -> Result<(), String> {
    let outbox = Outbox::new();
    let notifier = Notifier::new(outbox.clone());
    let plugin = opt_str(scenario, "plugin")?.unwrap_or("plugin");
    let mut replies = Vec::new();
    for turn in scenario
        .get("turns")
        .and_then(Value::as_array)
        .ok_or("expected turns, got none")?
    {
        let lines: Vec<String> = match turn {
            Value::Number(n) => (1..=n.as_u64().unwrap_or(0))
                .map(|i| format!("line {i}"))
                .collect(),
            Value::Array(lines) => lines.iter().map(text).collect::<Result<_, _>>()?,
            other => {
                return Err(format!(
                    "expected a line count or a list of lines, got {other}"
                ));
            }
        };
        for line in lines {
            replies.push(notifier.notify(plugin, &line));
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
    if let Some(expected) = scenario.get("expectDelivered") {
        expect_lines("delivered", expected, &delivered)?;
    }
    if let Some(expected) = scenario.get("expectSuppressed") {
        let total: u64 = suppressed
            .iter()
            .filter_map(|l| {
                l.rsplit_once("… ")?
                    .1
                    .split(' ')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum();
        match expected.as_u64() {
            Some(want) if want != total => {
                return Err(format!(
                    "expected {want} suppressed, got {total}: {suppressed:?}"
                ));
            }
            Some(_) => {}
            None => expect_lines("suppressed", expected, &suppressed)?,
        }
    }
    if let Some(expected) = scenario.get("expectReturns") {
        let got: Vec<&str> = replies.iter().map(String::as_str).collect();
        expect_lines("returns", expected, &got)?;
    }
    Ok(())
}

fn send_message(scenario: &Value) -> Result<(), String> {
    let outbox = Outbox::new();
    let gate = if flag(scenario, "turnLoop", true)? {
        MessageGate::new(outbox.clone())
    } else {
        MessageGate::headless()
    };
    let denied = strings(scenario, "denied")?;
    run_message_ops(&gate, &outbox, &denied, ops(scenario)?, "op ")
}

fn run_message_ops(
    gate: &MessageGate,
    outbox: &Outbox,
    denied: &[String],
    list: &[Value],
    path: &str,
) -> Result<(), String> {
    for (i, op) in list.iter().enumerate() {
        let at = |e: String| format!("{path}{i}: {e}");
        if let Some(message) = op.get("send") {
            let plugin = opt_str(op, "plugin").map_err(at)?.unwrap_or("plugin");
            let grants = Grants {
                allow_send_message: !denied.iter().any(|d| d == plugin),
                ..Grants::default()
            };
            let turn = match op.get("turn") {
                Some(turn) => TurnState {
                    running: flag(turn, "running", false).map_err(at)?,
                    started_by: opt_str(turn, "startedBy").map_err(at)?.map(str::to_owned),
                },
                None => TurnState::default(),
            };
            check_reply(
                op,
                &gate.send(plugin, &grants, &text(message).map_err(at)?, &turn),
            )
            .map_err(at)?;
        } else if let Some(want) = op.get("deliver") {
            let want = match want {
                Value::Null => None,
                want => Some(PendingMessage {
                    plugin_id: req_str(want, "plugin").map_err(at)?.to_owned(),
                    text: text(want.get("text").unwrap_or(&Value::Null)).map_err(at)?,
                }),
            };
            let got = gate.take_next();
            if got != want {
                return Err(at(format!("expected delivery of {want:?}, got {got:?}")));
            }
        } else if let Some(count) = op.get("echoed") {
            let got = outbox
                .drain()
                .iter()
                .filter(|l| l.kind == LineKind::MessageSent)
                .count();
            if Some(got as u64) != count.as_u64() {
                return Err(at(format!("expected {count} echoed messages, got {got}")));
            }
        } else if let Some(times) = op.get("repeat").and_then(Value::as_u64) {
            for round in 0..times {
                run_message_ops(
                    gate,
                    outbox,
                    denied,
                    ops(op)?,
                    &format!("{path}{i}.{round}."),
                )?;
            }
        } else {
            return Err(at(format!(
                "expected a send, deliver, echoed or repeat op, got {op}"
            )));
        }
    }
    Ok(())
}

/// `expect` of a network or fs scenario against a verdict: `allow` (and, for fs, the content),
/// `refuse` with an optional `errorPrefix`, or the `error: …` prefix itself.
fn expect_verdict(
    scenario: &Value,
    expect: &str,
    got: Result<String, String>,
    content: Option<&str>,
) -> Result<(), String> {
    let (refuse, prefix) = match expect {
        "allow" => (false, None),
        "refuse" => (true, opt_str(scenario, "errorPrefix")?),
        prefix if prefix.starts_with("error: ") => (true, Some(prefix)),
        other => {
            return Err(format!(
                "expected an expect of allow or refuse, got \"{other}\""
            ));
        }
    };
    match (refuse, got) {
        (false, Ok(body)) => match content {
            Some(want) if want != body => Err(format!(
                "expected content {}, got {}",
                shown(want),
                shown(&body)
            )),
            _ => Ok(()),
        },
        (false, Err(error)) => Err(format!("expected allow, got {}", shown(&error))),
        (true, Ok(_)) => Err("expected refuse, got allow".to_owned()),
        (true, Err(error)) => match prefix {
            Some(prefix) if !error.starts_with(prefix) => Err(format!(
                "expected an error starting {}, got {}",
                shown(prefix),
                shown(&error)
            )),
            _ => Ok(()),
        },
    }
}

/// An op's `expect` / `expectPrefix` against what the gate returned.
fn check_reply(op: &Value, got: &str) -> Result<(), String> {
    if let Some(expected) = op.get("expect") {
        matches(expected, got)?;
    }
    if let Some(prefix) = opt_str(op, "expectPrefix")? {
        if !got.starts_with(prefix) {
            return Err(format!(
                "expected a return starting {}, got {}",
                shown(prefix),
                shown(got)
            ));
        }
    }
    Ok(())
}

fn expect_lines(what: &str, expected: &Value, got: &[&str]) -> Result<(), String> {
    if let Some(count) = expected.as_u64() {
        return if got.len() as u64 == count {
            Ok(())
        } else {
            Err(format!(
                "expected {count} {what}, got {}: {got:?}",
                got.len()
            ))
        };
    }
    let expected = expected
        .as_array()
        .ok_or_else(|| format!("expected {what} as a number or list, got {expected}"))?;
    if expected.len() != got.len() {
        return Err(format!(
            "expected {} {what}, got {}: {got:?}",
            expected.len(),
            got.len()
        ));
    }
    for (i, (want, got)) in expected.iter().zip(got).enumerate() {
        matches(want, got).map_err(|e| format!("{what} {i}: {e}"))?;
    }
    Ok(())
}

/// A text is equal; `{"prefix", "bytes"}` checks the start and the length.
fn matches(expected: &Value, got: &str) -> Result<(), String> {
    if expected.get("prefix").is_some() || expected.get("bytes").is_some() {
        if let Some(prefix) = opt_str(expected, "prefix")? {
            if !got.starts_with(prefix) {
                return Err(format!("expected {}…, got {}", shown(prefix), shown(got)));
            }
        }
        if let Some(bytes) = expected.get("bytes").and_then(Value::as_u64) {
            if got.len() as u64 != bytes {
                return Err(format!(
                    "expected {bytes} bytes, got {} bytes: {}",
                    got.len(),
                    shown(got)
                ));
            }
        }
        return Ok(());
    }
    let want = text(expected)?;
    if want == got {
        Ok(())
    } else {
        Err(format!("expected {}, got {}", shown(&want), shown(got)))
    }
}

/// A string, or `{"repeat": "x", "times": N}`.
fn text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        _ => match (
            value.get("repeat").and_then(Value::as_str),
            value.get("times").and_then(Value::as_u64),
        ) {
            (Some(unit), Some(times)) => Ok(unit.repeat(times as usize)),
            _ => Err(format!(
                "expected a string or {{\"repeat\", \"times\"}}, got {value}"
            )),
        },
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

fn ops(value: &Value) -> Result<&[Value], String> {
    value
        .get("ops")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| "expected ops, got none".to_owned())
}

fn flag(value: &Value, key: &str, default: bool) -> Result<bool, String> {
    match value.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("expected {key} to be true or false, got {v}")),
    }
}

fn opt_str<'a>(value: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| format!("expected {key} to be a string, got {v}")),
    }
}

fn req_str<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    opt_str(value, key)?.ok_or_else(|| format!("expected {key}, got none"))
}

fn strings(value: &Value, key: &str) -> Result<Vec<String>, String> {
    match value.get(key) {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|_| format!("expected {key} to be a list of strings, got {v}")),
    }
}

/// A directory of its own for one scenario, removed when dropped. Made here rather than with a
/// temp-dir crate so the runner adds no dependency to the library.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir()
            .canonicalize()
            .map_err(|e| format!("no temp dir: {e}"))?;
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("harness-gate-{}-{n}", std::process::id()));
            // create_dir fails on an existing path, so a leftover is skipped, never reused.
            match fs::create_dir(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("could not create a temp dir: {e}")),
            }
        }
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unknown_gate_is_named() {
        assert_eq!(
            run_gate_scenario(&json!({"gate": "teleport"})).unwrap_err(),
            "expected a gate of network, fs, store, context, notify or sendMessage, got \"teleport\""
        );
        assert!(run_gate_scenario(&json!({"name": "x"})).is_err());
    }

    #[test]
    fn a_wrong_expectation_fails_with_expected_and_got() {
        let scenario = json!({"gate": "network", "allowNetwork": true, "allowlist": ["a.com"],
                              "url": "https://b.com/", "expect": "allow"});
        assert!(
            run_gate_scenario(&scenario)
                .unwrap_err()
                .starts_with("expected allow, got \"error: url_allowlist")
        );
        let scenario = json!({"gate": "store", "ops": [{"get": "k", "expect": "v"}]});
        assert_eq!(
            run_gate_scenario(&scenario).unwrap_err(),
            "op 0: expected \"v\", got \"\""
        );
    }

    #[test]
    fn long_texts_are_cut_in_messages() {
        let long = "x".repeat(1000);
        assert!(shown(&long).ends_with("… (1000 bytes)"));
        assert_eq!(
            text(&json!({"repeat": "ab", "times": 3})).unwrap(),
            "ababab"
        );
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
