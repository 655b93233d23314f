//! Job specs: what a job is as written, and its parsing and checking field by field. Every
//! error names the field (`schedule.at: "2026-13-01 08:00" is not a local time
//! "YYYY-MM-DD HH:mm"`).

use crate::zone::Zone as Tz;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::condition::{Condition, Template};
use super::schedule::{self, ScheduleSpec, Timing};
use crate::policy::{Actor, Availability, Code, Mode, RuleSet, Rules, Standing, precheck};
use crate::registry::Tool;

/// A problem with a job spec, naming the field (`schedule.at: "2026-13-01 08:00" is not a local
/// time "YYYY-MM-DD HH:mm"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct JobError {
    pub field: String,
    pub message: String,
}

impl JobError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// Who made a job: the user (a screen, the CLI), or a plugin through the bundled `scheduler`
/// plugin's `scheduler.create` (the agent's jobs are `scheduler`'s, with the conversation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Owner {
    User,
    Plugin {
        plugin: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation: Option<String>,
    },
}

/// What a check posts when its condition holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    pub title: String,
    pub body: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckSpec {
    /// A read tool's id, `plugin.tool`.
    pub tool: String,
    pub args: Value,
    /// A condition (module `condition`); absent: notify after every run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<Value>,
    pub notify: Notification,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    pub prompt: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Task {
    Check(CheckSpec),
    Agent(AgentSpec),
    /// A plain reminder: its notification, posted as written when due. It runs no tool and
    /// no model (seed 000: a scheduled run only reads; a reminder reads nothing at all).
    Reminder(Notification),
}

/// A job as written:
/// `{"name", "schedule": {"at"|"everyMinutes"|"cron"}, "timeZone"?, "check": {"tool", "args"?,
/// "when"?, "notify": {"title", "body"}} | "agent": {"prompt"} | "reminder": {"title", "body"?}}`. The time zone defaults to the
/// settings time zone at creation and is then stored with the job.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub name: String,
    pub schedule: ScheduleSpec,
    pub time_zone: String,
    #[serde(flatten)]
    pub task: Task,
}

/// What a spec compiles to.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) timing: Timing,
    pub(crate) tz: Tz,
    pub(crate) condition: Option<Condition>,
    pub(crate) title: Option<Template>,
    pub(crate) body: Option<Template>,
}

impl JobSpec {
    /// Reads and checks a spec; `default_tz` fills a missing `timeZone`. Every error names the
    /// field. Whether the tool exists and only reads is checked by [`check_tool`] when the job is
    /// added.
    pub fn parse(json: &Value, default_tz: &str) -> Result<JobSpec, JobError> {
        let object = json
            .as_object()
            .ok_or_else(|| JobError::new("job", format!("expected an object, got {json}")))?;
        if let Some(unknown) = object.keys().find(|k| {
            !matches!(
                k.as_str(),
                "name" | "schedule" | "timeZone" | "check" | "agent" | "reminder"
            )
        }) {
            return Err(JobError::new(
                unknown,
                "unknown field; a job has name, schedule, timeZone and one of reminder, check or agent",
            ));
        }
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(JobError::new(
                "name",
                "expected a name of 1 to 100 characters",
            ));
        }
        let schedule = schedule::parse_spec(object.get("schedule").unwrap_or(&Value::Null))?;
        Timing::parse(&schedule)?;
        let time_zone = match object.get("timeZone") {
            None | Some(Value::Null) => default_tz.to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(JobError::new(
                    "timeZone",
                    format!("expected an IANA time zone name, got {other}"),
                ));
            }
        };
        schedule::parse_tz("timeZone", &time_zone)?;
        let task = match (
            object.get("check"),
            object.get("agent"),
            object.get("reminder"),
        ) {
            (None, None, Some(reminder)) => Task::Reminder(parse_reminder(reminder)?),
            (Some(check), None, None) => Task::Check(parse_check(check)?),
            (None, Some(agent), None) => {
                let prompt = agent
                    .get("prompt")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .unwrap_or_default();
                if prompt.is_empty() || prompt.chars().count() > 4000 {
                    return Err(JobError::new(
                        "agent.prompt",
                        "expected a prompt of 1 to 4000 characters",
                    ));
                }
                if let Some(unknown) = agent
                    .as_object()
                    .and_then(|o| o.keys().find(|k| *k != "prompt"))
                {
                    return Err(JobError::new(
                        &format!("agent.{unknown}"),
                        "unknown field; an agent job has a prompt",
                    ));
                }
                Task::Agent(AgentSpec {
                    prompt: prompt.to_owned(),
                })
            }
            _ => {
                return Err(JobError::new(
                    "reminder",
                    "give exactly one of reminder (a title to post), check (a read tool and a \
                     condition) or agent (a prompt)",
                ));
            }
        };
        let spec = JobSpec {
            name: name.to_owned(),
            schedule,
            time_zone,
            task,
        };
        spec.compile()?;
        Ok(spec)
    }

    pub(crate) fn compile(&self) -> Result<Compiled, JobError> {
        let timing = Timing::parse(&self.schedule)?;
        let tz = schedule::parse_tz("timeZone", &self.time_zone)?;
        let (condition, title, body) = match &self.task {
            Task::Check(check) => (
                check
                    .when
                    .as_ref()
                    .map(|w| Condition::parse("check.when", w))
                    .transpose()?,
                Some(Template::parse("check.notify.title", &check.notify.title)?),
                Some(Template::parse("check.notify.body", &check.notify.body)?),
            ),
            Task::Agent(_) | Task::Reminder(_) => (None, None, None),
        };
        Ok(Compiled {
            timing,
            tz,
            condition,
            title,
            body,
        })
    }

    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `{"title", "body"?}`: plain words, posted as they are (no placeholders: nothing is read).
fn parse_reminder(reminder: &Value) -> Result<Notification, JobError> {
    let object = reminder.as_object().ok_or_else(|| {
        JobError::new(
            "reminder",
            format!("expected {{\"title\": …, \"body\": …}}, got {reminder}"),
        )
    })?;
    if let Some(unknown) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "title" | "body"))
    {
        return Err(JobError::new(
            &format!("reminder.{unknown}"),
            "unknown field; a reminder has title and body",
        ));
    }
    let text = |key: &str, most: usize| -> Result<String, JobError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) if s.chars().count() <= most => Ok(s.trim().to_owned()),
            Some(_) => Err(JobError::new(
                &format!("reminder.{key}"),
                format!("expected a text of at most {most} characters"),
            )),
        }
    };
    let title = text("title", 200)?;
    if title.is_empty() {
        return Err(JobError::new(
            "reminder.title",
            "expected a non-empty text, e.g. \"去图书馆\"",
        ));
    }
    Ok(Notification {
        title,
        body: text("body", 2000)?,
    })
}

fn parse_check(check: &Value) -> Result<CheckSpec, JobError> {
    let object = check
        .as_object()
        .ok_or_else(|| JobError::new("check", format!("expected an object, got {check}")))?;
    if let Some(unknown) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "tool" | "args" | "when" | "notify"))
    {
        return Err(JobError::new(
            &format!("check.{unknown}"),
            "unknown field; a check has tool, args, when and notify",
        ));
    }
    let tool = object.get("tool").and_then(Value::as_str).ok_or_else(|| {
        JobError::new(
            "check.tool",
            "expected a tool id, e.g. \"wallet.cardBalance\"",
        )
    })?;
    let args = match object.get("args") {
        None | Some(Value::Null) => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(JobError::new(
                "check.args",
                format!("expected an object of the tool's inputs, got {other}"),
            ));
        }
    };
    let notify = object
        .get("notify")
        .and_then(Value::as_object)
        .ok_or_else(|| JobError::new("check.notify", "expected {\"title\": …, \"body\": …}"))?;
    let text = |key: &str| {
        notify
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                JobError::new(&format!("check.notify.{key}"), "expected a non-empty text")
            })
    };
    Ok(CheckSpec {
        tool: tool.to_owned(),
        args,
        when: object.get("when").filter(|w| !w.is_null()).cloned(),
        notify: Notification {
            title: text("title")?,
            body: text("body")?,
        },
    })
}

/// The top-level fields a tool says its result has: its labelled fields and its declared
/// output's properties, in that order. Empty when it declares neither. `labels` also gives
/// words to the fields a tool takes: a label on an input field names a result field only
/// when the declared output names it too.
pub fn result_fields(tool: &Tool) -> Vec<String> {
    let declared = tool
        .output
        .as_ref()
        .and_then(|o| o.source()["properties"].as_object());
    let taken = tool.input.source()["properties"].as_object();
    let returned = |key: &String| {
        declared.is_some_and(|d| d.contains_key(key)) || !taken.is_some_and(|t| t.contains_key(key))
    };
    let mut fields: Vec<String> = tool
        .labels
        .keys()
        .filter(|k| returned(k))
        .cloned()
        .collect();
    for key in declared.into_iter().flat_map(|d| d.keys()) {
        if !fields.contains(key) {
            fields.push(key.clone());
        }
    }
    fields
}

/// A condition or a placeholder on a field the tool does not return would never hold, or
/// fail every run: refused at creation, naming the fields it does return. A tool that declares
/// no fields is taken at its word on none.
pub(crate) fn check_fields(tool: &Tool, compiled: &Compiled) -> Result<(), JobError> {
    let fields = result_fields(tool);
    if fields.is_empty() {
        return Ok(());
    }
    let paths = compiled
        .condition
        .iter()
        .flat_map(Condition::paths)
        .chain(compiled.title.iter().flat_map(Template::paths))
        .chain(compiled.body.iter().flat_map(Template::paths));
    for (field, path) in paths {
        if let Some(key) = path.first_key()
            && !fields.iter().any(|f| f == key)
        {
            return Err(JobError::new(
                field,
                format!(
                    "\"{}\" returns no field \"{key}\"; it returns {}",
                    tool.id,
                    fields.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// seed 004: scheduled runs only read. A check's tool must be one that could run unattended
/// (`policy::precheck` with actor scheduler) as far as the tool itself decides — modes, rules
/// and consent may change before it runs, and each run is decided then — and its arguments
/// must fit its input.
pub(crate) fn check_tool(tool: &Tool, args: &Value) -> Result<(), JobError> {
    let standing = Standing {
        actor: Actor::Scheduler,
        tool: Some(tool),
        availability: Availability::Ready,
        terms_accepted: true,
        mode: Mode::Auto,
        plan_mode: false,
    };
    let none = RuleSet::default();
    let rules = Rules {
        global: &none,
        conversation: &none,
    };
    let refused = |message: String| Err(JobError::new("check.tool", message));
    match precheck(&standing, rules) {
        Ok(()) => {}
        Err(Code::SchedulerReadOnly) => {
            return refused(format!(
                "scheduled runs only read, and \"{}\" has the {} effect",
                tool.id, tool.effect
            ));
        }
        Err(Code::UserOnly) => {
            return refused(format!(
                "\"{}\" can only be started by the user, from its screen",
                tool.id
            ));
        }
        // Declined: a grant, alwaysAsk or targeted tool asks on every call.
        Err(_) => {
            return refused(format!(
                "\"{}\" asks the user on every call, and nobody is there to ask during a \
                 scheduled run",
                tool.id
            ));
        }
    }
    tool.input
        .validate(args)
        .map_err(|e| JobError::new("check.args", e))
}
