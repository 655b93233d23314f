//! The bundled `scheduler` plugin: the agent (and screens) create, list, pause, resume and
//! remove jobs through it. Creating, pausing, resuming and removing have the write effect, so
//! they follow the scheduler plugin's write mode like any bundled plugin's (seed 000); the jobs
//! themselves only ever read when they run (seed 004).

use std::sync::Weak;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Job, Owner, Scheduler};
use crate::handler::{PluginHandler, ToolContext};
use crate::policy::Actor;
use crate::registry::Tool;
use crate::services::Services;

pub(crate) fn manifest() -> Value {
    let id = json!({"type": "object", "properties": {"id": {"type": "integer", "description": "The job's id, as scheduler__list shows it"}}, "required": ["id"], "additionalProperties": false});
    json!({
        "id": "scheduler",
        "title": "定时任务",
        "description": "定时任务和检查，例如余额不足时提醒你；定时运行时只能读取。",
        "i18n": {"en": {"title": "Scheduled jobs", "description": "Scheduled jobs and checks, such as a reminder when the balance is low; scheduled runs only read.", "tools": {
            "create": {"title": "Schedule a job"}, "list": {"title": "Scheduled jobs"},
            "pause": {"title": "Pause a job"}, "resume": {"title": "Resume a job"}, "remove": {"title": "Remove a job"}
        }}},
        "tools": [
            {"name": "create", "title": "新建定时任务", "effect": "write", "describes": true,
             "description": "Schedule a job that runs unattended. A reminder (\"提醒我明天8点去图书馆\") is reminder: {title, body?}: posted as written at its time, no tool, no model; find the time with time__resolve first. Scheduled runs only read: a check calls one read tool (find them with dashboard__sources) and notifies when its condition holds; an agent job runs a prompt with read tools only. schedule is {\"at\": \"YYYY-MM-DD HH:mm\"} (local, once), {\"everyMinutes\": N} or {\"cron\": \"minute hour day-of-month month day-of-week\"}; timeZone is an IANA name, default the user's. check: {tool: \"wallet.cardBalance\", args: {}, when: {path: \"balanceYuan\", op: \"lt\", value: 50}, notify: {title, body}}; body may hold {path} placeholders from the result. Ops: lt, le, gt, ge, eq, ne, contains, exists, changed; combine with {all: […]}, {any: […]}, {not: …}; paths use a.b, [n], [*]; \"new\": true counts only values unseen at the previous run.",
             "input": {"type": "object", "properties": {
                 "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "What the user sees in the jobs list"},
                 "schedule": {"type": "object", "description": "{\"at\": \"YYYY-MM-DD HH:mm\"}, {\"everyMinutes\": N} or {\"cron\": \"30 7 * * 1-5\"}"},
                 "timeZone": {"type": "string", "description": "IANA time zone, e.g. Asia/Shanghai"},
                 "reminder": {"type": "object", "description": "{title, body?}: a plain reminder, posted as written"},
                 "check": {"type": "object", "description": "{tool, args?, when?, notify: {title, body}}"},
                 "agent": {"type": "object", "description": "{prompt}"}
             }, "required": ["name", "schedule"], "additionalProperties": false}},
            {"name": "list", "title": "查看定时任务", "effect": "read",
             "description": "Every scheduled job with its schedule, state (active, paused with the reason, done), next due time and last outcome."},
            {"name": "pause", "title": "暂停定时任务", "effect": "write", "description": "Pause a job until it is resumed.", "input": id},
            {"name": "resume", "title": "恢复定时任务", "effect": "write", "description": "Resume a paused job from now on.", "input": id},
            {"name": "remove", "title": "删除定时任务", "effect": "write", "description": "Remove a job.", "input": id}
        ]
    })
}

/// Held weakly: the scheduler reaches this plugin through the installed plugins, so a strong
/// reference back would be a cycle.
pub(crate) struct SchedulerPlugin {
    pub(crate) scheduler: Weak<Scheduler>,
}

/// A job as the tools return it, with its next due time written locally.
fn shown(job: &Job) -> Value {
    let mut value = serde_json::to_value(job).unwrap_or(Value::Null);
    if let Some(local) = job.next_due_local() {
        value["nextDue"] = json!(local);
    }
    value
}

/// What `create` says before the tools it may check: a reminder first, then schedules and
/// conditions.
const CREATE: &str = "Schedule an unattended job. A reminder (提醒我明天8点去图书馆): reminder {title, body?}, posted as written, runs nothing; get its time from time__resolve. schedule: {\"at\": \"YYYY-MM-DD HH:mm\"} (local, once), {\"everyMinutes\": N} or {\"cron\": \"m h dom mon dow\"}. A check: check {tool, args?, when: {path, op, value}, notify: {title, body}} runs a read tool below and notifies when its condition holds; {field} in notify is filled from the result. Ops: lt le gt ge eq ne contains exists changed; {all:[…]} {any:[…]} {not:…}. An agent job: agent {prompt}, read tools only.";

/// The most sources `create` lists (issue 37: the 20 most relevant).
const MOST_SOURCES: usize = 20;

/// A read tool a check may run, with the fields its result has.
struct Checkable {
    id: String,
    title: String,
    /// `(field, label)`; the label is empty when the tool gives none.
    fields: Vec<(String, String)>,
}

/// `create`'s description, written from the installed plugins as the turn offers it: the
/// read tools a check may run (the data sources' first), each with its labelled result fields,
/// and an example built from the first with a field in 元 (or else the first with a field), all
/// within the description cap.
fn create_description(tools: &[Checkable]) -> String {
    let cap = crate::registry::MCP_DESCRIPTION_CAP;
    let mut text = CREATE.to_owned();
    let example = tools
        .iter()
        .find_map(|t| {
            let f = t
                .fields
                .iter()
                .find(|(_, label)| label.contains('元') || label.contains("yuan"))?;
            Some((t, f, "lt", json!(50)))
        })
        .or_else(|| {
            tools
                .iter()
                .find_map(|t| Some((t, t.fields.first()?, "changed", Value::Null)))
        });
    if let Some((tool, (field, label), op, value)) = example {
        let mut when = json!({"path": field, "op": op});
        if !value.is_null() {
            when["value"] = value;
        }
        let shown = if label.is_empty() { field } else { label };
        let check = json!({"tool": tool.id, "when": when,
            "notify": {"title": tool.title, "body": format!("{shown}: {{{field}}}")}});
        text.push_str(&format!(" Example check: {check}"));
    }
    let mut listed = 0;
    for tool in tools.iter().take(MOST_SOURCES) {
        let fields: Vec<String> = tool
            .fields
            .iter()
            .map(|(f, label)| {
                if label.is_empty() {
                    f.clone()
                } else {
                    format!("{f} ({label})")
                }
            })
            .collect();
        let line = if fields.is_empty() {
            format!(" {} {}.", tool.id, tool.title)
        } else {
            format!(" {} {}: {}.", tool.id, tool.title, fields.join(", "))
        };
        let head = if listed == 0 {
            " Read tools to check:"
        } else {
            ""
        };
        if text.chars().count() + head.chars().count() + line.chars().count() > cap {
            continue;
        }
        text.push_str(head);
        text.push_str(&line);
        listed += 1;
    }
    text
}

#[async_trait]
impl PluginHandler for SchedulerPlugin {
    /// issue 37: the job tool teaches what is installed now, never a made-up tool or path.
    fn describe(&self, tool: &Tool, _services: &Services) -> Option<String> {
        if tool.name != "create" {
            return None;
        }
        let scheduler = self.scheduler.upgrade()?;
        let tools = scheduler.plugins.read(|state| {
            // The data sources' tools first, then those that declare their fields, then the
            // rest: the most relevant are listed while the cap allows.
            let mut sourced = Vec::new();
            let mut declared = Vec::new();
            let mut others = Vec::new();
            let mut plugins: Vec<_> = state.installed.values().filter(|i| i.enabled).collect();
            plugins.sort_by(|a, b| a.plugin.id.cmp(&b.plugin.id));
            for installed in plugins {
                let plugin = &installed.plugin;
                for tool in &plugin.tools {
                    // seed 004: only a tool a scheduled run may call is offered.
                    let runs = match super::spec::check_tool(tool, &json!({})) {
                        Ok(()) => true,
                        Err(e) => e.field == "check.args",
                    };
                    // A third-party result (an attached file) is nothing to watch.
                    if !runs || tool.untrusted || plugin.id == "scheduler" {
                        continue;
                    }
                    let fields = super::spec::result_fields(tool)
                        .into_iter()
                        .map(|f| {
                            let label = tool
                                .labels
                                .get(&f)
                                .map(|l| l.zh.clone())
                                .unwrap_or_default();
                            (f, label)
                        })
                        .collect();
                    let checkable = Checkable {
                        id: tool.id.clone(),
                        title: tool.title.clone(),
                        fields,
                    };
                    if plugin
                        .data_sources
                        .iter()
                        .any(|s| s.tool == tool.name || s.tool == tool.id)
                    {
                        sourced.push(checkable);
                    } else if !checkable.fields.is_empty() {
                        declared.push(checkable);
                    } else {
                        others.push(checkable);
                    }
                }
            }
            sourced.extend(declared);
            sourced.extend(others);
            sourced
        });
        Some(create_description(&tools))
    }

    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let scheduler = self.scheduler.upgrade().ok_or("the app is closing")?;
        let id = || input["id"].as_i64().ok_or("id is missing".to_owned());
        match tool.name.as_str() {
            "create" => {
                let owner = match ctx.actor {
                    Actor::User => Owner::User,
                    _ => Owner::Plugin {
                        plugin: tool.plugin.clone(),
                        conversation: ctx.conversation.clone(),
                    },
                };
                let job = scheduler.add(&input, owner).map_err(|e| e.to_string())?;
                Ok(json!({"status": "scheduled", "job": shown(&job)}))
            }
            "list" => Ok(json!({"jobs": scheduler.all().iter().map(shown).collect::<Vec<_>>()})),
            "pause" => {
                let reason = match ctx.actor {
                    Actor::User => "paused by the user",
                    _ => "paused by the assistant",
                };
                Ok(
                    json!({"status": "paused", "job": shown(&scheduler.pause(id()?, reason).map_err(|e| e.to_string())?)}),
                )
            }
            "resume" => Ok(
                json!({"status": "resumed", "job": shown(&scheduler.resume(id()?).map_err(|e| e.to_string())?)}),
            ),
            "remove" => {
                let id = id()?;
                scheduler.remove(id).map_err(|e| e.to_string())?;
                Ok(json!({"status": "removed", "id": id}))
            }
            other => Err(format!("scheduler has no tool {other}")),
        }
    }
}
