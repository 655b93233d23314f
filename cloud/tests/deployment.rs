//! The deployment (issue 39): cloud/Dockerfile and cloud/compose.yaml, parsed and checked
//! against the crate they ship — the binary and command they run, the environment the server
//! reads, the port it listens on, and PostgreSQL started healthy before it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml_ng::Value;

fn crate_file(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// A Dockerfile's instructions: (keyword, arguments), continuation lines joined, comments gone.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                let (keyword, args) = pending.split_once(char::is_whitespace).unwrap();
                out.push((keyword.to_uppercase(), args.trim().to_owned()));
                pending.clear();
            }
        }
    }
    assert!(
        pending.is_empty(),
        "a continuation line ends the Dockerfile"
    );
    out
}

/// ENV's KEY=VALUE pairs.
fn env_pairs(args: &str) -> BTreeMap<String, String> {
    args.split_whitespace()
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

// Issue 39: a Dockerfile as the deployment, checked by a test that parses it.
#[test]
fn the_dockerfile_builds_the_server_and_runs_it_as_a_user_on_its_port() {
    let ins = instructions(&crate_file("Dockerfile"));
    let stages: Vec<_> = ins
        .iter()
        .filter(|(k, _)| k == "FROM")
        .map(|(_, a)| a.clone())
        .collect();
    assert_eq!(
        stages.len(),
        2,
        "a build stage and a runtime stage: {stages:?}"
    );
    assert!(stages[0].ends_with(" AS build"), "{}", stages[0]);
    let build_end = ins.iter().rposition(|(k, _)| k == "FROM").unwrap();
    let (build, runtime) = ins.split_at(build_end);
    assert!(
        build
            .iter()
            .any(|(k, a)| k == "RUN"
                && a.contains("cargo build --release --locked -p harness-cloud")),
        "the build stage builds this crate from the lock file"
    );
    let binary = Path::new(env!("CARGO_BIN_EXE_harness-cloud"))
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(runtime.contains(&(
        "COPY".into(),
        format!("--from=build /src/target/release/{binary} /usr/local/bin/{binary}")
    )));
    let user = runtime
        .iter()
        .find(|(k, _)| k == "USER")
        .map(|(_, a)| a.as_str());
    assert!(
        user.is_some_and(|u| u != "root" && u != "0"),
        "the server runs as a user, not root"
    );
    let env: BTreeMap<_, _> = runtime
        .iter()
        .filter(|(k, _)| k == "ENV")
        .flat_map(|(_, a)| env_pairs(a))
        .collect();
    let port = env["HARNESS_CLOUD_LISTEN"]
        .rsplit_once(':')
        .unwrap()
        .1
        .to_owned();
    assert!(runtime.contains(&("EXPOSE".into(), port)));
    assert!(env["HARNESS_CLOUD_DB"].starts_with("sqlite:/data/"));
    assert!(runtime.contains(&("VOLUME".into(), "/data".into())));
    assert!(
        runtime.contains(&("STOPSIGNAL".into(), "SIGTERM".into())),
        "graceful shutdown on stop"
    );
    let entrypoint = runtime.iter().find(|(k, _)| k == "ENTRYPOINT").unwrap();
    let entrypoint: Vec<String> = serde_json::from_str(&entrypoint.1).unwrap();
    assert_eq!(entrypoint, ["harness-cloud", "serve"]);
    // The build context is the workspace: every member it names is there to copy.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    assert!(workspace.join("Cargo.lock").is_file());
    let ignored = crate_file("Dockerfile.dockerignore");
    assert!(
        ignored.lines().any(|l| l == "target"),
        "the build context leaves target/ out"
    );
}

fn get<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |v, key| {
        v.get(*key)
            .unwrap_or_else(|| panic!("compose.yaml lacks {path:?}"))
    })
}

// Issue 39: compose.yaml (server + PostgreSQL), checked by a test that parses it.
#[test]
fn compose_runs_the_server_on_postgres_once_the_database_is_healthy() {
    let compose: Value = serde_yaml_ng::from_str(&crate_file("compose.yaml")).unwrap();
    let services = get(&compose, &["services"]).as_mapping().unwrap();
    let names: Vec<_> = services.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names, ["postgres", "cloud"]);

    let build = get(&compose, &["services", "cloud", "build"]);
    let context =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(get(build, &["context"]).as_str().unwrap());
    let dockerfile = context.join(get(build, &["dockerfile"]).as_str().unwrap());
    assert_eq!(
        dockerfile.canonicalize().unwrap(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("Dockerfile")
            .canonicalize()
            .unwrap()
    );

    let env = get(&compose, &["services", "cloud", "environment"]);
    let db = get(env, &["HARNESS_CLOUD_DB"]).as_str().unwrap();
    let postgres_env = get(&compose, &["services", "postgres", "environment"]);
    let user = get(postgres_env, &["POSTGRES_USER"]).as_str().unwrap();
    let database = get(postgres_env, &["POSTGRES_DB"]).as_str().unwrap();
    assert!(db.starts_with(&format!("postgres://{user}:")), "{db}");
    assert!(db.ends_with(&format!("@postgres:5432/{database}")), "{db}");
    // The password comes from the operator's environment, never from the file.
    let password = get(postgres_env, &["POSTGRES_PASSWORD"]).as_str().unwrap();
    assert!(password.starts_with("${POSTGRES_PASSWORD"), "{password}");
    assert!(db.contains(":${POSTGRES_PASSWORD"), "{db}");

    let listen = get(env, &["HARNESS_CLOUD_LISTEN"]).as_str().unwrap();
    let port = listen.rsplit_once(':').unwrap().1;
    let ports: Vec<_> = get(&compose, &["services", "cloud", "ports"])
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(ports, [format!("{port}:{port}")]);

    assert_eq!(
        get(
            &compose,
            &["services", "cloud", "depends_on", "postgres", "condition"]
        )
        .as_str(),
        Some("service_healthy")
    );
    let check = get(&compose, &["services", "postgres", "healthcheck", "test"])
        .as_sequence()
        .unwrap();
    assert_eq!(check[1].as_str(), Some("pg_isready"));
    assert_eq!(
        get(&compose, &["services", "cloud", "stop_signal"]).as_str(),
        Some("SIGTERM")
    );
}

// DESIGN §1: the server is never linked into the phone library or the core.
#[test]
fn neither_the_core_nor_the_phone_library_depends_on_the_server() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for manifest in [
        "core/Cargo.toml",
        "bindings/Cargo.toml",
        "bindings/floor/Cargo.toml",
    ] {
        let text = std::fs::read_to_string(workspace.join(manifest)).unwrap();
        assert!(
            !text.contains("harness-cloud"),
            "{manifest} names harness-cloud"
        );
    }
}
