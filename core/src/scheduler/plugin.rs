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
            {"name": "create", "title": "新建定时任务", "effect": "write",
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

#[async_trait]
impl PluginHandler for SchedulerPlugin {
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
