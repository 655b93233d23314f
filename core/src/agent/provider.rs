//! The model provider client: one Chat Completions call, streamed, with its events handed to
//! the caller as they arrive.
//!
//! What a student can act on is in the errors: a refused key, a model the endpoint does not
//! know, a provider that stays busy, an answer cut off. Busy answers (429, 5xx) and answers cut
//! off before they finished are retried a bounded number of times; nothing else is, since a
//! second try would fail the same way. The
//! API key is sent in the `Authorization` header and nowhere else: not in an error, not in
//! Debug output.

use std::error::Error;
use std::fmt;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use sse_stream::SseByteStream;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::wire::{Assembler, ChatRequest, Chunk, ProviderEvent, error_text};

/// The secret `model.apiKey`. Its Debug prints `***`; it has no Display.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The waits and bounds of a call. Fields, so that a test can shrink them rather than wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// How long opening the connection may take.
    pub connect_timeout: Duration,
    /// How long the provider may send nothing at all (no header, no byte of the body).
    pub idle_timeout: Duration,
    /// Tries of a busy provider (429, 5xx), the first included.
    pub max_tries: u32,
    /// The time from the first try after which no retry is started.
    pub retry_budget: Duration,
    /// The wait before the second try when the provider says nothing (`Retry-After`); it
    /// doubles for each try after.
    pub first_backoff: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_tries: 3,
            retry_budget: Duration::from_secs(30),
            first_backoff: Duration::from_secs(1),
        }
    }
}

/// Why a model call gave no (complete) answer. Events given out before the error stand: the
/// caller keeps the text that had arrived.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "model.endpoint \"{endpoint}\" is not a usable address: {reason} — fix it in Settings → Model"
    )]
    BadEndpoint { endpoint: String, reason: String },
    #[error(
        "could not reach the model provider at {endpoint}: {reason} — check the connection and model.endpoint in Settings → Model"
    )]
    Unreachable { endpoint: String, reason: String },
    /// 401 or 403.
    #[error("the API key was refused — Settings → Model")]
    KeyRefused { status: u16 },
    /// 404: the endpoint does not serve this model.
    #[error("model \"{model}\" was not found at {endpoint} — check Settings → Model")]
    ModelNotFound { model: String, endpoint: String },
    /// 429 or 5xx on every try, or a `Retry-After` longer than the retry budget.
    #[error(
        "the model provider at {endpoint} is busy or unavailable (HTTP {status}, tried {tries} times) — try again in a minute"
    )]
    Busy {
        endpoint: String,
        status: u16,
        tries: u32,
    },
    /// Any other refusal; `message` is the provider's own, when it gave one.
    #[error("the model provider refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// An `error` the provider sent inside its answer.
    #[error("the model provider reported an error: {message}")]
    ProviderFailed { message: String },
    #[error(
        "the model endpoint answered with content type \"{content_type}\", which is neither JSON nor an event stream — check model.endpoint in Settings → Model"
    )]
    UnexpectedContentType { content_type: String },
    #[error("the model provider's answer could not be read: {reason}")]
    BadAnswer { reason: String },
    /// The stream ended before the answer said it was finished, on every try.
    #[error(
        "the model's answer was cut off: {reason} (tried {tries} times) — what arrived is kept; ask again to go on"
    )]
    StreamDropped { reason: String, tries: u32 },
    #[error("the model provider sent nothing for {waited} — try again")]
    IdleTimeout { waited: String },
    #[error("the model call was cancelled")]
    Cancelled,
}

/// Whether a provider's words say the account's balance or quota is spent: DeepSeek's 402
/// "Insufficient Balance", OpenAI's 429 `insufficient_quota`, Moonshot's
/// `exceeded_current_quota_error`, DashScope's "Arrearage", Zhipu's 1113 "欠费".
pub(crate) fn says_balance_spent(message: &str) -> bool {
    const SPENT: &[&str] = &[
        "insufficient balance",
        "insufficient_quota",
        "exceeded your current quota",
        "exceeded_current_quota",
        "arrearage",
        "余额不足",
        "欠费",
    ];
    let said = message.to_lowercase();
    SPENT.iter().any(|s| said.contains(s))
}

/// How reading an answer fell short: cut off before it finished (asked again while the tries
/// last), or any other failure.
enum Short {
    Cut(String),
    Failed(ProviderError),
}

impl From<ProviderError> for Short {
    fn from(e: ProviderError) -> Self {
        Short::Failed(e)
    }
}

/// A client of one OpenAI-compatible endpoint with one key. The model and the thinking effort
/// come with each request (they are per conversation).
#[derive(Debug)]
pub struct Provider {
    client: reqwest::Client,
    /// `…/chat/completions`.
    url: Url,
    /// The endpoint as errors name it: without credentials.
    shown: String,
    api_key: ApiKey,
    limits: Limits,
}

/// A JSON answer larger than this is refused rather than buffered: no chat answer is near it.
const JSON_CAP: usize = 16 * 1024 * 1024;
/// How much of an error body is read, and how much of the provider's message is shown.
const ERROR_BODY_CAP: usize = 64 * 1024;
const MESSAGE_CHARS: usize = 300;

impl Provider {
    /// `endpoint` is the base URL (`https://api.deepseek.com/v1`); a URL that already ends in
    /// `/chat/completions` is taken as it is.
    pub fn new(endpoint: &str, api_key: ApiKey, limits: Limits) -> Result<Self, ProviderError> {
        let (url, shown) = chat_url(endpoint)?;
        // reqwest is built without a crypto provider; ring is installed as the process default
        // (as the network gate does). An Err only says one is already installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout)
            // A redirect would be followed with the key; the endpoint should be the final one.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| ProviderError::BadEndpoint {
                endpoint: shown.clone(),
                reason: error_chain(&e),
            })?;
        Ok(Self {
            client,
            url,
            shown,
            api_key,
            limits,
        })
    }

    /// Sends `request` and hands each event to `on_event` as it arrives; the last one is
    /// `Finished`. On an error, the events already given stand (the text that arrived before
    /// a cut is the caller's to keep). `cancel` ends the call at once with `Cancelled`.
    pub async fn complete(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: impl FnMut(ProviderEvent) + Send,
    ) -> Result<(), ProviderError> {
        self.complete_body(request.body().into(), &request.model, cancel, on_event)
            .await
    }

    /// [`Provider::complete`] with the body already written (the turn loop writes it from the
    /// parts it keeps between requests); `model` is the one the body names, for the errors.
    pub(crate) async fn complete_body(
        &self,
        body: Bytes,
        model: &str,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(ProviderEvent) + Send,
    ) -> Result<(), ProviderError> {
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let response = self.send(&body, cancel).await?;
            let status = response.status();
            if status.is_success() {
                let mut gave_calls = false;
                let mut give = |event: ProviderEvent| {
                    gave_calls |= matches!(event, ProviderEvent::ToolCall(_));
                    on_event(event);
                };
                let read = self.read_answer(response, cancel, &mut give).await;
                let reason = match read {
                    Ok(()) => return Ok(()),
                    Err(Short::Failed(e)) => return Err(e),
                    Err(Short::Cut(reason)) => reason,
                };
                // A cut answer is no answer: asked again while nothing of it can have acted.
                // Tool calls are given out only once an answer finishes (and the turn loop runs
                // them only after `complete` returns), so a cut one has given none; should one
                // have been given, the answer stands cut rather than be asked twice. No wait
                // first: the provider did answer, and the tries and the budget bound it.
                if gave_calls
                    || tries >= self.limits.max_tries
                    || started.elapsed() > self.limits.retry_budget
                {
                    return Err(ProviderError::StreamDropped { reason, tries });
                }
                on_event(ProviderEvent::Restarted);
                continue;
            }
            if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
                return Err(self.refusal(status, model, response, cancel).await?);
            }
            let wait = retry_after(&response).unwrap_or_else(|| {
                self.limits
                    .first_backoff
                    .saturating_mul(1 << (tries - 1).min(16))
            });
            if status == StatusCode::TOO_MANY_REQUESTS {
                // A 429 that says the account's quota or balance is spent is no busy provider:
                // asking again cannot help, and the student is told to top up.
                let refused = self.refusal(status, model, response, cancel).await?;
                if let ProviderError::Rejected { message, .. } = &refused
                    && says_balance_spent(message)
                {
                    return Err(refused);
                }
            } else {
                drop(response);
            }
            if tries >= self.limits.max_tries
                || started.elapsed().saturating_add(wait) > self.limits.retry_budget
            {
                return Err(ProviderError::Busy {
                    endpoint: self.shown.clone(),
                    status: status.as_u16(),
                    tries,
                });
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Sends the body and waits for the response head, within the idle timeout.
    async fn send(
        &self,
        body: &Bytes,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ProviderError> {
        let sending = self
            .client
            .post(self.url.clone())
            .bearer_auth(&self.api_key.0)
            .header(CONTENT_TYPE, "application/json")
            .header("accept", "text/event-stream, application/json")
            // A retry sends the same bytes again without copying them.
            .body(body.clone())
            .send();
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            sent = tokio::time::timeout(self.limits.idle_timeout, sending) => sent,
        };
        match sent {
            Err(_elapsed) => Err(self.idle()),
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(ProviderError::Unreachable {
                endpoint: self.shown.clone(),
                reason: if e.is_connect() && e.is_timeout() {
                    format!(
                        "no connection within {}",
                        human_duration(self.limits.connect_timeout)
                    )
                } else {
                    self.redact(&error_chain(e.source().unwrap_or(&e)))
                },
            }),
        }
    }

    /// The error for a response that is neither a success nor busy.
    async fn refusal(
        &self,
        status: StatusCode,
        model: &str,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<ProviderError, ProviderError> {
        match status {
            // The body of a refused key may quote the key: it is not read.
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Ok(ProviderError::KeyRefused {
                status: status.as_u16(),
            }),
            StatusCode::NOT_FOUND => Ok(ProviderError::ModelNotFound {
                model: model.to_owned(),
                endpoint: self.shown.clone(),
            }),
            _ if status.is_redirection() => Ok(ProviderError::Rejected {
                status: status.as_u16(),
                message: "the endpoint redirects elsewhere; put the final address in \
                          model.endpoint in Settings → Model"
                    .to_owned(),
            }),
            _ => {
                let body = self
                    .read_body(response, ERROR_BODY_CAP, cancel)
                    .await
                    .unwrap_or_default();
                let message = match serde_json::from_slice::<serde_json::Value>(&body) {
                    Ok(json) => json
                        .get("error")
                        .map(error_text)
                        .or_else(|| json.get("message").map(error_text))
                        .unwrap_or_else(|| json.to_string()),
                    Err(_) => String::from_utf8_lossy(&body).trim().to_owned(),
                };
                let message = if message.is_empty() {
                    "no reason given".to_owned()
                } else {
                    self.redact(&message)
                };
                Ok(ProviderError::Rejected {
                    status: status.as_u16(),
                    message,
                })
            }
        }
    }

    /// A success: an event stream, or one JSON body when the server ignored `stream`.
    async fn read_answer(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ProviderEvent) + Send),
    ) -> Result<(), Short> {
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .unwrap_or_default();
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if essence == "text/event-stream" {
            self.read_stream(response, cancel, on_event).await
        } else if essence == "application/json" || essence.ends_with("+json") {
            let body = self.read_body(response, JSON_CAP, cancel).await?;
            let chunk: Chunk =
                serde_json::from_slice(&body).map_err(|e| ProviderError::BadAnswer {
                    reason: format!("the JSON body is not a chat completion ({e})"),
                })?;
            if let Some(message) = chunk.error_message() {
                return Err(self.failed(&message).into());
            }
            let mut assembler = Assembler::default();
            assembler.push(chunk, on_event);
            assembler.finish(on_event);
            Ok(())
        } else {
            Err(Short::Failed(ProviderError::UnexpectedContentType {
                content_type: if content_type.is_empty() {
                    "(none)".to_owned()
                } else {
                    content_type
                },
            }))
        }
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ProviderEvent) + Send),
    ) -> Result<(), Short> {
        let events = SseByteStream::new(idle_bounded(
            response.bytes_stream(),
            self.limits.idle_timeout,
        ));
        let mut events = std::pin::pin!(events);
        let mut assembler = Assembler::default();
        let mut done = false;
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
                next = events.next() => next,
            };
            let event = match next {
                None => break,
                Some(Ok(event)) => event,
                Some(Err(e)) if is_idle(&e) => return Err(self.idle().into()),
                // Cut after the answer said it was finished: only `[DONE]` (and perhaps the
                // usage) is lost, and the answer is whole.
                Some(Err(_)) if assembler.has_finished() => break,
                Some(Err(e)) => {
                    return Err(Short::Cut(format!(
                        "the connection broke ({})",
                        error_chain(&e)
                    )));
                }
            };
            let Some(data) = event.data else { continue };
            let data = data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                done = true;
                break;
            }
            let chunk: Chunk =
                serde_json::from_str(data).map_err(|e| ProviderError::BadAnswer {
                    reason: format!("a stream event is not a chat completion chunk ({e})"),
                })?;
            if let Some(message) = chunk.error_message() {
                return Err(self.failed(&message).into());
            }
            assembler.push(chunk, on_event);
        }
        if !done && !assembler.has_finished() {
            return Err(Short::Cut(
                "the connection closed before the answer finished".to_owned(),
            ));
        }
        assembler.finish(on_event);
        Ok(())
    }

    /// Reads a whole body up to `cap` bytes, each wait bounded by the idle timeout.
    async fn read_body(
        &self,
        response: reqwest::Response,
        cap: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, Short> {
        let bytes = idle_bounded(response.bytes_stream(), self.limits.idle_timeout);
        let mut bytes = std::pin::pin!(bytes);
        let mut body = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled.into()),
                next = bytes.next() => next,
            };
            match next {
                None => return Ok(body),
                Some(Ok(chunk)) => {
                    if body.len() + chunk.len() > cap {
                        return Err(ProviderError::BadAnswer {
                            reason: format!("the answer is larger than {} bytes", cap),
                        }
                        .into());
                    }
                    body.extend_from_slice(&chunk);
                }
                Some(Err(ByteError::Idle)) => return Err(self.idle().into()),
                Some(Err(ByteError::Body(e))) => {
                    return Err(Short::Cut(format!(
                        "the connection broke ({})",
                        error_chain(&e)
                    )));
                }
            }
        }
    }

    fn idle(&self) -> ProviderError {
        ProviderError::IdleTimeout {
            waited: human_duration(self.limits.idle_timeout),
        }
    }

    fn failed(&self, message: &str) -> ProviderError {
        ProviderError::ProviderFailed {
            message: self.redact(message),
        }
    }

    /// A provider's own text, shortened, with the key blanked should it quote it.
    fn redact(&self, text: &str) -> String {
        let text = if self.api_key.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.api_key.0, "***")
        };
        match text.char_indices().nth(MESSAGE_CHARS) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text,
        }
    }
}

/// The URL to post to, and the endpoint as errors show it.
fn chat_url(endpoint: &str) -> Result<(Url, String), ProviderError> {
    let endpoint = endpoint.trim();
    let bad = |reason: &str| ProviderError::BadEndpoint {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    if endpoint.is_empty() {
        return Err(bad(
            "it is empty; enter the provider's base URL, such as https://api.deepseek.com/v1",
        ));
    }
    let mut url = Url::parse(endpoint).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("it must start with https:// (or http://)"));
    }
    if url.host().is_none() {
        return Err(bad("it names no host"));
    }
    let base = url.path().trim_end_matches('/').to_owned();
    if !base.ends_with("/chat/completions") {
        url.set_path(&format!("{base}/chat/completions"));
    }
    let mut shown = Url::parse(endpoint).map_err(|e| bad(&e.to_string()))?;
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    let shown = shown.as_str().trim_end_matches('/').to_owned();
    Ok((url, shown))
}

/// `Retry-After` in seconds; the HTTP-date form is not honoured (the backoff applies).
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// A failure of the body's bytes: the connection's, or the provider's silence.
#[derive(Debug, thiserror::Error)]
enum ByteError {
    #[error("{0}")]
    Body(reqwest::Error),
    #[error("nothing arrived within the idle timeout")]
    Idle,
}

/// The body's byte stream, failing with `Idle` when no bytes arrive for `idle`. Bounded here,
/// below the SSE parser, so that keep-alive comments (bytes without an event) count as life.
fn idle_bounded(
    bytes: impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send,
    idle: Duration,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, ByteError>> + Send {
    futures_util::stream::unfold(Box::pin(bytes), move |mut bytes| async move {
        match tokio::time::timeout(idle, bytes.next()).await {
            Ok(Some(item)) => Some((item.map_err(ByteError::Body), bytes)),
            Ok(None) => None,
            Err(_elapsed) => Some((Err(ByteError::Idle), bytes)),
        }
    })
}

fn is_idle(error: &sse_stream::Error) -> bool {
    let mut next: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(error) = next {
        if matches!(error.downcast_ref::<ByteError>(), Some(ByteError::Idle)) {
            return true;
        }
        next = error.source();
    }
    false
}

/// An error with its causes, `outer: inner: …`.
fn error_chain(error: &(dyn Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut next = error.source();
    while let Some(error) = next {
        let part = error.to_string();
        if !parts.last().is_some_and(|last| last.ends_with(&part)) {
            parts.push(part);
        }
        next = error.source();
    }
    parts.join(": ")
}

fn human_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_chat_completions_path_once() {
        for (endpoint, url) in [
            (
                "https://api.deepseek.com/v1",
                "https://api.deepseek.com/v1/chat/completions",
            ),
            (
                "https://api.deepseek.com/v1/",
                "https://api.deepseek.com/v1/chat/completions",
            ),
            (
                "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
                "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
            ),
        ] {
            assert_eq!(chat_url(endpoint).unwrap().0.as_str(), url);
        }
    }

    #[test]
    fn an_endpoint_that_is_not_a_web_address_names_the_setting() {
        let error = chat_url("ftp://example.com").unwrap_err();
        assert_eq!(
            error.to_string(),
            "model.endpoint \"ftp://example.com\" is not a usable address: it must start with \
             https:// (or http://) — fix it in Settings → Model"
        );
        assert!(
            chat_url("")
                .unwrap_err()
                .to_string()
                .contains("it is empty")
        );
    }

    #[test]
    fn the_key_prints_as_stars() {
        let key = ApiKey::new("sk-secret");
        assert_eq!(format!("{key:?}"), "***");
        let provider = Provider::new("http://127.0.0.1:1/v1", key, Limits::default()).unwrap();
        assert!(!format!("{provider:?}").contains("sk-secret"));
    }

    #[test]
    fn a_quoted_key_is_blanked_from_the_providers_message() {
        let provider = Provider::new(
            "http://127.0.0.1:1/v1",
            ApiKey::new("sk-secret"),
            Limits::default(),
        )
        .unwrap();
        assert_eq!(
            provider.redact("Incorrect API key provided: sk-secret."),
            "Incorrect API key provided: ***."
        );
    }
}
