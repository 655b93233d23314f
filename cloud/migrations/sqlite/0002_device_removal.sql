-- Each device's kind as the device said it at setup or join ("android", "ios", "terminal" or
-- empty): the 云端 screen's rows name it. No name the student typed, no model, no secret.
ALTER TABLE devices ADD COLUMN kind TEXT NOT NULL DEFAULT '';
-- Devices another device of the account removed: a removed device's next request is told so
-- (not just "no account"); joining again with the recovery code takes the key off this list.
CREATE TABLE removed_devices (
    key BLOB PRIMARY KEY,
    account TEXT NOT NULL,
    removed_at INTEGER NOT NULL
);
