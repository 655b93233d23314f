//! JSON Schema validation (DESIGN.md §2, `harness_core::schema`): the validator's runtime made
//! on a process's first check (printed: it happens once), then a valid and an invalid input
//! checked against a tool's schema, and a schema seen for the first time compiled and checked
//! against the meta-schema.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::schema::InputSchema;
use serde_json::{Value, json};

/// A shipped tool's kind of schema: a card top-up's amount, a date written like its example,
/// an enum, nothing else allowed.
fn top_up(description: &str) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "description": description,
        "properties": {
            "amountYuan": {"type": "number", "minimum": 1, "maximum": 500},
            "on": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "examples": ["2026-12-04"]},
            "card": {"enum": ["campus", "bath"]},
            "note": {"type": "string", "maxLength": 200}
        },
        "required": ["amountYuan", "card"],
        "additionalProperties": false
    })
}

fn bench(c: &mut Criterion) {
    let started = Instant::now();
    let schema = InputSchema::compile(top_up("top up")).unwrap();
    println!(
        "the process's first check (the validator's runtime made, one schema compiled): {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let valid = json!({"amountYuan": 50, "on": "2026-12-05", "card": "campus"});
    let invalid = json!({"amountYuan": 900, "on": "2026/12/05", "card": "gym", "x": 1});
    assert_eq!(schema.validate(&valid), Ok(()));
    assert_eq!(
        schema.validate(&invalid).unwrap_err().matches("; ").count(),
        3
    );

    let mut group = c.benchmark_group("schema");
    group.bench_function("a valid input", |b| {
        b.iter(|| schema.validate(black_box(&valid)))
    });
    group.bench_function("an input with four problems, worded", |b| {
        b.iter(|| schema.validate(black_box(&invalid)))
    });
    let mut n = 0u64;
    group.bench_function("a schema seen for the first time, checked", |b| {
        b.iter(|| {
            n += 1;
            InputSchema::compile(top_up(&format!("top up {n}"))).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
