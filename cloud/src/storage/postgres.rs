//! The production backend: PostgreSQL through tokio-postgres, with a fixed set of connections
//! (no pool crate: a connection is taken by trying each in turn, then waiting on one). The
//! server keeps nothing of its own, so replicas behind a load balancer share one database.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::{Client, NoTls};

use super::{Device, QUOTA_BYTES, Record, Storage, StorageError, Write, Written};

/// The schema, one entry per version, applied in order; `harness_schema` counts them.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/postgres/0001_init.sql"),
    include_str!("../../migrations/postgres/0002_device_removal.sql"),
];

/// Any number: the key of the advisory lock that keeps two replicas from migrating at once.
const MIGRATION_LOCK: i64 = 0x0048_4152_4e45_5353;

pub struct Postgres {
    url: String,
    conns: Vec<Mutex<Client>>,
    next: AtomicUsize,
}

async fn connect(url: &str) -> Result<Client, StorageError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

impl Postgres {
    pub async fn connect(url: &str, size: usize) -> Result<Self, StorageError> {
        let mut conns = Vec::with_capacity(size);
        for _ in 0..size.max(1) {
            conns.push(Mutex::new(connect(url).await?));
        }
        let me = Self {
            url: url.to_owned(),
            conns,
            next: AtomicUsize::new(0),
        };
        me.migrate().await?;
        Ok(me)
    }

    /// A connection of the set, reconnected if the database closed it (a restart).
    async fn client(&self) -> Result<MutexGuard<'_, Client>, StorageError> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.conns.len();
        let mut guard = None;
        for i in 0..n {
            if let Ok(g) = self.conns[(start + i) % n].try_lock() {
                guard = Some(g);
                break;
            }
        }
        let mut guard = match guard {
            Some(g) => g,
            None => self.conns[start % n].lock().await,
        };
        if guard.is_closed() {
            *guard = connect(&self.url).await?;
        }
        Ok(guard)
    }

    async fn migrate(&self) -> Result<(), StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS harness_schema (version BIGINT NOT NULL)")
            .await?;
        let version: i64 = match tx
            .query_opt("SELECT version FROM harness_schema", &[])
            .await?
        {
            Some(row) => row.get(0),
            None => {
                tx.execute("INSERT INTO harness_schema (version) VALUES (0)", &[])
                    .await?;
                0
            }
        };
        for sql in MIGRATIONS.iter().skip(version as usize) {
            tx.batch_execute(sql).await?;
        }
        tx.execute(
            "UPDATE harness_schema SET version = $1",
            &[&(MIGRATIONS.len() as i64)],
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

#[async_trait]
impl Storage for Postgres {
    async fn create_account(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        recovery_key: &[u8],
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let inserted = tx
            .execute(
                "INSERT INTO accounts (id, recovery_key, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&account, &recovery_key, &now],
            )
            .await?;
        if inserted == 0 {
            return Ok(false);
        }
        let inserted = tx
            .execute(
                "INSERT INTO devices (key, account, added_at, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&device, &account, &now, &kind],
            )
            .await?;
        if inserted == 0 {
            return Ok(false);
        }
        tx.execute("DELETE FROM removed_devices WHERE key = $1", &[&device])
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn account_of_device(&self, device: &[u8]) -> Result<Option<String>, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT account FROM devices WHERE key = $1", &[&device])
            .await?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn account_of_recovery_key(&self, key: &[u8]) -> Result<Option<String>, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT id FROM accounts WHERE recovery_key = $1", &[&key])
            .await?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn add_device(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute(
            "INSERT INTO devices (key, account, added_at, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            &[&device, &account, &now, &kind],
        )
        .await?;
        let owner: String = tx
            .query_one("SELECT account FROM devices WHERE key = $1", &[&device])
            .await?
            .get(0);
        if owner != account {
            return Ok(false);
        }
        tx.execute("DELETE FROM removed_devices WHERE key = $1", &[&device])
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn devices(&self, account: &str) -> Result<Vec<Device>, StorageError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT key, added_at, kind FROM devices WHERE account = $1 ORDER BY added_at, key",
                &[&account],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| Device {
                key: row.get(0),
                added_at: row.get(1),
                kind: row.get(2),
            })
            .collect())
    }

    async fn remove_device(
        &self,
        account: &str,
        device: &[u8],
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let removed = tx
            .execute(
                "DELETE FROM devices WHERE key = $1 AND account = $2",
                &[&device, &account],
            )
            .await?;
        if removed == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO removed_devices (key, account, removed_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO UPDATE SET account = $2, removed_at = $3",
            &[&device, &account, &now],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn was_removed(&self, device: &[u8]) -> Result<bool, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT EXISTS(SELECT 1 FROM removed_devices WHERE key = $1)",
                &[&device],
            )
            .await?;
        Ok(row.get(0))
    }

    async fn used_bytes(&self, account: &str) -> Result<i64, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT used_bytes FROM accounts WHERE id = $1", &[&account])
            .await?;
        Ok(row.map_or(0, |row| row.get(0)))
    }

    async fn first_use_of_nonce(
        &self,
        device: &[u8],
        nonce: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let client = self.client().await?;
        let inserted = client
            .execute(
                "INSERT INTO nonces (device, nonce, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&device, &nonce, &now],
            )
            .await?;
        Ok(inserted == 1)
    }

    async fn create_pairing(
        &self,
        account: &str,
        token_digest: &[u8],
        expires_at: i64,
    ) -> Result<(), StorageError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO pairings (token_digest, account, expires_at) VALUES ($1, $2, $3)",
                &[&token_digest, &account, &expires_at],
            )
            .await?;
        Ok(())
    }

    async fn take_pairing(
        &self,
        token_digest: &[u8],
        now: i64,
    ) -> Result<Option<String>, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "DELETE FROM pairings WHERE token_digest = $1 RETURNING account, expires_at",
                &[&token_digest],
            )
            .await?;
        Ok(row
            .filter(|row| now < row.get::<_, i64>(1))
            .map(|row| row.get(0)))
    }

    async fn list(
        &self,
        account: &str,
        plugin: &str,
    ) -> Result<Vec<(String, i64, Vec<u8>)>, StorageError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT key, version, value FROM records
                 WHERE account = $1 AND plugin = $2 AND value IS NOT NULL ORDER BY key",
                &[&account, &plugin],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect())
    }

    async fn get(
        &self,
        account: &str,
        plugin: &str,
        key: &str,
    ) -> Result<Option<Record>, StorageError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT version, value FROM records WHERE account = $1 AND plugin = $2 AND key = $3",
                &[&account, &plugin, &key],
            )
            .await?;
        Ok(row.map(|row| Record {
            version: row.get(0),
            value: row.get(1),
        }))
    }

    async fn write(&self, write: &Write<'_>) -> Result<Written, StorageError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The account's row first: writes to one account wait on each other here.
        let used: i64 = tx
            .query_one(
                "SELECT used_bytes FROM accounts WHERE id = $1 FOR UPDATE",
                &[&write.account],
            )
            .await?
            .get(0);
        if let Some(request_id) = write.request_id {
            let done = tx
                .query_opt(
                    "SELECT version FROM requests WHERE account = $1 AND request_id = $2",
                    &[&write.account, &request_id],
                )
                .await?;
            if let Some(row) = done {
                return Ok(Written::Stored {
                    version: row.get(0),
                });
            }
        }
        let current = tx
            .query_opt(
                "SELECT version, octet_length(value) FROM records WHERE account = $1 AND plugin = $2 AND key = $3",
                &[&write.account, &write.plugin, &write.key],
            )
            .await?;
        let (current, old_len) = current.map_or((0, None), |row| {
            (row.get::<_, i64>(0), row.get::<_, Option<i32>>(1))
        });
        if write.version != current + 1 {
            return Ok(Written::Conflict { current });
        }
        let delta = write.value.map_or(0, <[u8]>::len) as i64 - i64::from(old_len.unwrap_or(0));
        if delta > 0 && used + delta > QUOTA_BYTES {
            return Ok(Written::QuotaExceeded { used });
        }
        tx.execute(
            "INSERT INTO records (account, plugin, key, version, value) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (account, plugin, key) DO UPDATE SET version = excluded.version, value = excluded.value",
            &[&write.account, &write.plugin, &write.key, &write.version, &write.value],
        )
        .await?;
        tx.execute(
            "UPDATE accounts SET used_bytes = used_bytes + $1 WHERE id = $2",
            &[&delta, &write.account],
        )
        .await?;
        if let Some(request_id) = write.request_id {
            tx.execute(
                "INSERT INTO requests (account, request_id, version, seen_at) VALUES ($1, $2, $3, $4)",
                &[&write.account, &request_id, &write.version, &write.now],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(Written::Stored {
            version: write.version,
        })
    }

    async fn prune(&self, before: i64, now: i64) -> Result<(), StorageError> {
        let client = self.client().await?;
        client
            .execute("DELETE FROM nonces WHERE seen_at < $1", &[&before])
            .await?;
        client
            .execute("DELETE FROM requests WHERE seen_at < $1", &[&before])
            .await?;
        client
            .execute("DELETE FROM pairings WHERE expires_at <= $1", &[&now])
            .await?;
        Ok(())
    }
}
