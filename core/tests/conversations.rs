//! Many conversations (seed 003, DESIGN.md §3 and §13): a new chat starts from the defaults the
//! last change set, the list shows each by title, last activity and a preview (newest first),
//! a title is written from the first message, a delete takes everything the conversation owns
//! in one transaction and an undo puts it back within its window, and an existing data
//! directory's conversation comes through the upgrade as the list's first entry. Real SQLite,
//! a real engine, the scripted model server over loopback.

mod common;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use common::ManualClock;
use common::model_server::{ModelServer, text};
use harness_core::conversations::{Listed, UNDO_MS};
use harness_core::events::NoEvents;
use harness_core::invoke::{ApprovalBroker, Outcome, Prompt};
use harness_core::policy::{Answer, Preset, Rule, RuleKind};
use harness_core::store::{DATABASE_FILE, Store};
use harness_core::turn::{ConversationSettings, Scope};
use harness_core::{Engine, EngineError, Options};
use rusqlite::Connection;
use serde_json::json;

const V6: &str = include_str!("fixtures/schema-v6.sql");

/// The student allows every sheet: whatever is refused, the core refused.
struct Allow;

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

fn engine(dir: &Path, clock: &Arc<ManualClock>) -> Engine {
    let mut options = Options::new(Arc::new(Allow));
    options.builtin_plugins = true;
    options.clock = clock.clone();
    options.events = Arc::new(NoEvents);
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    engine
}

fn counts(dir: &Path, id: &str) -> [i64; 5] {
    let conn = Connection::open(dir.join(DATABASE_FILE)).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [id], |r| r.get(0)).unwrap() };
    [
        count("SELECT count(*) FROM conversations WHERE id = ?1"),
        count("SELECT count(*) FROM rules WHERE scope = ?1"),
        count("SELECT count(*) FROM documents WHERE conversation = ?1"),
        count("SELECT count(*) FROM turns WHERE conversation = ?1"),
        count("SELECT count(*) FROM messages WHERE conversation = ?1"),
    ]
}

#[test]
fn a_version_6_data_directory_keeps_its_main_conversation_as_the_first_entry() {
    // The upgrade names `main` from the first words the student wrote in it.
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
        conn.execute_batch(V6).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, settings, scope, turns, created_at) \
             VALUES ('main', '{\"preset\":\"ask_every_time\",\"planMode\":false}', \
             '{\"roots\":[],\"hosts\":[],\"apps\":[]}', 2, 100);
             INSERT INTO conversations (id, settings, scope, turns, created_at) \
             VALUES ('job-3', '{\"preset\":\"auto_edit\",\"planMode\":false}', \
             '{\"roots\":[],\"hosts\":[],\"apps\":[]}', 1, 500);
             INSERT INTO messages (conversation, turn, role, content, created_at) VALUES \
             ('main', 1, 'user', '  明天第3-4节\n在哪个教室上课？还有图书馆几点关门', 200), \
             ('main', 1, 'assistant', '在理教 107。', 210), \
             ('job-3', 1, 'user', '查一下', 600);",
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 6).unwrap();
    }
    drop(Store::open(dir.path()).unwrap());
    let clock = ManualClock::at(1_000);
    let engine = engine(dir.path(), &clock);
    assert_eq!(
        engine.conversations().list().unwrap(),
        [Listed {
            id: "main".into(),
            title: Some("明天第3-4节 在哪个教室上课？还有图书馆几点…".into()),
            last_active_ms: 210,
            preview: Some("在理教 107。".into()),
        }]
    );
    assert_eq!(engine.conversations().latest().unwrap(), "main");
    assert_eq!(
        engine.conversation("main").unwrap().settings.preset,
        Preset::AskEveryTime
    );
}

#[tokio::test]
async fn the_list_is_newest_first_with_a_title_written_from_the_first_message() {
    let server = ModelServer::start(vec![text("好的"), text("第二个回答"), text("又一个")]).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(1_000);
    let engine = engine(dir.path(), &clock);
    server.configure(&engine, "sk-conversations-secret");
    let conversations = engine.conversations();
    let first = conversations.create().unwrap();
    engine
        .send_message(&first, "帮我查校园卡余额")
        .await
        .unwrap();
    clock.set(2_000);
    let second = conversations.create().unwrap();
    assert_ne!(first, second);
    engine
        .send_message(
            &second,
            "Which classrooms are free this afternoon in the Teaching Building?",
        )
        .await
        .unwrap();
    // A later message never renames the conversation.
    clock.set(3_000);
    engine.send_message(&first, "再查一下流水").await.unwrap();
    let listed = conversations.list().unwrap();
    assert_eq!(
        listed,
        [
            Listed {
                id: first.clone(),
                title: Some("帮我查校园卡余额".into()),
                last_active_ms: 3_000,
                preview: Some("又一个".into()),
            },
            Listed {
                id: second.clone(),
                title: Some("Which classrooms are fr…".into()),
                last_active_ms: 2_000,
                preview: Some("第二个回答".into()),
            },
        ]
    );
    assert_eq!(
        conversations.rename(&second, "  空教室\n查询 ").unwrap(),
        "空教室 查询"
    );
    assert_eq!(conversations.title(&second).as_deref(), Some("空教室 查询"));
    assert!(matches!(
        conversations.rename(&second, " \u{200b}\n"),
        Err(EngineError::Invalid(why)) if why.starts_with("title: ")
    ));
    // The titles survive a restart.
    drop(engine);
    let engine = self::engine(dir.path(), &clock);
    let titles: Vec<Option<String>> = engine
        .conversations()
        .list()
        .unwrap()
        .into_iter()
        .map(|c| c.title)
        .collect();
    assert_eq!(
        titles,
        [Some("帮我查校园卡余额".into()), Some("空教室 查询".into())]
    );
}

#[test]
fn a_change_in_one_conversation_becomes_the_default_of_new_ones_and_leaves_the_others() {
    // Seed 003: "Changing a selection affects that chat and sets the default inherited by new
    // chats; other existing conversations keep their values."
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(1_000);
    let engine = engine(dir.path(), &clock);
    let a = engine.conversations().create().unwrap();
    clock.set(1_001);
    let b = engine.conversations().create().unwrap();
    let chosen = ConversationSettings {
        model: Some("deepseek-reasoner".into()),
        thinking_effort: Some("high".into()),
        preset: Preset::AskEveryTime,
        ..ConversationSettings::default()
    };
    engine
        .set_conversation_settings(&a, chosen.clone())
        .unwrap();
    clock.set(1_002);
    let c = engine.conversations().create().unwrap();
    assert_eq!(engine.conversation(&c).unwrap().settings, chosen);
    assert_eq!(
        engine.conversation(&b).unwrap().settings,
        ConversationSettings::default()
    );
}

/// A conversation with something in every table it owns, and a pending memory it wrote.
async fn full(engine: &Engine, server: &ModelServer) -> (String, i64) {
    server.configure(engine, "sk-conversations-secret");
    let id = engine.conversations().create().unwrap();
    engine.send_message(&id, "记住我住在燕园").await.unwrap();
    engine
        .set_conversation_rules(
            &id,
            vec![Rule {
                kind: RuleKind::Deny,
                tool: "wallet.*".into(),
                effect: None,
                when: None,
            }],
        )
        .unwrap();
    engine
        .set_scope(
            &id,
            Scope {
                hosts: vec!["pku.edu.cn".into()],
                ..Scope::default()
            },
        )
        .unwrap();
    engine
        .attach_document(&id, "课表.txt", "周二 理教107")
        .unwrap();
    let memory = engine
        .write_memory("住在燕园", Some(&id), Some(1), true)
        .unwrap();
    (id, memory.id)
}

#[tokio::test]
async fn a_delete_takes_everything_the_conversation_owns_and_an_undo_puts_it_back_as_it_was() {
    // DESIGN.md §13: history, documents, rules, scope and the pending memory's link go in one
    // transaction; within the undo window all of it returns.
    let server = ModelServer::start(vec![text("好的")]).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(10_000);
    let engine = engine(dir.path(), &clock);
    let (id, memory) = full(&engine, &server).await;
    let before = counts(dir.path(), &id);
    assert_eq!(before, [1, 1, 1, 1, 2]);
    let listed_before = engine.conversations().list().unwrap();

    engine.conversations().delete(&id).unwrap();
    assert_eq!(counts(dir.path(), &id), [0; 5]);
    assert_eq!(engine.memory(memory).unwrap().conversation, None);
    assert!(engine.conversation(&id).is_none());
    assert_eq!(engine.conversations().list().unwrap(), []);
    assert_eq!(
        engine.conversations().undoable(),
        Some((id.clone(), 10_000 + UNDO_MS))
    );
    // The deleted id is not made anew while it can come back.
    assert!(matches!(
        engine.open_conversation(&id),
        Err(EngineError::NoSuchConversation(_))
    ));

    clock.set(10_000 + UNDO_MS);
    assert_eq!(engine.conversations().undo_delete().unwrap(), id);
    assert_eq!(counts(dir.path(), &id), before);
    assert_eq!(engine.conversations().list().unwrap(), listed_before);
    assert_eq!(
        engine.memory(memory).unwrap().conversation.as_deref(),
        Some(id.as_str())
    );
    let back = engine.conversation(&id).unwrap();
    assert_eq!(back.scope.hosts, ["pku.edu.cn"]);
    assert_eq!(back.rules.rules().len(), 1);
    assert_eq!(engine.documents(&id).unwrap().len(), 1);
    assert_eq!(engine.conversations().undoable(), None);
}

#[tokio::test]
async fn an_undo_is_refused_once_its_window_passed_or_another_conversation_was_deleted() {
    let server = ModelServer::start(vec![text("好的")]).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(10_000);
    let engine = engine(dir.path(), &clock);
    let (id, _) = full(&engine, &server).await;
    engine.conversations().delete(&id).unwrap();
    clock.set(10_001 + UNDO_MS);
    assert_eq!(engine.conversations().undoable(), None);
    assert!(matches!(
        engine.conversations().undo_delete(),
        Err(EngineError::Invalid(_))
    ));
    assert_eq!(counts(dir.path(), &id), [0; 5]);

    let a = engine.conversations().create().unwrap();
    clock.set(20_000);
    let b = engine.conversations().create().unwrap();
    engine.conversations().delete(&a).unwrap();
    engine.conversations().delete(&b).unwrap();
    // The next delete ends the previous one's undo: only `b` comes back.
    assert_eq!(engine.conversations().undo_delete().unwrap(), b);
    assert!(engine.conversations().undo_delete().is_err());
    assert!(engine.conversation(&a).is_none());
}

#[tokio::test]
async fn the_agents_settings_tools_cannot_delete_a_conversation() {
    // DESIGN.md §13: only the student deletes a conversation, from a screen or the CLI.
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(1_000);
    let engine = engine(dir.path(), &clock);
    let id = engine.conversations().create().unwrap();
    let tools: Vec<String> = engine
        .plugins()
        .into_iter()
        .filter(|p| p.plugin.id == "settings")
        .flat_map(|p| {
            p.plugin
                .tools
                .iter()
                .map(|t| t.name.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(tools, ["get", "change", "openScreen"]);
    for key in ["conversation", "conversations", "conversation.delete", &id] {
        let done = engine
            .invoke_in_conversation(
                &id,
                "settings.change".into(),
                json!({"key": key, "value": null}),
            )
            .await
            .unwrap();
        assert!(
            !matches!(done.outcome, Outcome::Ran { .. }),
            "{key}: {:?}",
            done.outcome
        );
    }
    assert!(engine.conversation(&id).is_some());
    assert_eq!(counts(dir.path(), &id)[0], 1);
}

#[tokio::test]
async fn the_screens_start_switch_rename_delete_and_undo_a_conversation() {
    // The list and the chat are models the shells render; each tap is the screen's action.
    use harness_core::screens::{Acted, Action, Live, Route, Screens};
    let server = ModelServer::start(vec![text("好的")]).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(1_000);
    let engine = Arc::new(engine(dir.path(), &clock));
    server.configure(&engine, "sk-conversations-secret");
    engine
        .change_setting(harness_core::settings::parse_change("language", &json!("en")).unwrap())
        .unwrap();
    let screens = Screens::new(engine.clone(), Live::new());
    let list = screens.conversation_list().unwrap();
    assert_eq!(
        list.empty.as_deref(),
        Some("No chats yet. Tap New chat to start one.")
    );
    // The chat tab opens the latest; with none, the data directory's first, `main`.
    let first = screens.latest_conversation().unwrap();
    assert_eq!(first, "main");
    let chat = screens.chat(&first).unwrap();
    assert_eq!(chat.title, "New chat");
    assert_eq!(chat.new_chat.action, Action::NewConversation);
    assert_eq!(
        chat.conversations.action,
        Action::Open {
            route: Route::Conversations
        }
    );
    screens
        .act(Action::SendMessage {
            conversation: first.clone(),
            text: "What is open in the library tonight?".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        screens.chat(&first).unwrap().title,
        "What is open in the lib…"
    );

    clock.set(2_000);
    let Acted::OpenConversation {
        conversation: second,
    } = screens.act(chat.new_chat.action.clone()).await.unwrap()
    else {
        panic!("a new chat opens it");
    };
    assert_ne!(second, first);
    assert_eq!(screens.latest_conversation().unwrap(), second);
    let list = screens.conversation_list().unwrap();
    let rows: Vec<(&str, &str, &str)> = list
        .rows
        .iter()
        .map(|r| {
            (
                r.conversation.as_str(),
                r.title.as_str(),
                r.preview.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (second.as_str(), "New chat", ""),
            (first.as_str(), "What is open in the lib…", "好的"),
        ]
    );
    assert_eq!(
        screens.act(list.rows[1].open.clone()).await.unwrap(),
        Acted::OpenConversation {
            conversation: first.clone()
        }
    );
    screens
        .act(Action::RenameConversation {
            conversation: first.clone(),
            title: "Library".into(),
        })
        .await
        .unwrap();
    assert_eq!(screens.chat(&first).unwrap().title, "Library");

    let delete = screens.conversation_list().unwrap().rows[1].delete.clone();
    assert_eq!(
        delete.action,
        Action::DeleteConversation {
            conversation: first.clone()
        }
    );
    screens.act(delete.action).await.unwrap();
    let list = screens.conversation_list().unwrap();
    assert_eq!(list.rows.len(), 1);
    let undo = list.undo.unwrap();
    assert_eq!(
        (undo.text.as_str(), undo.until_ms),
        ("Chat deleted", 2_000 + UNDO_MS)
    );
    assert_eq!(
        screens.act(undo.undo.action).await.unwrap(),
        Acted::OpenConversation {
            conversation: first.clone()
        }
    );
    let list = screens.conversation_list().unwrap();
    assert_eq!(list.undo, None);
    assert_eq!(list.rows.len(), 2);
    assert_eq!(screens.chat(&first).unwrap().title, "Library");
}
