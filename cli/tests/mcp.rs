//! `harness mcp tools URL` and `harness mcp add URL --name NAME` against the real MCP test
//! server (server-everything in Streamable HTTP mode on a loopback port, started by each test),
//! and the remote plugin as `harness tools` lists it afterwards.

#[path = "../../core/tests/common/everything.rs"]
mod everything;
#[path = "../../core/tests/common/mcp_server.rs"]
mod mcp_server;
#[path = "../../core/tests/common/model_server.rs"]
mod model_server;

use std::process::{Command, Output};

use everything::Everything;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .env_remove("HARNESS_DATA_DIR")
        .env_remove("HARNESS_MCP_TOKEN")
        .output()
        .unwrap()
}

fn harness(args: &[&str]) -> (String, Output) {
    let output = run(args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (stdout, output)
}

#[test]
fn mcp_tools_lists_a_servers_tools_with_their_effects_and_installs_nothing() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let url = server.url();
    let (stdout, _) = harness(&["mcp", "--data-dir", data, "tools", &url]);
    let lines: Vec<&str> = stdout.lines().collect();
    // The count is the server's (it registers some tools just after the session starts).
    assert!(lines[0].ends_with(&format!(" tools at {url}")), "{stdout}");
    for line in [
        "  echo                             read   Echoes back the input string",
        "  get-sum                          read   Returns the sum of two numbers",
        "  toggle-simulated-logging         write  Toggles simulated, random-leveled logging on or off.",
    ] {
        assert!(lines.contains(&line), "{line:?} missing from:\n{stdout}");
    }
    let (listed, _) = harness(&["tools", "--data-dir", data]);
    assert!(!listed.contains("mcp-everything"), "{listed}");
}

#[test]
fn mcp_add_installs_the_server_as_a_remote_plugin_that_tools_lists() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (stdout, _) = harness(&[
        "mcp",
        "--data-dir",
        data,
        "add",
        &server.url(),
        "--name",
        "everything",
    ]);
    assert!(
        stdout.starts_with("Installed mcp-everything with ") && stdout.ends_with(" tools.\n"),
        "{stdout}"
    );
    let (listed, _) = harness(&["tools", "--data-dir", data]);
    let lines: Vec<&str> = listed.lines().collect();
    for line in [
        "  mcp-everything remote · enabled",
        "    mcp-everything.echo          read   Echo Tool [untrusted]",
        "    mcp-everything.get-sum       read   Get Sum Tool [untrusted]",
    ] {
        assert!(lines.contains(&line), "{line:?} missing from:\n{listed}");
    }
}

/// What `harness mcp tools URL` prints when it fails.
fn failing(args: &[&str]) -> String {
    let output = run(args);
    assert!(!output.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An address nothing answers at: a socket bound there that never listens holds the port, so no
/// other test's listener is given it (a dropped listener's port can be handed out again at
/// once), and a connection to it is refused.
fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap();
    (socket, address)
}

#[test]
fn mcp_tools_errors_are_words_for_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (_held, address) = refusing_address();
    let url = format!("http://{address}/mcp");
    let stderr = failing(&["mcp", "--data-dir", data, "tools", &url]);
    assert!(
        stderr.starts_with(&format!("harness: could not connect to {url}: ")),
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("; check the server's URL and that it is running"),
        "{stderr}"
    );
    for rust in ["rmcp::", "harness_core::", "Transport [", "plugin link"] {
        assert!(!stderr.contains(rust), "{rust:?} in: {stderr}");
    }
    let stderr = failing(&["mcp", "--data-dir", data, "tools", "http://example.com/mcp"]);
    assert_eq!(
        stderr,
        "harness: http://example.com/mcp: a remote server is reached over https; write the URL \
         with https://\n"
    );
}

#[test]
fn mcp_tools_ends_its_session_on_the_server_before_it_exits() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::streamable(vec![mcp_server::tool(
        "echo", true,
    )]));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (stdout, _) = harness(&["mcp", "--data-dir", data, "tools", &server.url()]);
    assert!(stdout.starts_with("1 tools at "), "{stdout}");
    assert_eq!(server.deleted_sessions(), ["session-0"]);
}

#[test]
fn mcp_add_signs_in_to_a_server_through_the_browser_and_keeps_the_sign_in_in_the_keyring() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::signing_in(
        vec![mcp_server::tool("echo", true)],
        mcp_server::OAuthConfig::default(),
    ));
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    // The browser opens the page as a person's does: it follows the authorization server's
    // redirect back to the command's loopback port (the test server signs the person in at
    // once). It notes the page it was given.
    let opened = dir.path().join("opened");
    let browser = dir.path().join("browser");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}'\nexec python3 -c 'import sys, urllib.request; \
             urllib.request.build_opener(urllib.request.ProxyHandler({{}})).open(sys.argv[1]).read()' \"$1\"\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["mcp", "add", &url, "--name", "notes", "--data-dir", data])
        .env("BROWSER", &browser)
        .env_remove("HARNESS_MCP_TOKEN")
        .env_remove("HARNESS_DATA_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(&opened).unwrap();
    let base = url.trim_end_matches("/mcp");
    assert!(page.starts_with(&format!("{base}/authorize?")), "{page}");
    assert_eq!(
        stdout,
        format!(
            "{url} asks you to sign in on 127.0.0.1 (asking for: tools:read).\n\
             Opening this page to sign in:\n  {page}\n\
             Installed mcp-notes with 1 tools.\n"
        )
    );
    // The code came back to the command's loopback port, the redirect URI it registered.
    let registered = server.registrations()[0]["redirect_uris"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        registered.starts_with("http://127.0.0.1:") && registered.ends_with("/callback"),
        "{registered}"
    );

    // The installed plugin's call carries the sign-in's token, which the keyring keeps.
    let (called, _) = harness(&[
        "call",
        "--data-dir",
        data,
        "mcp-notes.echo",
        r#"{"message": "hi"}"#,
    ]);
    assert!(called.contains("echo: hi"), "{called}");
    let bearer = format!("Bearer {}", server.access_tokens()[0]);
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.body["method"] == "tools/call"
                && r.header("authorization") == Some(bearer.as_str()))
    );
    let (kept, _) = harness(&["secret", "--data-dir", data, "check", "mcp.notes.oauth"]);
    assert_eq!(kept, "mcp.notes.oauth: stored\n");

    harness(&["plugins", "--data-dir", data, "remove", "mcp-notes"]);
    let (kept, _) = harness(&["secret", "--data-dir", data, "check", "mcp.notes.oauth"]);
    assert_eq!(kept, "mcp.notes.oauth: not stored\n");
}

#[test]
fn a_servers_question_during_a_call_is_answered_by_the_flag_or_on_the_terminal() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    harness(&[
        "mcp",
        "add",
        &server.url(),
        "--name",
        "everything",
        "--data-dir",
        data,
    ]);

    let flagged = |tool: &str, input: &str, flag: &str| {
        harness(&[
            "call",
            "--data-dir",
            data,
            tool,
            input,
            "--elicitation",
            flag,
        ])
        .0
    };
    let form = "mcp-everything.trigger-elicitation-request";

    // The form: its fields with the server's defaults; --elicitation decline answers it.
    let said = flagged(form, "{}", "decline");
    assert!(
        said.starts_with(
            "    ┌ everything (mcp-everything) asks: Please provide inputs for the following fields:\n"
        ),
        "{said}"
    );
    assert!(
        said.contains("    │ String with default [It was a dark and stormy night.] — Favorite first line of a story\n"),
        "{said}"
    );
    assert!(
        said.contains("    │ String (required) — Your full, legal name\n"),
        "{said}"
    );
    assert!(said.contains("    └ declined (--elicitation)\n"), "{said}");
    assert!(
        said.contains("❌ User declined to provide the requested information."),
        "{said}"
    );
    // accept takes the defaults, which leave the required name empty: declined, and said why.
    let said = flagged(form, "{}", "accept");
    assert!(
        said.contains(
            "    └ the defaults do not fill the form (the answer does not fit the form: \"name\" \
             is a required property): declined (--elicitation)\n"
        ),
        "{said}"
    );

    // A page: shown with its host; accepted by the flag, declined on the terminal.
    let input = r#"{"url": "https://pay.example.com/confirm", "message": "Confirm the order"}"#;
    let said = flagged("mcp-everything.trigger-url-elicitation", input, "accept");
    assert!(
        said.starts_with(
            "    ┌ everything (mcp-everything) asks: Confirm the order\n    │ it asks you to open \
             a page on pay.example.com:\n    │   https://pay.example.com/confirm\n    └ taken as \
             seen (--elicitation)\n"
        ),
        "{said}"
    );
    assert!(
        said.contains("✅ User completed the URL elicitation flow."),
        "{said}"
    );
    let mut typed = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "call",
            "--data-dir",
            data,
            "mcp-everything.trigger-url-elicitation",
            input,
        ])
        .env_remove("HARNESS_DATA_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    typed.stdin.take().unwrap().write_all(b"d\n").unwrap();
    let output = typed.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("    │ [o] Open it  [d] Decline  [c] Cancel ? d\n"),
        "{said}"
    );
    assert!(said.contains("❌ User declined to open the URL"), "{said}");
}

#[test]
fn mcp_add_takes_a_confidential_clients_secret_from_the_environment_and_a_later_call_refreshes_with_it()
 {
    // The secret comes from HARNESS_OAUTH_CLIENT_SECRET, never a flag (a flag shows in the
    // process list); it is kept in the keyring with the sign-in, so a refresh in a later
    // process carries it too.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::signing_in(
        vec![mcp_server::tool("echo", true)],
        mcp_server::OAuthConfig {
            issued_clients: vec!["pku-harness-issued"],
            client_auth: Some("client_secret_post"),
            ..mcp_server::OAuthConfig::default()
        },
    ));
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let browser = dir.path().join("browser");
    std::fs::write(
        &browser,
        "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; \
         urllib.request.build_opener(urllib.request.ProxyHandler({})).open(sys.argv[1]).read()' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let secret = mcp_server::secret_of("pku-harness-issued");
    let add = |client_id: Option<&str>| {
        let mut args = vec!["mcp", "add", &url, "--name", "notes", "--data-dir", data];
        if let Some(id) = client_id {
            args.extend(["--client-id", id]);
        }
        Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(args)
            .env("BROWSER", &browser)
            .env("HARNESS_OAUTH_CLIENT_SECRET", &secret)
            .env_remove("HARNESS_MCP_TOKEN")
            .env_remove("HARNESS_DATA_DIR")
            .output()
            .unwrap()
    };

    // A secret without the client id it goes with: refused, naming the flag to give.
    let refused = add(None);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "harness: HARNESS_OAUTH_CLIENT_SECRET is set but --client-id is not: a client secret \
         goes with the client id it was issued with; give --client-id too\n"
    );

    let added = add(Some("pku-harness-issued"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&added.stdout),
        String::from_utf8_lossy(&added.stderr),
    );
    assert!(added.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(&secret) && !stderr.contains(&secret));

    server.revoke_access_tokens();
    let (called, _) = harness(&[
        "call",
        "--data-dir",
        data,
        "mcp-notes.echo",
        r#"{"message": "hi"}"#,
    ]);
    assert!(called.contains("echo: hi"), "{called}");
    let sent: Vec<(String, String)> = server
        .token_requests()
        .iter()
        .map(|form| {
            let field = |name: &str| {
                form.iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            (field("grant_type"), field("client_secret"))
        })
        .collect();
    assert_eq!(
        sent,
        [
            ("authorization_code".to_owned(), secret.clone()),
            ("refresh_token".to_owned(), secret.clone()),
        ]
    );
}

#[test]
fn mcp_add_signs_in_with_a_private_key_from_a_file_and_a_later_call_signs_in_again_with_the_kept_key()
 {
    // RFC 7523 private_key_jwt at an authorization server that issues tokens only to clients:
    // the key is read from --client-key-file (never a flag value), kept in the keyring with
    // the sign-in, so a later process signs in again with it after the file is gone; no page
    // is opened (BROWSER fails if run).
    use base64::Engine;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::signing_in(
        vec![mcp_server::tool("echo", true)],
        mcp_server::OAuthConfig {
            issued_clients: vec!["pku-harness-signed"],
            client_auth: Some("private_key_jwt"),
            grants: vec!["client_credentials"],
            client_key: Some(pair.public_key().as_ref().to_vec()),
            ..mcp_server::OAuthConfig::default()
        },
    ));
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let key = dir.path().join("client.pem");
    std::fs::write(&key, &pem).unwrap();
    let add = |extra: &[&str], id_token: Option<&str>| {
        let mut args = vec!["mcp", "add", &url, "--name", "signed", "--data-dir", data];
        args.extend(extra);
        let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
        command
            .args(args)
            .env("BROWSER", "false")
            .env_remove("HARNESS_OAUTH_CLIENT_SECRET")
            .env_remove("HARNESS_MCP_TOKEN")
            .env_remove("HARNESS_DATA_DIR");
        match id_token {
            Some(token) => command.env("HARNESS_OAUTH_ID_TOKEN", token),
            None => command.env_remove("HARNESS_OAUTH_ID_TOKEN"),
        };
        command.output().unwrap()
    };

    // Cross-app access without the ID token: refused, naming where it is read from.
    let refused = add(
        &[
            "--client-id",
            "pku-harness-signed",
            "--idp-issuer",
            "https://idp.example.edu",
            "--idp-client-id",
            "pku-harness",
        ],
        None,
    );
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "harness: --idp-issuer: the ID token your identity provider issued is read from \
         $HARNESS_OAUTH_ID_TOKEN, which is not set\n"
    );

    let key_path = key.to_str().unwrap();
    let added = add(
        &[
            "--client-id",
            "pku-harness-signed",
            "--client-key-file",
            key_path,
        ],
        None,
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&added.stdout),
        String::from_utf8_lossy(&added.stderr),
    );
    assert!(added.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout, "Installed mcp-signed with 1 tools.\n");
    std::fs::remove_file(&key).unwrap();

    server.revoke_access_tokens();
    let (called, _) = harness(&[
        "call",
        "--data-dir",
        data,
        "mcp-signed.echo",
        r#"{"message": "hi"}"#,
    ]);
    assert!(called.contains("echo: hi"), "{called}");
    let sent: Vec<(String, bool)> = server
        .token_requests()
        .iter()
        .map(|form| {
            let field = |name: &str| form.iter().find(|(n, _)| n == name).map(|(_, v)| v);
            (
                field("grant_type").cloned().unwrap_or_default(),
                field("client_assertion").is_some(),
            )
        })
        .collect();
    let cc = "client_credentials".to_owned();
    assert_eq!(sent, [(cc.clone(), true), (cc, true)]);
    assert!(server.authorizations().is_empty(), "no page was opened");
}
