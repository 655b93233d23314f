//! Rules' `when` fields compare input values by what the tool receives, never by how the model
//! spelled them: a deny rule for `amountYuan: 500` also stops `500.0`, `5e2` and
//! `500.00000000000001`. The oracle here is a plain reference matcher over the values the test
//! generated (a number is its integer value, however it is written), not `RuleSet` itself.

use harness_core::policy::{Rule, RuleKind, RuleSet};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const PLUGINS: [&str; 2] = ["wallet", "forum"];
const TOOLS: [&str; 2] = ["recharge", "post"];
const FIELDS: [&str; 2] = ["amountYuan", "to"];

/// A value as the test knows it, and how it is written in JSON text.
#[derive(Debug, Clone)]
enum Datum {
    /// The integer `value`, written in one of several spellings.
    Number {
        value: i64,
        spelling: u8,
    },
    Text(String),
}

impl Datum {
    fn json_text(&self) -> String {
        match self {
            Datum::Number { value, spelling } => match spelling % 6 {
                0 => format!("{value}"),
                1 => format!("{value}.0"),
                2 => format!("{value}e0"),
                3 => format!("{}e1", *value as f64 / 10.0),
                // Below f64's resolution: the tool receives the integer itself.
                4 => format!("{value}.00000000000000000001"),
                _ => format!("{value}.000"),
            },
            Datum::Text(s) => Value::String(s.clone()).to_string(),
        }
    }

    fn parsed(&self) -> Value {
        serde_json::from_str(&self.json_text()).expect("a spelling is JSON")
    }

    /// The reference: numbers are equal when their integers are, strings when they are equal.
    fn same_as(&self, other: &Datum) -> bool {
        match (self, other) {
            (Datum::Number { value: a, .. }, Datum::Number { value: b, .. }) => a == b,
            (Datum::Text(a), Datum::Text(b)) => a == b,
            _ => false,
        }
    }
}

fn datum() -> impl Strategy<Value = Datum> {
    prop_oneof![
        (
            prop::sample::select(vec![5i64, 50, 499, 500, 501, 1000]),
            any::<u8>()
        )
            .prop_map(|(value, spelling)| Datum::Number { value, spelling }),
        prop::sample::select(vec!["500", "5e2", "alice", "Alice"])
            .prop_map(|s| Datum::Text(s.into())),
    ]
}

#[derive(Debug, Clone)]
struct RuleSpec {
    kind: RuleKind,
    /// 0: `*`, 1: `<plugin>.*`, 2: `<plugin>.<tool>`
    pattern: u8,
    plugin: usize,
    tool: usize,
    effect: Option<Effect>,
    when: Vec<(usize, Datum)>,
}

fn rule_spec() -> impl Strategy<Value = RuleSpec> {
    (
        prop::sample::select(vec![RuleKind::Deny, RuleKind::Ask, RuleKind::Allow]),
        0u8..3,
        0..PLUGINS.len(),
        0..TOOLS.len(),
        prop::option::of(prop::sample::select(vec![Effect::Read, Effect::Money])),
        prop::collection::vec((0..FIELDS.len(), datum()), 0..3),
    )
        .prop_map(|(kind, pattern, plugin, tool, effect, when)| RuleSpec {
            kind,
            pattern,
            plugin,
            tool,
            effect,
            when,
        })
}

impl RuleSpec {
    fn pattern_text(&self) -> String {
        match self.pattern {
            0 => "*".into(),
            1 => format!("{}.*", PLUGINS[self.plugin]),
            _ => format!("{}.{}", PLUGINS[self.plugin], TOOLS[self.tool]),
        }
    }

    fn rule(&self) -> Rule {
        let when = (!self.when.is_empty()).then(|| {
            // A later field of the same name replaces an earlier one, as in a JSON object.
            self.when
                .iter()
                .map(|(f, d)| (FIELDS[*f].to_owned(), d.parsed()))
                .collect::<Map<_, _>>()
        });
        Rule {
            kind: self.kind,
            tool: self.pattern_text(),
            effect: self.effect,
            when,
        }
    }

    /// The reference matcher: pattern, effect, and every `when` field present and the same.
    fn matches(
        &self,
        plugin: usize,
        tool: usize,
        effect: Effect,
        input: &[(usize, Datum)],
    ) -> bool {
        let pattern = match self.pattern {
            0 => true,
            1 => self.plugin == plugin,
            _ => self.plugin == plugin && self.tool == tool,
        };
        let wanted = last_by_field(&self.when);
        let given = last_by_field(input);
        pattern
            && self.effect.is_none_or(|e| e == effect)
            && wanted
                .iter()
                .enumerate()
                .all(|(f, want)| match (want, &given[f]) {
                    (None, _) => true,
                    (Some(want), Some(got)) => got.same_as(want),
                    (Some(_), None) => false,
                })
    }
}

fn last_by_field(fields: &[(usize, Datum)]) -> Vec<Option<Datum>> {
    let mut by_field = vec![None; FIELDS.len()];
    for (f, d) in fields {
        by_field[*f] = Some(d.clone());
    }
    by_field
}

fn tool(plugin: usize, tool: usize, effect: Effect) -> std::sync::Arc<Tool> {
    let manifest = parse_manifest(&json!({"id": PLUGINS[plugin], "tools": [
        {"name": TOOLS[tool], "effect": effect.as_str()}
    ]}))
    .unwrap();
    Plugin::load(manifest, PluginKind::Bundled).unwrap().tools[0].clone()
}

/// The input as the model writes it: JSON text with each number spelled its own way.
fn input_text(fields: &[(usize, Datum)]) -> Value {
    let members: Vec<String> = last_by_field(fields)
        .iter()
        .enumerate()
        .filter_map(|(f, d)| {
            d.as_ref()
                .map(|d| format!("\"{}\": {}", FIELDS[f], d.json_text()))
        })
        .collect();
    serde_json::from_str(&format!("{{{}}}", members.join(", "))).unwrap()
}

#[test]
fn a_deny_rule_for_500_stops_every_spelling_of_500() {
    let rule = Rule {
        kind: RuleKind::Deny,
        tool: "wallet.recharge".into(),
        effect: None,
        when: Some(json!({"amountYuan": 500}).as_object().unwrap().clone()),
    };
    let set = RuleSet::new(vec![rule]).unwrap();
    let recharge = tool(0, 0, Effect::Money);
    for spelling in [
        "500",
        "500.0",
        "5e2",
        "5.0e2",
        "500.00000000000001",
        "50000e-2",
    ] {
        let input: Value =
            serde_json::from_str(&format!("{{\"amountYuan\": {spelling}}}")).unwrap();
        assert_eq!(
            set.first_match(RuleKind::Deny, &recharge, &input),
            Some(0),
            "{spelling}"
        );
    }
    for other in ["499", "500.5", "\"500\"", "501.0"] {
        let input: Value = serde_json::from_str(&format!("{{\"amountYuan\": {other}}}")).unwrap();
        assert_eq!(
            set.first_match(RuleKind::Deny, &recharge, &input),
            None,
            "{other}"
        );
    }
}

#[test]
fn an_integer_past_f64_precision_is_not_the_float_it_rounds_to() {
    let rule = Rule {
        kind: RuleKind::Allow,
        tool: "*".into(),
        effect: None,
        when: Some(
            json!({"amountYuan": 9_007_199_254_740_993u64})
                .as_object()
                .unwrap()
                .clone(),
        ),
    };
    let set = RuleSet::new(vec![rule]).unwrap();
    let input: Value = serde_json::from_str("{\"amountYuan\": 9007199254740992.0}").unwrap();
    assert_eq!(
        set.first_match(RuleKind::Allow, &tool(0, 0, Effect::Money), &input),
        None
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_first_matching_rule_of_each_kind_is_the_reference_matchers(
        specs in prop::collection::vec(rule_spec(), 0..8),
        plugin in 0..PLUGINS.len(),
        tool_index in 0..TOOLS.len(),
        effect in prop::sample::select(vec![Effect::Read, Effect::Money]),
        input in prop::collection::vec((0..FIELDS.len(), datum()), 0..3),
    ) {
        let set = RuleSet::new(specs.iter().map(RuleSpec::rule).collect()).unwrap();
        let called = tool(plugin, tool_index, effect);
        let given = input_text(&input);
        for kind in [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow] {
            let expected = specs
                .iter()
                .position(|s| s.kind == kind && s.matches(plugin, tool_index, effect, &input))
                .map(|i| i as u32);
            prop_assert_eq!(set.first_match(kind, &called, &given), expected, "{:?} {}", kind, given);
        }
    }
}
