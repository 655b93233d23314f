//! A remote server's question on the terminal (MCP elicitation): its form, field by field with
//! the server's defaults, or its page with the page's host; `--elicitation accept|decline`
//! answers for scripts (accept takes the form's defaults, or opens nothing and says the page
//! was seen).

use std::io::{BufRead, IsTerminal};

use clap::ValueEnum;
use harness_core::invoke::{Elicitation, ElicitationAnswer};
use harness_core::plugins::elicitation::{ElicitationKind, Field, Input};
use serde_json::{Map, Value};

/// How `--elicitation` answers every question.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Reply {
    /// The form with its defaults; a page taken as seen.
    Accept,
    Decline,
}

/// Shows `request` and returns the answer: `fixed`'s, else the one typed.
pub fn on_terminal(request: &Elicitation, fixed: Option<Reply>) -> ElicitationAnswer {
    outln!(
        "    ┌ {} ({}) asks: {}",
        request.plugin_title,
        request.plugin,
        request.message
    );
    if request.tainted {
        outln!(
            "    │ this turn has read content from outside the app; answer only what you meant to give"
        );
    }
    match &request.kind {
        ElicitationKind::Form { fields, schema } => form(fields, schema, fixed),
        ElicitationKind::Page { url, host } => page(url, host, fixed),
    }
}

fn form(fields: &[Field], schema: &Value, fixed: Option<Reply>) -> ElicitationAnswer {
    for field in fields {
        let default = field
            .default
            .as_ref()
            .map_or(String::new(), |d| format!(" [{}]", shown(d)));
        let required = if field.required { " (required)" } else { "" };
        let about = field
            .description
            .as_deref()
            .map_or(String::new(), |d| format!(" — {d}"));
        outln!("    │ {}{required}{default}{about}", field.title);
    }
    match fixed {
        Some(Reply::Accept) => {
            let answer = Elicitation::defaults(fields);
            if let Err(why) = Elicitation::check(schema, &answer) {
                outln!("    └ the defaults do not fill the form ({why}): declined (--elicitation)");
                return ElicitationAnswer::Decline;
            }
            outln!("    └ accepted with the defaults (--elicitation)");
            return ElicitationAnswer::Accept(answer);
        }
        Some(Reply::Decline) => {
            outln!("    └ declined (--elicitation)");
            return ElicitationAnswer::Decline;
        }
        None => {}
    }
    loop {
        let mut answer = Map::new();
        for field in fields {
            let Some(value) = ask_field(field) else {
                outln!("(no answer: cancel)");
                return ElicitationAnswer::Cancel;
            };
            if let Some(value) = value {
                answer.insert(field.name.clone(), value);
            }
        }
        if let Err(why) = Elicitation::check(schema, &answer) {
            outln!("    │ {why}; once more");
            continue;
        }
        return match choose("[s] Send  [d] Decline  [c] Cancel", &["s", "d", "c"]).as_deref() {
            Some("s") => ElicitationAnswer::Accept(answer),
            Some("d") => ElicitationAnswer::Decline,
            _ => ElicitationAnswer::Cancel,
        };
    }
}

fn page(url: &str, host: &str, fixed: Option<Reply>) -> ElicitationAnswer {
    outln!("    │ it asks you to open a page on {host}:\n    │   {url}");
    match fixed {
        Some(Reply::Accept) => {
            outln!("    └ taken as seen (--elicitation)");
            return ElicitationAnswer::Accept(Map::new());
        }
        Some(Reply::Decline) => {
            outln!("    └ declined (--elicitation)");
            return ElicitationAnswer::Decline;
        }
        None => {}
    }
    match choose("[o] Open it  [d] Decline  [c] Cancel", &["o", "d", "c"]).as_deref() {
        Some("o") => {
            if !crate::browser::open(url) {
                outln!("    │ no browser could be opened; open the page yourself");
            }
            ElicitationAnswer::Accept(Map::new())
        }
        Some("d") => ElicitationAnswer::Decline,
        _ => ElicitationAnswer::Cancel,
    }
}

/// A value as the terminal shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One line from the terminal, echoed when it is not one; `None` at the end of input.
pub(crate) fn line(prompt: &str) -> Option<String> {
    out!("    │ {prompt} ");
    crate::output::flush();
    let stdin = std::io::stdin();
    let mut line = String::new();
    if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    if !stdin.is_terminal() {
        outln!("{}", line.trim());
    }
    Some(line.trim().to_owned())
}

fn choose(menu: &str, keys: &[&str]) -> Option<String> {
    loop {
        let answer = line(&format!("{menu} ?"))?;
        if keys.contains(&answer.as_str()) {
            return Some(answer);
        }
    }
}

/// Field `field` typed in: `Some(None)` left empty with no default (not sent), `None` at the
/// end of input. An empty line takes the default.
fn ask_field(field: &Field) -> Option<Option<Value>> {
    let hint = match &field.input {
        Input::Boolean => " (y/n)".to_owned(),
        Input::Choice { options, multiple } => {
            let listed: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(i, (_, label))| format!("{} {label}", i + 1))
                .collect();
            let how = if *multiple {
                "numbers, comma-separated"
            } else {
                "a number"
            };
            format!(" ({how}: {})", listed.join(", "))
        }
        _ => String::new(),
    };
    loop {
        let typed = line(&format!("{}{hint}:", field.title))?;
        if typed.is_empty() {
            return Some(field.default.clone());
        }
        let value = match &field.input {
            Input::Text { .. } => Some(Value::String(typed)),
            Input::Number { integer: true } => typed.parse::<i64>().ok().map(Value::from),
            Input::Number { integer: false } => typed.parse::<f64>().ok().map(Value::from),
            Input::Boolean => match typed.as_str() {
                "y" | "yes" => Some(Value::Bool(true)),
                "n" | "no" => Some(Value::Bool(false)),
                _ => None,
            },
            Input::Choice { options, multiple } => {
                let picked: Option<Vec<Value>> = typed
                    .split(',')
                    .map(|n| {
                        let i = n.trim().parse::<usize>().ok()?.checked_sub(1)?;
                        options.get(i).map(|(v, _)| Value::String(v.clone()))
                    })
                    .collect();
                match (picked, multiple) {
                    (Some(values), true) => Some(Value::Array(values)),
                    (Some(mut values), false) if values.len() == 1 => values.pop(),
                    _ => None,
                }
            }
        };
        if let Some(value) = value {
            return Some(Some(value));
        }
        outln!("    │ that is not an answer to {}", field.title);
    }
}
