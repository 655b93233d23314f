//! STYLE.md §6: "A test upgrades an old database and compares it with a fresh one." A database
//! made with exactly version 1's SQL, at user_version 1, is opened by the store; its schema
//! must then be the fresh database's, object for object.

use harness_core::store::{DATABASE_FILE, Store, schema};
use rusqlite::Connection;

/// Every schema object as (type, name, table, SQL with whitespace collapsed), sorted.
fn objects(conn: &Connection) -> Vec<(String, String, String, String)> {
    let mut stmt = conn.prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").unwrap();
    let mut rows: Vec<(String, String, String, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?))
        })
        .unwrap()
        .map(|r| {
            let (kind, name, table, sql) = r.unwrap();
            (
                kind,
                name,
                table,
                sql.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn version(conn: &Connection) -> u32 {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_1_database_upgrades_to_exactly_the_fresh_schema() {
    let old = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
        conn.execute_batch(schema::CREATE_V1).unwrap();
        conn.execute(
            "INSERT INTO settings (key, value) VALUES ('app', '{\"language\":\"en\"}')",
            [],
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    drop(Store::open(old.path()).unwrap());

    let fresh = tempfile::tempdir().unwrap();
    drop(Store::open(fresh.path()).unwrap());

    let upgraded = Connection::open(old.path().join(DATABASE_FILE)).unwrap();
    let created = Connection::open(fresh.path().join(DATABASE_FILE)).unwrap();
    assert_eq!(
        (version(&upgraded), version(&created)),
        (schema::VERSION, schema::VERSION)
    );
    assert_eq!(schema::VERSION, 2);
    let upgraded_objects = objects(&upgraded);
    assert_eq!(upgraded_objects, objects(&created));
    for table in ["jobs", "source_cache"] {
        assert!(
            upgraded_objects
                .iter()
                .any(|(kind, name, _, _)| kind == "table" && name == table),
            "{table} is missing"
        );
    }
    // The upgrade kept what version 1 stored.
    let kept: String = upgraded
        .query_row("SELECT value FROM settings WHERE key = 'app'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kept, "{\"language\":\"en\"}");
}
