//! The Chat Completions shapes: what is sent (messages, tool specs, the request body) and what
//! comes back (streamed chunks or one JSON body), turned into [`ProviderEvent`]s.
//!
//! The providers students use through this API shape (OpenAI, DeepSeek, Qwen/DashScope
//! compatible mode, Moonshot/Kimi, Zhipu GLM) differ in small ways, all tolerated here:
//! `reasoning_content` (or `reasoning`) deltas, tool-call arguments split over many chunks,
//! usage in its own last chunk (with no choices) or in the finishing one, nulls where others
//! leave a field out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::providers::Sampling;

/// One message of the conversation, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// What the model said before: text, tool calls, or both. `content` is sent as `null` when
    /// the model only called tools, as the API writes it.
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's result, answering the call with the same id.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call the model made: its id (which the tool's result answers), the tool's name as
/// the model saw it, and the arguments exactly as the model wrote them. The arguments are not
/// parsed here: the turn loop validates them against the tool's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Serialize for ToolCall {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: &'a str,
        }
        #[derive(Serialize)]
        struct Wire<'a> {
            id: &'a str,
            r#type: &'static str,
            function: Function<'a>,
        }
        Wire {
            id: &self.id,
            r#type: "function",
            function: Function {
                name: &self.name,
                arguments: &self.arguments,
            },
        }
        .serialize(serializer)
    }
}

/// A tool offered to the model: `{type: "function", function: {name, description,
/// parameters}}` on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
}

impl Serialize for ToolSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SpecOnWire::new(&self.name, &self.description, &self.parameters).serialize(serializer)
    }
}

/// A tool spec as it is written into a request, from borrowed parts: the turn loop writes the
/// registry's tools without copying them into [`ToolSpec`]s first.
#[derive(Serialize)]
pub(crate) struct SpecOnWire<'a> {
    r#type: &'static str,
    function: FunctionOnWire<'a>,
}

#[derive(Serialize)]
struct FunctionOnWire<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Lean<'a>,
}

impl<'a> SpecOnWire<'a> {
    /// A tool whose input schema reaches the model without [`NOISE`].
    pub(crate) fn new(name: &'a str, description: &'a str, parameters: &'a Value) -> Self {
        Self::written(name, description, parameters, false)
    }

    /// `as_declared`: the schema goes exactly as its plugin declared it (a remote server's,
    /// `registry::Tool::schema_as_declared`), else without [`NOISE`].
    pub(crate) fn written(
        name: &'a str,
        description: &'a str,
        parameters: &'a Value,
        as_declared: bool,
    ) -> Self {
        Self {
            r#type: "function",
            function: FunctionOnWire {
                name,
                description,
                parameters: Lean {
                    schema: parameters,
                    as_declared,
                },
            },
        }
    }
}

/// Keywords of a JSON Schema the model does not need to call a tool: they are in the manifest
/// (for the forms and the checks of the input) but every request would pay for them. A default
/// the model needs is said in the description; the input is validated whatever the model sends.
const NOISE: &[&str] = &["title", "examples", "default", "$schema", "$id", "$comment"];

/// A tool's input schema as the model reads it: without [`NOISE`] and without
/// `additionalProperties: false`, written as it is serialized (the registry's schema is not
/// copied). Only keywords are dropped, never a property that happens to be named `title`.
/// A schema `as_declared` is written whole.
struct Lean<'a> {
    schema: &'a Value,
    as_declared: bool,
}

impl<'a> Lean<'a> {
    fn of(schema: &'a Value) -> Self {
        Self {
            schema,
            as_declared: false,
        }
    }
}

/// An object whose values are schemas, keyed by names (`properties`, `$defs`).
struct LeanNamed<'a>(&'a Value);

/// An array of schemas (`anyOf`, `prefixItems`).
struct LeanEach<'a>(&'a Value);

impl Serialize for Lean<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(schema) = self.schema else {
            return self.schema.serialize(serializer);
        };
        if self.as_declared {
            return self.schema.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in schema {
            match key.as_str() {
                k if NOISE.contains(&k) => {}
                "additionalProperties" if *value == Value::Bool(false) => {}
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    map.serialize_entry(key, &LeanNamed(value))?
                }
                "items"
                | "additionalProperties"
                | "not"
                | "contains"
                | "propertyNames"
                | "if"
                | "then"
                | "else" => map.serialize_entry(key, &Lean::of(value))?,
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                    map.serialize_entry(key, &LeanEach(value))?
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

impl Serialize for LeanNamed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(named) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(named.len()))?;
        for (name, schema) in named {
            map.serialize_entry(name, &Lean::of(schema))?;
        }
        map.end()
    }
}

impl Serialize for LeanEach<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Array(each) = self.0 else {
            return self.0.serialize(serializer);
        };
        serializer.collect_seq(each.iter().map(Lean::of))
    }
}

/// One call to the model. The model and the thinking effort are per conversation, so they
/// travel with the request rather than with the client.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// `reasoning_effort` (`low`, `medium`, `high`, …), sent only when set: providers that do
    /// not know the field may refuse a request that carries it.
    pub reasoning_effort: Option<String>,
}

impl ChatRequest {
    /// The request body, as sent: always streamed, with the usage asked for in the last chunk.
    pub(crate) fn body(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct StreamOptions {
            include_usage: bool,
        }
        #[derive(Serialize)]
        struct Body<'a> {
            model: &'a str,
            messages: &'a [Message],
            // Some providers refuse an empty `tools` array.
            #[serde(skip_serializing_if = "<[ToolSpec]>::is_empty")]
            tools: &'a [ToolSpec],
            #[serde(skip_serializing_if = "Option::is_none")]
            reasoning_effort: Option<&'a str>,
            stream: bool,
            stream_options: StreamOptions,
        }
        serde_json::to_vec(&Body {
            model: &self.model,
            messages: &self.messages,
            tools: &self.tools,
            reasoning_effort: self.reasoning_effort.as_deref(),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
        })
        .expect("the request body is plain data")
    }
}

/// A request body put together from parts already written as JSON: the turn loop keeps each
/// history message's JSON and the offered tools' JSON between requests, so a request costs
/// copying bytes, not serialising the history and 1,000 schemas again. The bytes are those
/// [`ChatRequest::body`] writes for the same request (a test holds them equal).
pub(crate) struct BodyParts<'a> {
    pub model: &'a str,
    /// The messages, each one JSON object, in order.
    pub messages: &'a [&'a str],
    /// The tool specs, each one JSON object joined by commas; empty when none is offered.
    pub tools: &'a str,
    pub reasoning_effort: Option<&'a str>,
    /// `temperature` and `max_tokens`, each sent only when set (`agent::providers`).
    pub sampling: Sampling,
}

impl BodyParts<'_> {
    pub(crate) fn write(&self) -> Vec<u8> {
        let size = self.messages.iter().map(|m| m.len() + 1).sum::<usize>()
            + self.tools.len()
            + self.model.len()
            + 128;
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(b"{\"model\":");
        write_json(&mut out, self.model);
        out.extend_from_slice(b",\"messages\":[");
        for (i, message) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(message.as_bytes());
        }
        out.push(b']');
        // Some providers refuse an empty `tools` array.
        if !self.tools.is_empty() {
            out.extend_from_slice(b",\"tools\":[");
            out.extend_from_slice(self.tools.as_bytes());
            out.push(b']');
        }
        if let Some(effort) = self.reasoning_effort {
            out.extend_from_slice(b",\"reasoning_effort\":");
            write_json(&mut out, effort);
        }
        if let Some(temperature) = self.sampling.temperature {
            out.extend_from_slice(b",\"temperature\":");
            serde_json::to_writer(&mut out, &temperature).expect("a finite number serialises");
        }
        if let Some(max_tokens) = self.sampling.max_tokens {
            out.extend_from_slice(format!(",\"max_tokens\":{max_tokens}").as_bytes());
        }
        out.extend_from_slice(b",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        out
    }
}

/// Appends `value` as JSON.
fn write_json(out: &mut Vec<u8>, value: &str) {
    serde_json::to_writer(out, value).expect("plain data serialises");
}

/// Token counts of one call, as the provider reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// The prompt tokens the provider read from its cache of an earlier request's prefix
    /// (`prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`); 0 when
    /// it reports none.
    pub cached_tokens: u64,
}

/// What a model call produces, in order: text and thinking deltas as they arrive, each tool
/// call once complete, the usage, and last `Finished`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderEvent {
    Text(String),
    /// The model's reasoning (`reasoning_content`): shown as thinking, never as the answer.
    Thinking(String),
    ToolCall(ToolCall),
    Usage(Usage),
    /// The answer given so far was cut off and is asked for again: the text and thinking given
    /// since the request began are void, and the next attempt's events replace them.
    Restarted,
    /// The answer is complete. `finish_reason` as the provider wrote it (`stop`,
    /// `tool_calls`, `length`, …), when it wrote one.
    Finished {
        finish_reason: Option<String>,
    },
}

// What comes back. Every field is optional and `null` is read as absent: providers differ in
// which fields they send and which they send as null.

#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Some providers report a failure inside a 200 stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u32>,
    /// Streamed chunks carry `delta`, a plain response `message`; both have the same fields.
    #[serde(default, alias = "message")]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    /// The field's name at some OpenAI-compatible gateways.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    /// OpenAI, Qwen, Kimi, Zhipu, Doubao and llama.cpp's way of saying what the cache served.
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
    /// DeepSeek's.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Chunk {
    /// The message of an `error` the provider put in its answer, if it did.
    pub(crate) fn error_message(&self) -> Option<String> {
        self.error.as_ref().map(error_text)
    }
}

/// The readable part of an `error` value: `{"message": …}`, a string, or the JSON itself.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => match fields.get("message") {
            Some(Value::String(text)) => text.clone(),
            _ => error.to_string(),
        },
        other => other.to_string(),
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Builds the events of one answer from its chunks: deltas pass straight through, tool calls
/// are assembled by `index` and given out whole when the answer finishes.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    calls: BTreeMap<u32, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    calls_given: bool,
}

impl Assembler {
    /// Takes one chunk (or a whole non-streamed response) and gives out what it completes.
    pub(crate) fn push(&mut self, chunk: Chunk, emit: &mut dyn FnMut(ProviderEvent)) {
        if let Some(usage) = chunk.usage {
            let prompt = usage.prompt_tokens.unwrap_or(0);
            let completion = usage.completion_tokens.unwrap_or(0);
            self.usage = Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: usage
                    .total_tokens
                    .unwrap_or(prompt.saturating_add(completion)),
                cached_tokens: usage
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .or(usage.prompt_cache_hit_tokens)
                    .unwrap_or(0),
            });
        }
        // One answer is asked for (no `n`); another choice would be a second, unrelated answer.
        let choices = chunk.choices.unwrap_or_default();
        for choice in choices.into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                self.push_delta(delta, emit);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
                self.give_calls(emit);
            }
        }
    }

    fn push_delta(&mut self, delta: Delta, emit: &mut dyn FnMut(ProviderEvent)) {
        for thinking in [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
        {
            if !thinking.is_empty() {
                emit(ProviderEvent::Thinking(thinking));
            }
        }
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            emit(ProviderEvent::Text(text));
        }
        for call in delta.tool_calls.into_iter().flatten() {
            let index = call
                .index
                .unwrap_or_else(|| self.index_without_one(call.id.as_deref()));
            let partial = self.calls.entry(index).or_default();
            // The id and name come once, in the call's first chunk; a provider that repeats
            // them in later chunks repeats the same value, so the first one is kept.
            if partial.id.is_empty() {
                partial.id = call.id.unwrap_or_default();
            }
            if let Some(function) = call.function {
                if partial.name.is_empty() {
                    partial.name = function.name.unwrap_or_default();
                }
                if let Some(arguments) = function.arguments {
                    partial.arguments.push_str(&arguments);
                }
            }
        }
    }

    /// A tool-call delta without `index` (some gateways leave it out): a new id starts a new
    /// call, anything else continues the last one.
    fn index_without_one(&self, id: Option<&str>) -> u32 {
        let next = self.calls.keys().next_back().map_or(0, |last| last + 1);
        match id.filter(|id| !id.is_empty()) {
            Some(id) => self
                .calls
                .iter()
                .find(|(_, call)| call.id == id)
                .map_or(next, |(index, _)| *index),
            None => next.saturating_sub(1),
        }
    }

    fn give_calls(&mut self, emit: &mut dyn FnMut(ProviderEvent)) {
        if self.calls_given {
            return;
        }
        self.calls_given = true;
        for (index, call) in std::mem::take(&mut self.calls) {
            // The result must name the call it answers; a provider that sent no id gets one.
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            emit(ProviderEvent::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            }));
        }
    }

    /// Whether the answer said it was finished: a stream that ends before this was cut.
    pub(crate) fn has_finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Gives out what was held back (tool calls not yet given, the usage) and `Finished`.
    pub(crate) fn finish(mut self, emit: &mut dyn FnMut(ProviderEvent)) {
        self.give_calls(emit);
        if let Some(usage) = self.usage {
            emit(ProviderEvent::Usage(usage));
        }
        emit(ProviderEvent::Finished {
            finish_reason: self.finish_reason,
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(chunks: &[Value]) -> Vec<ProviderEvent> {
        let mut events = Vec::new();
        let mut assembler = Assembler::default();
        for chunk in chunks {
            let chunk: Chunk = serde_json::from_value(chunk.clone()).unwrap();
            assembler.push(chunk, &mut |event| events.push(event));
        }
        assembler.finish(&mut |event| events.push(event));
        events
    }

    #[test]
    fn a_tool_spec_is_sent_without_the_schemas_noise_and_keeps_a_property_named_title() {
        // Issue 42: what every request pays for is what the model needs to call the tool.
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "title": "Input", "additionalProperties": false,
            "properties": {
                "title": {"type": "string", "title": "Title", "examples": ["a"]},
                "limit": {"type": "integer", "default": 10, "description": "Books a page"},
                "tags": {"type": "array", "items": {"type": "string", "default": "x"}},
                "when": {"anyOf": [{"type": "string", "title": "t"}, {"type": "null"}]},
                "extra": {"type": "object", "additionalProperties": {"type": "string", "title": "v"}}
            },
            "required": ["title"]});
        let sent = serde_json::to_value(SpecOnWire::new("p__t", "d", &schema)).unwrap();
        assert_eq!(
            sent["function"]["parameters"],
            json!({"type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "limit": {"type": "integer", "description": "Books a page"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "extra": {"type": "object", "additionalProperties": {"type": "string"}}
                },
                "required": ["title"]})
        );
    }

    #[test]
    fn a_remote_servers_schema_is_sent_exactly_as_it_declared_it() {
        // MCP: a client hands a tool's JSON Schema to the model unchanged (the official
        // suite's json-schema-2020-12-preservation); `$schema`, `$defs`, titles, defaults and
        // `additionalProperties: false` all stay.
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "title": "Input", "additionalProperties": false,
            "$defs": {"when": {"type": "string", "title": "When", "default": "now"}},
            "properties": {"at": {"$ref": "#/$defs/when", "examples": ["9:00"]}}});
        let sent = serde_json::to_value(SpecOnWire::written("p__t", "d", &schema, true)).unwrap();
        assert_eq!(sent["function"]["parameters"], schema);
    }

    #[test]
    fn a_tool_call_delta_without_index_continues_the_call_it_belongs_to() {
        let events = run(&[
            json!({"choices": [{"delta": {"tool_calls": [
                {"id": "a", "function": {"name": "x", "arguments": "{\"q\":"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [
                {"function": {"arguments": "1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [
                {"id": "b", "function": {"name": "y", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        assert_eq!(
            events,
            vec![
                ProviderEvent::ToolCall(ToolCall {
                    id: "a".into(),
                    name: "x".into(),
                    arguments: "{\"q\":1}".into()
                }),
                ProviderEvent::ToolCall(ToolCall {
                    id: "b".into(),
                    name: "y".into(),
                    arguments: "{}".into()
                }),
                ProviderEvent::Finished {
                    finish_reason: Some("tool_calls".into())
                },
            ]
        );
    }

    #[test]
    fn nulls_where_other_providers_leave_fields_out_are_read_as_absent() {
        let events = run(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null,
                "reasoning_content": null, "tool_calls": null}, "finish_reason": null}],
                "usage": null}),
            json!({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1}}),
        ]);
        assert_eq!(
            events,
            vec![
                ProviderEvent::Text("hi".into()),
                ProviderEvent::Usage(Usage {
                    prompt_tokens: 3,
                    completion_tokens: 1,
                    total_tokens: 4,
                    cached_tokens: 0,
                }),
                ProviderEvent::Finished {
                    finish_reason: Some("stop".into())
                },
            ]
        );
    }

    #[test]
    fn a_call_without_an_id_is_given_one_its_result_can_name() {
        let events = run(&[json!({"choices": [{"delta": {"tool_calls": [
            {"index": 2, "function": {"name": "x", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}]})]);
        assert_eq!(
            events[0],
            ProviderEvent::ToolCall(ToolCall {
                id: "call_2".into(),
                name: "x".into(),
                arguments: "{}".into()
            })
        );
    }

    #[test]
    fn the_request_body_streams_with_usage_and_leaves_out_what_is_unset() {
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                Message::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "a__b".into(),
                        arguments: "{}".into(),
                    }],
                },
                Message::Tool {
                    tool_call_id: "c1".into(),
                    content: "{\"ok\":true}".into(),
                },
            ],
            tools: vec![],
            reasoning_effort: None,
        };
        assert_eq!(
            serde_json::from_slice::<Value>(&request.body()).unwrap(),
            json!({
                "model": "m",
                "messages": [
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "a__b", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\":true}"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
    }

    #[test]
    fn a_body_from_parts_is_byte_for_byte_the_body_of_the_same_request() {
        let parameters = json!({"type": "object", "properties": {"day": {"type": "string"}}});
        let messages = vec![
            Message::System {
                content: "规则\n\"quoted\"".into(),
            },
            Message::User {
                content: "余额？".into(),
            },
            Message::Assistant {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "card__balance".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                content: "{\"balanceYuan\":1}".into(),
            },
        ];
        let tools = vec![
            ToolSpec {
                name: "card__balance".into(),
                description: "The balance.".into(),
                parameters: parameters.clone(),
            },
            ToolSpec {
                name: "card__spent".into(),
                description: String::new(),
                parameters,
            },
        ];
        for (tools, effort) in [(tools, Some("high")), (vec![], None)] {
            let request = ChatRequest {
                model: "deepseek-chat".into(),
                messages: messages.clone(),
                tools: tools.clone(),
                reasoning_effort: effort.map(str::to_owned),
            };
            let written: Vec<String> = messages
                .iter()
                .map(|m| serde_json::to_string(m).unwrap())
                .collect();
            let written: Vec<&str> = written.iter().map(String::as_str).collect();
            let specs: Vec<String> = tools
                .iter()
                .map(|t| {
                    serde_json::to_string(&SpecOnWire::new(&t.name, &t.description, &t.parameters))
                        .unwrap()
                })
                .collect();
            let parts = BodyParts {
                model: "deepseek-chat",
                messages: &written,
                tools: &specs.join(","),
                reasoning_effort: effort,
                sampling: Sampling::default(),
            };
            assert_eq!(
                String::from_utf8(parts.write()).unwrap(),
                String::from_utf8(request.body()).unwrap()
            );
        }
    }
}
