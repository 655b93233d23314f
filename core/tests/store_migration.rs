//! STYLE.md §6: "A test upgrades an old database and compares it with a fresh one." A database
//! made from a frozen copy of an earlier version's SQL (tests/fixtures) is opened by the store;
//! its schema must then be the fresh database's, object for object — and the fresh one is made
//! by `schema::CREATE`, a different statement from the upgrade steps, so the two can differ.

use harness_core::store::{DATABASE_FILE, Store, schema};
use rusqlite::Connection;

const V1: &str = include_str!("fixtures/schema-v1.sql");
const V2: &str = include_str!("fixtures/schema-v2.sql");
const V3: &str = include_str!("fixtures/schema-v3.sql");
const V4: &str = include_str!("fixtures/schema-v4.sql");
const V5: &str = include_str!("fixtures/schema-v5.sql");
const V6: &str = include_str!("fixtures/schema-v6.sql");
const V7: &str = include_str!("fixtures/schema-v7.sql");
const V8: &str = include_str!("fixtures/schema-v8.sql");

/// Every schema object as (type, name, table, SQL), the SQL with white space dropped around
/// punctuation and folded elsewhere, since `ALTER TABLE … ADD COLUMN` splices its text in as
/// written. Sorted.
fn objects(conn: &Connection) -> Vec<(String, String, String, String)> {
    let mut stmt = conn
        .prepare(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master \
             WHERE name NOT LIKE 'sqlite_%'",
        )
        .unwrap();
    let mut rows: Vec<(String, String, String, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?))
        })
        .unwrap()
        .map(|r| {
            let (kind, name, table, sql) = r.unwrap();
            (kind, name, table, normalise(&sql))
        })
        .collect();
    rows.sort();
    rows
}

fn normalise(sql: &str) -> String {
    let folded = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    for c in folded.chars() {
        if matches!(c, '(' | ')' | ',') && out.ends_with(' ') {
            out.pop();
        }
        if c == ' ' && (out.ends_with('(') || out.ends_with(',')) {
            continue;
        }
        out.push(c);
    }
    out
}

fn version(conn: &Connection) -> u32 {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// A database at `at`, made by `sql`, with `fill` run on it.
fn old_database(sql: &str, at: u32, fill: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    conn.execute_batch(sql).unwrap();
    conn.execute_batch(fill).unwrap();
    conn.pragma_update(None, "user_version", at).unwrap();
    dir
}

fn fresh_objects() -> Vec<(String, String, String, String)> {
    let fresh = tempfile::tempdir().unwrap();
    drop(Store::open(fresh.path()).unwrap());
    let created = Connection::open(fresh.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&created), schema::VERSION);
    objects(&created)
}

fn settings_rows(conn: &Connection) -> Vec<(String, String)> {
    let mut stmt = conn
        .prepare("SELECT key, value FROM settings ORDER BY key")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_version_1_database_upgrades_to_exactly_the_fresh_schema() {
    let old = old_database(
        V1,
        1,
        "INSERT INTO settings (key, value) VALUES \
         ('app', '{\"language\":\"en\",\"model\":{\"name\":\"qwen-plus\",\"endpoint\":\"\"}}'), \
         ('conversationDefaults', '{\"preset\":\"skip_all\"}');
         INSERT INTO conversations (id, settings, scope, turns, created_at) \
         VALUES ('c1', '{}', '{}', 4, 1);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!((version(&upgraded), schema::VERSION), (9, 9));
    assert_eq!(objects(&upgraded), fresh_objects());

    // What version 1 stored is kept; the settings blob became one row per key.
    assert_eq!(
        settings_rows(&upgraded),
        [
            (
                "conversationDefaults".to_owned(),
                "{\"preset\":\"skip_all\"}".to_owned()
            ),
            ("language".to_owned(), "\"en\"".to_owned()),
            ("model.endpoint".to_owned(), "\"\"".to_owned()),
            ("model.name".to_owned(), "\"qwen-plus\"".to_owned()),
        ]
    );
    let (turns, tainted): (i64, bool) = upgraded
        .query_row(
            "SELECT turns, tainted FROM conversations WHERE id = 'c1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((turns, tainted), (4, false));
}

#[test]
fn a_version_2_database_upgrades_to_exactly_the_fresh_schema() {
    let old = old_database(
        V2,
        2,
        "INSERT INTO jobs (spec, owner, state, anchor_ms, created_at) \
         VALUES ('{}', 'user', 'active', 0, 0);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let jobs: i64 = upgraded
        .query_row("SELECT count(*) FROM jobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(jobs, 1);
}

#[test]
fn a_version_2_database_left_as_it_was_differs_from_the_fresh_schema() {
    // The comparison above can fail: an upgrade that did nothing is seen.
    let dir = old_database(V2, 2, "");
    let conn = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    assert_ne!(objects(&conn), fresh_objects());
}

#[test]
fn a_version_3_database_upgrades_to_exactly_the_fresh_schema() {
    let old = old_database(
        V3,
        3,
        "INSERT INTO conversations (id, settings, scope, turns, created_at, tainted) \
         VALUES ('c1', '{}', '{}', 2, 1, 1);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let (turns, tainted): (i64, bool) = upgraded
        .query_row(
            "SELECT turns, tainted FROM conversations WHERE id = 'c1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((turns, tainted), (2, true));
    let messages: i64 = upgraded
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(messages, 0);
}

#[test]
fn a_version_4_database_upgrades_to_exactly_the_fresh_schema_and_keeps_its_history() {
    let old = old_database(
        V4,
        4,
        "INSERT INTO messages (conversation, turn, role, content, created_at) \
         VALUES ('c1', 1, 'assistant', '好的', 7);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let (content, thinking): (String, Option<String>) = upgraded
        .query_row(
            "SELECT content, thinking FROM messages WHERE conversation = 'c1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((content.as_str(), thinking), ("好的", None));
}

#[test]
fn a_version_5_database_upgrades_to_exactly_the_fresh_schema_with_an_empty_spending_ledger() {
    // DESIGN.md §3 8e: the day's total is kept in SQLite; an upgraded phone starts it empty.
    let old = old_database(
        V5,
        5,
        "INSERT INTO messages (conversation, turn, role, content, created_at, thinking) \
         VALUES ('c1', 1, 'assistant', '好的', 7, '想');",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let thinking: String = upgraded
        .query_row(
            "SELECT thinking FROM messages WHERE conversation = 'c1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(thinking, "想");
    let paid: i64 = upgraded
        .query_row("SELECT count(*) FROM spending", [], |r| r.get(0))
        .unwrap();
    assert_eq!(paid, 0);
}

#[test]
fn a_version_6_database_upgrades_to_exactly_the_fresh_schema_with_its_conversations_named() {
    // Issue: many conversations — the data directory's conversation is named from its first
    // words; one with none stays unnamed until its first message.
    let old = old_database(
        V6,
        6,
        "INSERT INTO conversations (id, settings, scope, turns, created_at) \
         VALUES ('main', '{}', '{}', 1, 1), ('empty', '{}', '{}', 0, 2);
         INSERT INTO messages (conversation, turn, role, content, created_at) \
         VALUES ('main', 1, 'user', '图书馆几点关门？', 3);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let mut stmt = upgraded
        .prepare("SELECT id, title FROM conversations ORDER BY id")
        .unwrap();
    let titles: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        titles,
        [
            ("empty".to_owned(), None),
            ("main".to_owned(), Some("图书馆几点关门？".to_owned()))
        ]
    );
}

#[test]
fn a_version_7_database_upgrades_to_exactly_the_fresh_schema_with_no_allowances() {
    // DESIGN.md §3: each "Always allow" is kept with its scope and end; an upgraded phone's
    // modes stay as they were, and it has no scoped allowance yet.
    let old = old_database(
        V7,
        7,
        "INSERT INTO spending (at_ms, plugin, tool, actor, payee, amount_fen) \
         VALUES (1, 'wallet', 'wallet.pay', 'user', '一食堂', 1500);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let paid: i64 = upgraded
        .query_row("SELECT sum(amount_fen) FROM spending", [], |r| r.get(0))
        .unwrap();
    assert_eq!(paid, 1500);
    let allowances: i64 = upgraded
        .query_row("SELECT count(*) FROM allowances", [], |r| r.get(0))
        .unwrap();
    assert_eq!(allowances, 0);
}

#[test]
fn a_version_8_database_upgrades_to_exactly_the_fresh_schema_with_an_empty_usage_ledger() {
    // DESIGN.md §13: usage is recorded per turn; an upgraded phone keeps its history and has
    // spent nothing on the model yet as far as the app knows.
    let old = old_database(
        V8,
        8,
        "INSERT INTO conversations (id, settings, scope, created_at, title)
         VALUES ('main', '{}', '{}', 1, '图书馆');
         INSERT INTO turns (conversation, turn, state, started_at) VALUES ('main', 1, 'done', 1);",
    );
    drop(Store::open(old.path()).unwrap());
    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(version(&upgraded), 9);
    assert_eq!(objects(&upgraded), fresh_objects());
    let turns: i64 = upgraded
        .query_row("SELECT count(*) FROM turns", [], |r| r.get(0))
        .unwrap();
    assert_eq!(turns, 1);
    let used: i64 = upgraded
        .query_row("SELECT count(*) FROM model_usage", [], |r| r.get(0))
        .unwrap();
    assert_eq!(used, 0);
}
