//! The cloud server on 127.0.0.1 over each backend (DESIGN.md §12): signed requests, replays and
//! stale timestamps refused, versions compared and set, quota, sizes, rate, idempotent retries,
//! pairing and recovery joins, /healthz and /metrics.

mod common;

use common::{Device, Server, databases};
use harness_cloud::server::{Limits, now};
use harness_cloud::storage::{MAX_VALUE_BYTES, QUOTA_BYTES};
use serde_json::{Value, json};

async fn each_backend<F, Fut>(limits: Limits, test: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, limits).await;
        test(server.base.clone()).await;
        server.stop().await;
    }
}

// DESIGN §12: records per account, plugin and key, versioned; a write names the version it makes.
#[tokio::test]
async fn a_record_is_written_read_listed_and_deleted_by_version() {
    each_backend(Limits::default(), |base| async move {
        let device = Device::new(&base);
        device.create_account().await;
        assert_eq!(
            device.put("p1", "k1", 1, Some(b"sealed-1")).await.body,
            json!({ "version": 1 })
        );
        assert_eq!(
            device.put("p1", "k2", 1, Some(b"sealed-2")).await.body,
            json!({ "version": 1 })
        );
        assert_eq!(
            device.put("p1", "k1", 2, Some(b"sealed-3")).await.body,
            json!({ "version": 2 })
        );
        let read = device.send("GET", "/v1/records/p1/k1", Value::Null).await;
        assert_eq!(
            read.body,
            json!({ "version": 2, "value": common::b64(b"sealed-3") })
        );
        let listed = device.send("GET", "/v1/records/p1", Value::Null).await;
        assert_eq!(
            listed.body,
            json!({ "records": [
                { "key": "k1", "version": 2, "value": common::b64(b"sealed-3") },
                { "key": "k2", "version": 1, "value": common::b64(b"sealed-2") },
            ] })
        );
        // A delete is a write of no value: the version stays, so no old one can come back.
        assert_eq!(
            device.put("p1", "k1", 3, None).await.body,
            json!({ "version": 3 })
        );
        let read = device.send("GET", "/v1/records/p1/k1", Value::Null).await;
        assert_eq!(read.body, json!({ "version": 3, "value": null }));
        let listed = device.send("GET", "/v1/records/p1", Value::Null).await;
        assert_eq!(
            listed.body,
            json!({ "records": [{ "key": "k2", "version": 1, "value": common::b64(b"sealed-2") }] })
        );
        let missing = device.send("GET", "/v1/records/p1/none", Value::Null).await;
        assert_eq!(
            (missing.status, missing.body["code"].clone()),
            (404, json!("not_found"))
        );
        // Another account sees none of it.
        let other = Device::new(&base);
        other.create_account().await;
        let listed = other.send("GET", "/v1/records/p1", Value::Null).await;
        assert_eq!(listed.body, json!({ "records": [] }));
    })
    .await;
}

// DESIGN §12 / issue: a set with ifVersion that lost a race answers conflict, with the version.
#[tokio::test]
async fn a_write_from_a_stale_version_is_a_conflict() {
    each_backend(Limits::default(), |base| async move {
        let device = Device::new(&base);
        device.create_account().await;
        assert_eq!(device.put("p", "k", 1, Some(b"a")).await.status, 200);
        let lost = device.put("p", "k", 1, Some(b"b")).await;
        assert_eq!(
            (
                lost.status,
                lost.body["code"].clone(),
                lost.body["version"].clone()
            ),
            (409, json!("conflict"), json!(1))
        );
        let skipped = device.put("p", "k", 5, Some(b"b")).await;
        assert_eq!(skipped.status, 409);
        let read = device.send("GET", "/v1/records/p/k", Value::Null).await;
        assert_eq!(
            read.body,
            json!({ "version": 1, "value": common::b64(b"a") })
        );
    })
    .await;
}

// Standards: a client's retry (the same request id) does not apply twice.
#[tokio::test]
async fn a_retried_request_id_applies_once() {
    each_backend(Limits::default(), |base| async move {
        let device = Device::new(&base);
        device.create_account().await;
        let body =
            serde_json::to_vec(&json!({ "version": 1, "value": common::b64(b"once") })).unwrap();
        for _ in 0..3 {
            let mut headers = device.headers("PUT", "/v1/records/p/k", &body, now());
            headers.push(("x-harness-request-id", "req-1".into()));
            let answer = device
                .send_with("PUT", "/v1/records/p/k", &body, &headers)
                .await;
            assert_eq!(
                (answer.status, answer.body.clone()),
                (200, json!({ "version": 1 }))
            );
        }
        let account = device.send("GET", "/v1/account", Value::Null).await;
        assert_eq!(account.body["used_bytes"], json!(4));
        // A different request id is a new write, compared against version 1.
        let mut headers = device.headers("PUT", "/v1/records/p/k", &body, now());
        headers.push(("x-harness-request-id", "req-2".into()));
        assert_eq!(
            device
                .send_with("PUT", "/v1/records/p/k", &body, &headers)
                .await
                .status,
            409
        );
    })
    .await;
}

// DESIGN §12: every request signed; replays and stale timestamps refused.
#[tokio::test]
async fn replayed_stale_unsigned_and_forged_requests_are_refused() {
    each_backend(Limits::default(), |base| async move {
        let device = Device::new(&base);
        device.create_account().await;
        let body =
            serde_json::to_vec(&json!({ "version": 1, "value": common::b64(b"x") })).unwrap();
        let headers = device.headers("PUT", "/v1/records/p/k", &body, now());
        assert_eq!(
            device
                .send_with("PUT", "/v1/records/p/k", &body, &headers)
                .await
                .status,
            200
        );
        let replay = device
            .send_with("PUT", "/v1/records/p/k", &body, &headers)
            .await;
        assert_eq!(
            (replay.status, replay.body["code"].clone()),
            (401, json!("replayed"))
        );

        let stale = device.headers("GET", "/v1/account", b"", now() - 301);
        let answer = device.send_with("GET", "/v1/account", b"", &stale).await;
        assert_eq!(
            (answer.status, answer.body["code"].clone()),
            (401, json!("stale"))
        );

        let answer = device.send_with("GET", "/v1/account", b"", &[]).await;
        assert_eq!(
            (answer.status, answer.body["code"].clone()),
            (401, json!("unauthorized"))
        );

        // Signed for one path, sent to another; signed for one body, sent with another.
        let headers = device.headers("GET", "/v1/records/p/k", b"", now());
        assert_eq!(
            device
                .send_with("GET", "/v1/records/p/j", b"", &headers)
                .await
                .status,
            401
        );
        let headers = device.headers("PUT", "/v1/records/p/k", &body, now());
        let other =
            serde_json::to_vec(&json!({ "version": 2, "value": common::b64(b"y") })).unwrap();
        assert_eq!(
            device
                .send_with("PUT", "/v1/records/p/k", &other, &headers)
                .await
                .status,
            401
        );

        // A device of no account reaches nothing.
        let stranger = Device::new(&base);
        let answer = stranger.send("GET", "/v1/records/p", Value::Null).await;
        assert_eq!(
            (answer.status, answer.body["code"].clone()),
            (403, json!("no_account"))
        );
    })
    .await;
}

// Issue 39: a value is at most 64 KiB; an account holds at most 10 MiB.
#[tokio::test]
async fn a_value_over_64_kib_and_a_write_over_the_quota_are_refused() {
    each_backend(
        Limits {
            per_second: 1000.0,
            burst: 1000.0,
        },
        |base| async move {
            let device = Device::new(&base);
            device.create_account().await;
            let too_large = device
                .put("p", "big", 1, Some(&vec![7u8; MAX_VALUE_BYTES + 1]))
                .await;
            assert_eq!(
                (too_large.status, too_large.body["code"].clone()),
                (413, json!("too_large"))
            );
            let full = vec![7u8; MAX_VALUE_BYTES];
            let fits = (QUOTA_BYTES as usize) / MAX_VALUE_BYTES;
            for i in 0..fits {
                assert_eq!(
                    device
                        .put("p", &format!("k{i}"), 1, Some(&full))
                        .await
                        .status,
                    200,
                    "record {i}"
                );
            }
            let over = device.put("p", "one-more", 1, Some(b"x")).await;
            assert_eq!(
                (over.status, over.body["code"].clone()),
                (507, json!("quota_exceeded"))
            );
            // Shrinking a record frees room; deleting one frees all of it.
            assert_eq!(device.put("p", "k0", 2, Some(b"small")).await.status, 200);
            assert_eq!(device.put("p", "one-more", 1, Some(b"x")).await.status, 200);
            assert_eq!(device.put("p", "k1", 2, None).await.status, 200);
            let account = device.send("GET", "/v1/account", Value::Null).await;
            assert_eq!(
                account.body["used_bytes"],
                json!(QUOTA_BYTES - 2 * MAX_VALUE_BYTES as i64 + 6)
            );
            // A body past the limit is refused before it is read whole.
            let huge = vec![b'a'; 200 * 1024];
            let headers = device.headers("PUT", "/v1/records/p/k", &huge, now());
            assert_eq!(
                device
                    .send_with("PUT", "/v1/records/p/k", &huge, &headers)
                    .await
                    .status,
                413
            );
        },
    )
    .await;
}

// Issue 39: rate limits per account.
#[tokio::test]
async fn an_account_past_its_burst_is_told_to_slow_down() {
    each_backend(
        Limits {
            per_second: 0.001,
            burst: 5.0,
        },
        |base| async move {
            let device = Device::new(&base);
            device.create_account().await;
            for _ in 0..5 {
                assert_eq!(
                    device
                        .send("GET", "/v1/records/p", Value::Null)
                        .await
                        .status,
                    200
                );
            }
            let answer = device.send("GET", "/v1/records/p", Value::Null).await;
            assert_eq!(
                (answer.status, answer.body["code"].clone()),
                (429, json!("rate_limited"))
            );
            // Another account has its own bucket.
            let other = Device::new(&base);
            other.create_account().await;
            assert_eq!(
                other.send("GET", "/v1/records/p", Value::Null).await.status,
                200
            );
        },
    )
    .await;
}

// Issue 39: another device joins by a one-time pairing token or by the recovery key.
#[tokio::test]
async fn a_device_joins_once_by_pairing_token_and_by_recovery_key() {
    each_backend(Limits::default(), |base| async move {
        let first = Device::new(&base);
        let (account, recovery) = first.create_account().await;
        assert_eq!(first.put("p", "k", 1, Some(b"v")).await.status, 200);

        let pairing = first.send("POST", "/v1/pairings", Value::Null).await;
        let token = pairing.body["token"].as_str().unwrap().to_owned();
        assert_eq!(pairing.body["expires_at"].as_i64().unwrap() - now(), 600);
        let second = Device::new(&base);
        let joined = second
            .send("POST", "/v1/join", json!({ "pairing_token": token }))
            .await;
        assert_eq!(joined.body, json!({ "account": account }));
        let read = second.send("GET", "/v1/records/p/k", Value::Null).await;
        assert_eq!(read.body["version"], json!(1));
        // The token is used: a third device cannot use it again.
        let third = Device::new(&base);
        let again = third
            .send("POST", "/v1/join", json!({ "pairing_token": token }))
            .await;
        assert_eq!(
            (again.status, again.body["code"].clone()),
            (403, json!("bad_join"))
        );

        let joined = third.send_with_recovery("/v1/join", &recovery).await;
        assert_eq!(joined.body, json!({ "account": account }));
        let devices = first.send("GET", "/v1/account", Value::Null).await;
        assert_eq!(devices.body["devices"].as_array().unwrap().len(), 3);

        // A key that is no account's recovery key joins nothing.
        let fourth = Device::new(&base);
        let wrong = ed25519_dalek::SigningKey::from_bytes(&common::random());
        let refused = fourth.send_with_recovery("/v1/join", &wrong).await;
        assert_eq!(refused.status, 403);
        // A recovery key's proof made for another device does not let this one in.
        let proof = second.recovery_proof(&recovery, now());
        let stolen = fourth.send("POST", "/v1/join", proof).await;
        assert_eq!(stolen.status, 403);
        // A device already in an account cannot make another.
        let answer = first.send_with_recovery("/v1/accounts", &wrong).await;
        assert_eq!(
            (answer.status, answer.body["code"].clone()),
            (409, json!("already_registered"))
        );
    })
    .await;
}

// DESIGN §12: the account lists its devices (key, kind, when added); a device removes another,
// whose next signed request is refused in words (403 device_removed), until it joins again with
// the recovery code; a device of another account cannot be removed.
#[tokio::test]
async fn a_removed_devices_next_request_is_refused_in_words_until_it_joins_again() {
    each_backend(Limits::default(), |base| async move {
        let first = Device::new(&base);
        let (account, recovery) = first.create_account().await;
        let second = Device::new(&base);
        let now = now();
        let mut proof = second.recovery_proof(&recovery, now);
        proof["device_kind"] = json!("android");
        let body = serde_json::to_vec(&proof).unwrap();
        let headers = second.headers("POST", "/v1/join", &body, now);
        let joined = second.send_with("POST", "/v1/join", &body, &headers).await;
        assert_eq!(joined.body, json!({ "account": account }));
        assert_eq!(second.put("p", "k", 1, Some(b"v")).await.status, 200);

        let listed = first.send("GET", "/v1/account", Value::Null).await;
        // Both were added in the same second: listed by when, then by key.
        let mut devices: Vec<(String, String)> = listed.body["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["key"].as_str().unwrap().into(),
                    d["kind"].as_str().unwrap().into(),
                )
            })
            .collect();
        devices.sort();
        let mut expected = vec![
            (first.public(), String::new()),
            (second.public(), "android".to_owned()),
        ];
        expected.sort();
        assert_eq!(devices, expected);

        // Another account's device cannot remove this account's device.
        let stranger = Device::new(&base);
        stranger.create_account().await;
        let path = format!("/v1/devices/{}", second.public());
        let refused = stranger.send("DELETE", &path, Value::Null).await;
        assert_eq!(
            (refused.status, refused.body["code"].clone()),
            (404, json!("no_such_device"))
        );

        let removed = first.send("DELETE", &path, Value::Null).await;
        assert_eq!(
            (removed.status, removed.body.clone()),
            (200, json!({ "removed": second.public() }))
        );
        for (method, path) in [("GET", "/v1/records/p/k"), ("GET", "/v1/account")] {
            let answer = second.send(method, path, Value::Null).await;
            assert_eq!(
                (answer.status, answer.body.clone()),
                (
                    403,
                    json!({ "code": "device_removed", "message": "this device was removed from its account by another of the account's devices: join again with the recovery code" })
                ),
                "{path}"
            );
        }
        let listed = first.send("GET", "/v1/account", Value::Null).await;
        assert_eq!(listed.body["devices"].as_array().unwrap().len(), 1);
        // Removed twice: it is no device of the account any more.
        let again = first.send("DELETE", &path, Value::Null).await;
        assert_eq!(again.status, 404);

        // The recovery code lets it join again, and it reads the account's records.
        let rejoined = second.send_with_recovery("/v1/join", &recovery).await;
        assert_eq!(rejoined.body, json!({ "account": account }));
        let read = second.send("GET", "/v1/records/p/k", Value::Null).await;
        assert_eq!(read.body["version"], json!(1));
    })
    .await;
}

// Issue 39: /healthz, and Prometheus /metrics counting requests by route and status.
#[tokio::test]
async fn healthz_answers_and_metrics_count_requests_by_route_and_status() {
    each_backend(Limits::default(), |base| async move {
        let http = common::http();
        let health = http.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!((health.status().as_u16(), health.text().await.unwrap()), (200, "ok\n".to_owned()));
        let device = Device::new(&base);
        device.create_account().await;
        device.send("GET", "/v1/records/p/none", Value::Null).await;
        let metrics = http.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        assert!(metrics.contains("harness_cloud_requests_total{route=\"/v1/accounts\",status=\"201\"} 1\n"), "{metrics}");
        assert!(metrics.contains("harness_cloud_requests_total{route=\"/v1/records/{plugin}/{key}\",status=\"404\"} 1\n"), "{metrics}");
        assert!(metrics.contains("harness_cloud_request_duration_seconds_count{route=\"/healthz\"} 1\n"), "{metrics}");
    })
    .await;
}
