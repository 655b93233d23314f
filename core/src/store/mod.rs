//! SQLite persistence, in the manner of application-services' sql-support (STYLE.md §6): a
//! schema with a `VERSION`, creation SQL and `upgrade_from`, run in one IMMEDIATE transaction
//! at open and versioned by `PRAGMA user_version`; WAL, foreign keys on, temp store in memory;
//! one writer connection and a separate reader. Every state change is one transaction.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

/// The file inside a data directory.
pub const DATABASE_FILE: &str = "harness.sqlite3";

/// The file a process of the app holds an exclusive lock on while it has the directory open.
pub const LOCK_FILE: &str = "harness.lock";

/// The audit log keeps this many most recent rows; older ones are pruned at open and every
/// [`AUDIT_PRUNE_EVERY`] appends. At the rate a phone makes calls (hundreds a day) this is
/// more than a year of history, in about 20 MB.
pub const AUDIT_RETENTION_ROWS: i64 = 200_000;
pub const AUDIT_PRUNE_EVERY: u64 = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the database {path} was written by a newer version of the app (schema {found}, this app knows up to {known}); it was left as it is — update the app to open it"
    )]
    TooNew {
        path: String,
        found: u32,
        known: u32,
    },
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    /// The database file, or the directory it lives in, cannot be used: the message names it
    /// and says what to do.
    #[error("{0}")]
    File(String),
    #[error(
        "the data directory {dir} is in use by another process of the app; close that one and try again"
    )]
    InUse { dir: String },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
}

pub mod schema {
    //! Every table of the database. [`CREATE`] writes the newest schema directly; [`upgrade_from`]
    //! brings an older database there one released version at a time. The steps are frozen once
    //! released: a phone may hold a database of any earlier version.

    use rusqlite::Transaction;

    /// The current schema version.
    pub const VERSION: u32 = 9;

    /// The newest schema, for an empty database.
    pub const CREATE: &str = "
        CREATE TABLE plugins (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('bundled', 'official', 'community', 'remote')),
            source TEXT NOT NULL,
            manifest TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            installed_at INTEGER NOT NULL
        );
        CREATE TABLE modes (
            plugin TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
            effect TEXT NOT NULL CHECK (effect IN ('read', 'write', 'money', 'public')),
            mode TEXT NOT NULL CHECK (mode IN ('auto', 'ask', 'off')),
            PRIMARY KEY (plugin, effect)
        );
        CREATE TABLE rules (
            scope TEXT NOT NULL,
            position INTEGER NOT NULL,
            rule TEXT NOT NULL,
            PRIMARY KEY (scope, position)
        );
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            scope TEXT NOT NULL,
            turns INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            tainted INTEGER NOT NULL DEFAULT 0,
            title TEXT
        );
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE consent (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE preferences (
            plugin TEXT PRIMARY KEY REFERENCES plugins(id) ON DELETE CASCADE,
            value TEXT NOT NULL
        );
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            text TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('active', 'pending', 'rejected')),
            conversation TEXT,
            turn INTEGER,
            created_at INTEGER NOT NULL,
            decided_at INTEGER
        );
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            conversation TEXT NOT NULL,
            name TEXT NOT NULL,
            text TEXT NOT NULL,
            attached_at INTEGER NOT NULL
        );
        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            actor TEXT NOT NULL,
            conversation TEXT,
            tool TEXT NOT NULL,
            effect TEXT,
            event TEXT NOT NULL,
            detail TEXT,
            step TEXT,
            rule TEXT,
            input_digest TEXT
        );
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            spec TEXT NOT NULL,
            owner TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'done')),
            paused_reason TEXT,
            anchor_ms INTEGER NOT NULL,
            next_due_ms INTEGER,
            claim_due_ms INTEGER,
            claim_at_ms INTEGER,
            last TEXT,
            refusals_in_row INTEGER NOT NULL DEFAULT 0,
            refusals INTEGER NOT NULL DEFAULT 0,
            memory TEXT NOT NULL DEFAULT '{}',
            created_at INTEGER NOT NULL
        );
        CREATE TABLE source_cache (
            plugin TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            fetched_at INTEGER NOT NULL,
            PRIMARY KEY (plugin, key)
        );
        CREATE TABLE turns (
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'interrupted', 'failed')),
            reason TEXT,
            started_at INTEGER NOT NULL,
            ended_at INTEGER,
            PRIMARY KEY (conversation, turn)
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
            content TEXT,
            tool_calls TEXT,
            tool_call_id TEXT,
            tool TEXT,
            for_model TEXT,
            created_at INTEGER NOT NULL,
            thinking TEXT
        );
        CREATE INDEX messages_by_conversation ON messages (conversation, id);
        CREATE TABLE spending (
            id INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            plugin TEXT NOT NULL,
            tool TEXT NOT NULL,
            actor TEXT NOT NULL,
            payee TEXT,
            amount_fen INTEGER NOT NULL CHECK (amount_fen >= 0)
        );
        CREATE INDEX spending_by_time ON spending (at_ms);
        CREATE TABLE allowances (
            id INTEGER PRIMARY KEY,
            plugin TEXT NOT NULL,
            effect TEXT NOT NULL CHECK (effect IN ('read', 'write', 'money', 'public')),
            scope TEXT NOT NULL CHECK (scope IN ('conversation', 'today', 'always')),
            conversation TEXT,
            tool TEXT NOT NULL,
            since_ms INTEGER NOT NULL,
            until_ms INTEGER,
            mode_before TEXT
        );
        CREATE TABLE model_usage (
            id INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cached_tokens INTEGER NOT NULL
        );
        CREATE INDEX model_usage_by_time ON model_usage (at_ms);
    ";

    /// Creates the newest schema in an empty database.
    pub fn create(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tx.execute_batch(CREATE)
    }

    /// Brings a database at `version` up to [`VERSION`], one step at a time.
    pub fn upgrade_from(tx: &Transaction<'_>, version: u32) -> rusqlite::Result<()> {
        debug_assert!(version <= VERSION);
        // Version 2: the scheduler's jobs and the data-source cache.
        if version < 2 {
            tx.execute_batch(
                "CREATE TABLE jobs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    spec TEXT NOT NULL,
                    owner TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'done')),
                    paused_reason TEXT,
                    anchor_ms INTEGER NOT NULL,
                    next_due_ms INTEGER,
                    claim_due_ms INTEGER,
                    claim_at_ms INTEGER,
                    last TEXT,
                    refusals_in_row INTEGER NOT NULL DEFAULT 0,
                    refusals INTEGER NOT NULL DEFAULT 0,
                    memory TEXT NOT NULL DEFAULT '{}',
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE source_cache (
                    plugin TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
                    key TEXT NOT NULL,
                    value TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL,
                    PRIMARY KEY (plugin, key)
                );",
            )?;
        }
        // Version 3: a turn's taint is kept with its conversation (DESIGN.md §3: it outlives a
        // restart), and the app settings are one row per key instead of one blob, so a change
        // writes only its own key.
        if version < 3 {
            tx.execute_batch(
                "ALTER TABLE conversations ADD COLUMN tainted INTEGER NOT NULL DEFAULT 0;",
            )?;
            split_settings_blob(tx)?;
        }
        // Version 4: the agent's history — each turn's state (a turn still `running` at open
        // was interrupted) and each message as it completed, so a killed process re-runs
        // nothing.
        if version < 4 {
            tx.execute_batch(
                "CREATE TABLE turns (
                conversation TEXT NOT NULL,
                turn INTEGER NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'interrupted', 'failed')),
                reason TEXT,
                started_at INTEGER NOT NULL,
                ended_at INTEGER,
                PRIMARY KEY (conversation, turn)
            );
            CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                conversation TEXT NOT NULL,
                turn INTEGER NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
                content TEXT,
                tool_calls TEXT,
                tool_call_id TEXT,
                tool TEXT,
                for_model TEXT,
                created_at INTEGER NOT NULL
            );
            CREATE INDEX messages_by_conversation ON messages (conversation, id);",
            )?;
        }
        // Version 5: the model's thinking kept with its assistant message, for the history
        // screen (it is never sent back to the model).
        if version < 5 {
            tx.execute_batch("ALTER TABLE messages ADD COLUMN thinking TEXT;")?;
        }
        // Version 6: what was paid by money tools that declare their amount, so the day's total
        // and the payees paid before survive a restart (DESIGN.md §3 8e).
        if version < 6 {
            tx.execute_batch(
                "CREATE TABLE spending (
                    id INTEGER PRIMARY KEY,
                    at_ms INTEGER NOT NULL,
                    plugin TEXT NOT NULL,
                    tool TEXT NOT NULL,
                    actor TEXT NOT NULL,
                    payee TEXT,
                    amount_fen INTEGER NOT NULL CHECK (amount_fen >= 0)
                );
                CREATE INDEX spending_by_time ON spending (at_ms);",
            )?;
        }
        // Version 7: many conversations, each with a title; one a data directory already had
        // (the phone's `main`) is named from its first message, so the list shows it first.
        if version < 7 {
            tx.execute_batch("ALTER TABLE conversations ADD COLUMN title TEXT;")?;
            name_from_first_words(tx)?;
        }
        // Version 8: each "Always allow" with its scope and end (DESIGN.md §3), so an allowance
        // for this conversation or today ends by itself and the student can list and revoke it.
        if version < 8 {
            tx.execute_batch(
                "CREATE TABLE allowances (
                    id INTEGER PRIMARY KEY,
                    plugin TEXT NOT NULL,
                    effect TEXT NOT NULL CHECK (effect IN ('read', 'write', 'money', 'public')),
                    scope TEXT NOT NULL CHECK (scope IN ('conversation', 'today', 'always')),
                    conversation TEXT,
                    tool TEXT NOT NULL,
                    since_ms INTEGER NOT NULL,
                    until_ms INTEGER,
                    mode_before TEXT
                );",
            )?;
        }
        // Version 9: the tokens each turn used, by provider and model, kept when its
        // conversation is deleted: the month's spend in 元 and its cap are read from it.
        if version < 9 {
            tx.execute_batch(
                "CREATE TABLE model_usage (
                    id INTEGER PRIMARY KEY,
                    at_ms INTEGER NOT NULL,
                    conversation TEXT NOT NULL,
                    turn INTEGER NOT NULL,
                    provider TEXT NOT NULL,
                    model TEXT NOT NULL,
                    prompt_tokens INTEGER NOT NULL,
                    completion_tokens INTEGER NOT NULL,
                    cached_tokens INTEGER NOT NULL
                );
                CREATE INDEX model_usage_by_time ON model_usage (at_ms);",
            )?;
        }
        Ok(())
    }

    /// Names each conversation without a title from the first words the student wrote in it,
    /// cut as a new conversation's title is.
    fn name_from_first_words(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        use rusqlite::OptionalExtension;
        let ids: Vec<String> = tx
            .prepare("SELECT id FROM conversations WHERE title IS NULL")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in ids {
            let first: Option<String> = tx
                .query_row(
                    "SELECT content FROM messages WHERE conversation = ?1 AND role = 'user'
                     AND coalesce(content, '') != '' ORDER BY id LIMIT 1",
                    [&id],
                    |r| r.get(0),
                )
                .optional()?;
            let title =
                first.and_then(|w| crate::text::headline(&w, super::conversations::TITLE_CHARS));
            tx.execute(
                "UPDATE conversations SET title = ?2 WHERE id = ?1",
                rusqlite::params![id, title],
            )?;
        }
        Ok(())
    }

    /// Version 2 kept the app settings as one JSON object under the key `app`; version 3 keeps
    /// each as its own row, named as the settings keys are (`model.endpoint`).
    fn split_settings_blob(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        use rusqlite::OptionalExtension;
        let blob: Option<String> = tx
            .query_row("SELECT value FROM settings WHERE key = 'app'", [], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(blob) = blob else {
            return Ok(());
        };
        let value: serde_json::Value = serde_json::from_str(&blob).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })?;
        for (key, value) in flatten(value) {
            tx.execute(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = ?2",
                rusqlite::params![key, value.to_string()],
            )?;
        }
        tx.execute("DELETE FROM settings WHERE key = 'app'", [])?;
        Ok(())
    }

    /// An object's members as rows, one level of nesting joined with a dot: `{"model": {"name":
    /// …}}` is the row `model.name`.
    pub fn flatten(value: serde_json::Value) -> Vec<(String, serde_json::Value)> {
        use serde_json::Value;
        let Value::Object(members) = value else {
            return Vec::new();
        };
        let mut rows = Vec::new();
        for (key, member) in members {
            match member {
                Value::Object(inner) => {
                    rows.extend(inner.into_iter().map(|(k, v)| (format!("{key}.{k}"), v)));
                }
                other => rows.push((key, other)),
            }
        }
        rows
    }
}

/// The database of one data directory.
pub struct Store {
    writer: Mutex<Connection>,
    /// Reads that need not wait for a write; the same connection for an in-memory database.
    reader: Option<Mutex<Connection>>,
    path: Option<PathBuf>,
    /// The data directory's lock, held for the store's life. Declared last, so that it is
    /// released only after both connections have closed.
    _lock: Option<std::fs::File>,
}

impl Store {
    /// Opens (creating, or upgrading in one transaction) the database in `dir`. The directory
    /// is locked for as long as the store lives: two engines on one directory would each keep
    /// their own copy of the state in memory and overwrite each other's changes.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(DATABASE_FILE);
        let shown = path.display().to_string();
        std::fs::create_dir_all(dir).map_err(|e| {
            StoreError::File(format!(
                "cannot create the data directory {}: {e}; check that its parent folder exists and can be written",
                dir.display()
            ))
        })?;
        let lock = lock_dir(dir)?;
        if path.is_dir() {
            return Err(StoreError::File(format!(
                "the database {shown} is a folder, not a file; move it aside to start afresh"
            )));
        }
        let connections = || -> Result<(Connection, Connection), StoreError> {
            let mut writer = Connection::open(&path)?;
            configure(&writer)?;
            migrate(&mut writer, &shown)?;
            let reader = Connection::open_with_flags(
                &path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            reader.pragma_update(None, "temp_store", "MEMORY")?;
            Ok((writer, reader))
        };
        let (writer, reader) = connections().map_err(|e| located(e, &shown))?;
        Ok(Self {
            writer: Mutex::new(writer),
            reader: Some(Mutex::new(reader)),
            path: Some(path),
            _lock: Some(lock),
        })
    }

    /// A database that lives as long as the process: for scenarios and tests.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        configure(&conn)?;
        migrate(&mut conn, ":memory:")?;
        Ok(Self {
            writer: Mutex::new(conn),
            reader: None,
            path: None,
            _lock: None,
        })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one IMMEDIATE transaction: all of it is committed, or none of it.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.writer();
        let run = || {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        };
        run().map_err(|e| self.located(e))
    }

    /// Runs `f` on the reader connection.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &self.reader {
            Some(reader) => f(&reader.lock().unwrap_or_else(|p| p.into_inner())),
            None => f(&self.writer()),
        }
        .map_err(|e| self.located(e))
    }

    fn located(&self, e: StoreError) -> StoreError {
        match &self.path {
            Some(path) => located(e, &path.display().to_string()),
            None => e,
        }
    }
}

/// Names the database file in an error about the file itself (not a database, read-only,
/// full, unreadable) and says what to do; other errors are left as they are.
fn located(e: StoreError, shown: &str) -> StoreError {
    use rusqlite::ErrorCode;
    let StoreError::Sql(rusqlite::Error::SqliteFailure(failure, detail)) = &e else {
        return e;
    };
    let detail = detail.as_deref().unwrap_or("");
    let message = match failure.code {
        ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => format!(
            "the database {shown} is not a SQLite database (it may be corrupt); move it aside to start afresh"
        ),
        ErrorCode::ReadOnly => format!(
            "the database {shown} is read-only; check the permissions of the file and of its folder"
        ),
        ErrorCode::PermissionDenied | ErrorCode::CannotOpen => format!(
            "cannot open the database {shown} ({detail}); check that it and its folder can be read and written"
        ),
        ErrorCode::DiskFull => {
            format!("the disk holding the database {shown} is full; free some space and try again")
        }
        ErrorCode::SystemIoFailure => {
            format!("cannot read or write the database {shown} ({detail}); check the disk")
        }
        _ => return e,
    };
    StoreError::File(message)
}

/// Takes the data directory's exclusive lock, or says that another process holds it. An
/// advisory `flock` on a file in the directory: the kernel drops it when the process ends,
/// however it ends, so a crash never leaves the directory locked.
#[cfg(unix)]
fn lock_dir(dir: &Path) -> Result<std::fs::File, StoreError> {
    use std::os::unix::io::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let cannot = |e: std::io::Error| {
        StoreError::File(format!(
            "cannot lock the data directory {} through {}: {e}; check that the folder can be written",
            dir.display(),
            path.display()
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(cannot)?;
    // SAFETY: flock takes a descriptor `file` owns and keeps open for the call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            StoreError::InUse {
                dir: dir.display().to_string(),
            }
        } else {
            cannot(e)
        });
    }
    Ok(file)
}

#[cfg(not(unix))]
fn lock_dir(dir: &Path) -> Result<std::fs::File, StoreError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(LOCK_FILE))
        .map_err(|e| StoreError::File(format!("cannot open {}: {e}", dir.display())))
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // In WAL mode NORMAL survives a killed process (the OS holds every committed page);
    // only a power cut can lose the last commits.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

fn migrate(conn: &mut Connection, shown: &str) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: u32 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > schema::VERSION {
        // Never alter a database a newer app wrote: the rollback leaves it as it was.
        return Err(StoreError::TooNew {
            path: shown.to_owned(),
            found: version,
            known: schema::VERSION,
        });
    }
    if version == 0 {
        schema::create(&tx)?;
    } else if version < schema::VERSION {
        schema::upgrade_from(&tx, version)?;
    }
    tx.pragma_update(None, "user_version", schema::VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Each concern's typed rows, one module per concern (as application-services gives each
/// component its own store). Writes take a `&Transaction` so that the caller decides what one
/// state change is.
pub mod allowances;
pub mod audit;
pub mod conversations;
pub mod history;
pub mod jobs;
pub mod memories;
pub mod plugins;
pub mod sources;
pub mod spending;
pub mod usage;
pub mod values;

/// Every concern's rows under one name, as callers outside the core knew them.
pub mod rows {
    pub use super::audit::{AuditRow, append_audit, audit, prune_audit};
    pub use super::conversations::{
        ConversationRow, conversations, documents, insert_document, put_conversation, put_rules,
        rules,
    };
    pub use super::memories::{
        MemoryRow, MemoryState, decide_memory, insert_memory, memories, memory,
    };
    pub use super::plugins::{
        PluginRow, delete_plugin, modes, plugins, put_plugin, set_enabled, set_mode,
    };
    pub use super::values::{Table, delete_value, put_value, values};
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_database_is_at_the_current_version_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (version, journal): (u32, String) = store
            .read(|c| {
                let v = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let j = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                Ok((v, j))
            })
            .unwrap();
        assert_eq!((version, journal.as_str()), (schema::VERSION, "wal"));
    }

    #[test]
    fn a_database_from_a_newer_version_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        let path = dir.path().join(DATABASE_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(dir.path()).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "the database {} was written by a newer version of the app (schema 99, this app knows up to {}); it was left as it is — update the app to open it",
                path.display(),
                schema::VERSION
            )
        );
        let conn = Connection::open(&path).unwrap();
        let version: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 99);
        drop(conn);
        assert_eq!(std::fs::read(&path).unwrap().len(), before.len());
    }

    #[test]
    fn a_failed_write_commits_nothing() {
        let store = Store::open_in_memory().unwrap();
        let result: Result<(), StoreError> = store.write(|tx| {
            tx.execute(
                "INSERT INTO settings (key, value) VALUES ('language', '\"en\"')",
                [],
            )?;
            Err(StoreError::Corrupt("refused".into()))
        });
        assert!(result.is_err());
        let count: i64 = store
            .read(|c| Ok(c.query_row("SELECT count(*) FROM settings", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(count, 0);
    }
}
