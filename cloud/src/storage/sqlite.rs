//! The embedded backend: one SQLite file in WAL mode, one connection, each call on tokio's
//! blocking pool so a slow disk never stalls the server's other requests.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Device, QUOTA_BYTES, Record, Storage, StorageError, Write, Written};

/// The schema, one entry per version, applied in order (`PRAGMA user_version` counts them).
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/sqlite/0001_init.sql"),
    include_str!("../../migrations/sqlite/0002_device_removal.sql"),
];

pub struct Sqlite {
    conn: Arc<Mutex<Connection>>,
}

impl Sqlite {
    pub fn open(path: &str) -> Result<Self, StorageError> {
        let mut conn = Connection::open(path)?;
        // WAL with synchronous=NORMAL: a committed transaction survives the process being killed
        // (only a power loss could cost the last ones); the acknowledgement follows the commit.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&mut conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    ) -> Result<T, StorageError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut conn)
        })
        .await
        .map_err(|_| StorageError::Worker)?
        .map_err(StorageError::from)
    }
}

fn migrate(conn: &mut Connection) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    for sql in MIGRATIONS.iter().skip(version as usize) {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)?;
    tx.commit()
}

#[async_trait]
impl Storage for Sqlite {
    async fn create_account(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        recovery_key: &[u8],
        now: i64,
    ) -> Result<bool, StorageError> {
        let (account, device, kind, recovery_key) = (
            account.to_owned(),
            device.to_vec(),
            kind.to_owned(),
            recovery_key.to_vec(),
        );
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let taken: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM devices WHERE key = ?1)
                     OR EXISTS(SELECT 1 FROM accounts WHERE recovery_key = ?2)",
                params![device, recovery_key],
                |row| row.get(0),
            )?;
            if taken {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO accounts (id, recovery_key, created_at) VALUES (?1, ?2, ?3)",
                params![account, recovery_key, now],
            )?;
            tx.execute(
                "INSERT INTO devices (key, account, added_at, kind) VALUES (?1, ?2, ?3, ?4)",
                params![device, account, now, kind],
            )?;
            tx.execute("DELETE FROM removed_devices WHERE key = ?1", [&device])?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn account_of_device(&self, device: &[u8]) -> Result<Option<String>, StorageError> {
        let device = device.to_vec();
        self.with(move |conn| {
            conn.query_row(
                "SELECT account FROM devices WHERE key = ?1",
                [device],
                |row| row.get(0),
            )
            .optional()
        })
        .await
    }

    async fn account_of_recovery_key(&self, key: &[u8]) -> Result<Option<String>, StorageError> {
        let key = key.to_vec();
        self.with(move |conn| {
            conn.query_row(
                "SELECT id FROM accounts WHERE recovery_key = ?1",
                [key],
                |row| row.get(0),
            )
            .optional()
        })
        .await
    }

    async fn add_device(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let (account, device, kind) = (account.to_owned(), device.to_vec(), kind.to_owned());
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let owner: Option<String> = tx
                .query_row(
                    "SELECT account FROM devices WHERE key = ?1",
                    [&device],
                    |row| row.get(0),
                )
                .optional()?;
            match owner {
                Some(owner) => Ok(owner == account),
                None => {
                    tx.execute(
                        "INSERT INTO devices (key, account, added_at, kind) VALUES (?1, ?2, ?3, ?4)",
                        params![device, account, now, kind],
                    )?;
                    tx.execute("DELETE FROM removed_devices WHERE key = ?1", [&device])?;
                    tx.commit()?;
                    Ok(true)
                }
            }
        })
        .await
    }

    async fn devices(&self, account: &str) -> Result<Vec<Device>, StorageError> {
        let account = account.to_owned();
        self.with(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT key, added_at, kind FROM devices WHERE account = ?1 ORDER BY added_at, key",
            )?;
            stmt.query_map([account], |row| {
                Ok(Device {
                    key: row.get(0)?,
                    added_at: row.get(1)?,
                    kind: row.get(2)?,
                })
            })?
            .collect()
        })
        .await
    }

    async fn remove_device(
        &self,
        account: &str,
        device: &[u8],
        now: i64,
    ) -> Result<bool, StorageError> {
        let (account, device) = (account.to_owned(), device.to_vec());
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let removed = tx.execute(
                "DELETE FROM devices WHERE key = ?1 AND account = ?2",
                params![device, account],
            )?;
            if removed == 0 {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO removed_devices (key, account, removed_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET account = ?2, removed_at = ?3",
                params![device, account, now],
            )?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn was_removed(&self, device: &[u8]) -> Result<bool, StorageError> {
        let device = device.to_vec();
        self.with(move |conn| {
            conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM removed_devices WHERE key = ?1)",
                [device],
                |row| row.get(0),
            )
        })
        .await
    }

    async fn used_bytes(&self, account: &str) -> Result<i64, StorageError> {
        let account = account.to_owned();
        self.with(move |conn| {
            conn.query_row(
                "SELECT used_bytes FROM accounts WHERE id = ?1",
                [account],
                |row| row.get(0),
            )
            .optional()
            .map(|used| used.unwrap_or(0))
        })
        .await
    }

    async fn first_use_of_nonce(
        &self,
        device: &[u8],
        nonce: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let (device, nonce) = (device.to_vec(), nonce.to_owned());
        self.with(move |conn| {
            let inserted = conn.execute(
                "INSERT INTO nonces (device, nonce, seen_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![device, nonce, now],
            )?;
            Ok(inserted == 1)
        })
        .await
    }

    async fn create_pairing(
        &self,
        account: &str,
        token_digest: &[u8],
        expires_at: i64,
    ) -> Result<(), StorageError> {
        let (account, token_digest) = (account.to_owned(), token_digest.to_vec());
        self.with(move |conn| {
            conn.execute(
                "INSERT INTO pairings (token_digest, account, expires_at) VALUES (?1, ?2, ?3)",
                params![token_digest, account, expires_at],
            )
            .map(drop)
        })
        .await
    }

    async fn take_pairing(
        &self,
        token_digest: &[u8],
        now: i64,
    ) -> Result<Option<String>, StorageError> {
        let token_digest = token_digest.to_vec();
        self.with(move |conn| {
            let taken: Option<(String, i64)> = conn
                .query_row(
                    "DELETE FROM pairings WHERE token_digest = ?1 RETURNING account, expires_at",
                    [token_digest],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            Ok(taken
                .filter(|(_, expires_at)| now < *expires_at)
                .map(|(account, _)| account))
        })
        .await
    }

    async fn list(
        &self,
        account: &str,
        plugin: &str,
    ) -> Result<Vec<(String, i64, Vec<u8>)>, StorageError> {
        let (account, plugin) = (account.to_owned(), plugin.to_owned());
        self.with(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT key, version, value FROM records
                 WHERE account = ?1 AND plugin = ?2 AND value IS NOT NULL ORDER BY key",
            )?;
            stmt.query_map(params![account, plugin], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect()
        })
        .await
    }

    async fn get(
        &self,
        account: &str,
        plugin: &str,
        key: &str,
    ) -> Result<Option<Record>, StorageError> {
        let (account, plugin, key) = (account.to_owned(), plugin.to_owned(), key.to_owned());
        self.with(move |conn| {
            conn.query_row(
                "SELECT version, value FROM records WHERE account = ?1 AND plugin = ?2 AND key = ?3",
                params![account, plugin, key],
                |row| Ok(Record { version: row.get(0)?, value: row.get(1)? }),
            )
            .optional()
        })
        .await
    }

    async fn write(&self, write: &Write<'_>) -> Result<Written, StorageError> {
        let account = write.account.to_owned();
        let plugin = write.plugin.to_owned();
        let key = write.key.to_owned();
        let value = write.value.map(<[u8]>::to_vec);
        let request_id = write.request_id.map(str::to_owned);
        let (version, now) = (write.version, write.now);
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if let Some(request_id) = &request_id {
                let done: Option<i64> = tx
                    .query_row(
                        "SELECT version FROM requests WHERE account = ?1 AND request_id = ?2",
                        params![account, request_id],
                        |row| row.get(0),
                    )
                    .optional()?;
                if let Some(version) = done {
                    return Ok(Written::Stored { version });
                }
            }
            let used: i64 =
                tx.query_row("SELECT used_bytes FROM accounts WHERE id = ?1", [&account], |row| row.get(0))?;
            let current: Option<(i64, Option<i64>)> = tx
                .query_row(
                    "SELECT version, length(value) FROM records WHERE account = ?1 AND plugin = ?2 AND key = ?3",
                    params![account, plugin, key],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let (current, old_len) = current.unwrap_or((0, None));
            if version != current + 1 {
                return Ok(Written::Conflict { current });
            }
            let delta = value.as_ref().map_or(0, Vec::len) as i64 - old_len.unwrap_or(0);
            if delta > 0 && used + delta > QUOTA_BYTES {
                return Ok(Written::QuotaExceeded { used });
            }
            tx.execute(
                "INSERT INTO records (account, plugin, key, version, value) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (account, plugin, key) DO UPDATE SET version = excluded.version, value = excluded.value",
                params![account, plugin, key, version, value],
            )?;
            tx.execute("UPDATE accounts SET used_bytes = used_bytes + ?1 WHERE id = ?2", params![delta, account])?;
            if let Some(request_id) = &request_id {
                tx.execute(
                    "INSERT INTO requests (account, request_id, version, seen_at) VALUES (?1, ?2, ?3, ?4)",
                    params![account, request_id, version, now],
                )?;
            }
            tx.commit()?;
            Ok(Written::Stored { version })
        })
        .await
    }

    async fn prune(&self, before: i64, now: i64) -> Result<(), StorageError> {
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM nonces WHERE seen_at < ?1", [before])?;
            tx.execute("DELETE FROM requests WHERE seen_at < ?1", [before])?;
            tx.execute("DELETE FROM pairings WHERE expires_at <= ?1", [now])?;
            tx.commit()
        })
        .await
    }
}
