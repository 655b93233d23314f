-- PKU harness Cloud, SQLite: accounts are device keys (DESIGN.md §12); values are opaque
-- ciphertext and plugin and key names arrive already HMAC'd by the client.
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    recovery_key BLOB NOT NULL UNIQUE,
    used_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE TABLE devices (
    key BLOB PRIMARY KEY,
    account TEXT NOT NULL REFERENCES accounts(id),
    added_at INTEGER NOT NULL
);
CREATE INDEX devices_account ON devices(account);
CREATE TABLE nonces (
    device BLOB NOT NULL,
    nonce TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (device, nonce)
);
CREATE INDEX nonces_seen ON nonces(seen_at);
CREATE TABLE pairings (
    token_digest BLOB PRIMARY KEY,
    account TEXT NOT NULL REFERENCES accounts(id),
    expires_at INTEGER NOT NULL
);
CREATE TABLE records (
    account TEXT NOT NULL REFERENCES accounts(id),
    plugin TEXT NOT NULL,
    key TEXT NOT NULL,
    version INTEGER NOT NULL,
    value BLOB,
    PRIMARY KEY (account, plugin, key)
);
CREATE TABLE requests (
    account TEXT NOT NULL,
    request_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (account, request_id)
);
CREATE INDEX requests_seen ON requests(seen_at);
