//! A remote server's answers, bounded like every other plugin input (DESIGN.md §5: 1 MiB; a
//! larger one is refused, not cut). Both MCP transports read their HTTP bodies through here: a
//! JSON body is read under the cap, and an event stream is counted event by event — each
//! server-sent event (its lines up to the blank line that ends it) may be at most the cap — so
//! an answer past the cap is dropped there rather than buffered whole first.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};

/// The most one answer of a remote server may weigh.
pub const ANSWER_CAP: usize = 1024 * 1024;

/// The message of the JSON-RPC error the client puts in place of an answer past the cap, so
/// that the request it answered fails with it.
pub const TOO_LARGE: &str = "the answer is larger than 1 MiB (1048576 bytes), the most the app \
                             takes from a remote server";

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("{TOO_LARGE}")]
    TooLarge,
    #[error(transparent)]
    Http(#[from] reqwest::Error),
}

/// `response`'s whole body, at most [`ANSWER_CAP`] bytes.
pub async fn read(mut response: reqwest::Response) -> Result<Vec<u8>, BodyError> {
    if response
        .content_length()
        .is_some_and(|n| n > ANSWER_CAP as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > ANSWER_CAP {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The bytes of the event being read, counted across chunks.
#[derive(Default)]
struct EventBytes {
    in_event: usize,
    after_line_break: bool,
}

impl EventBytes {
    /// Counts `chunk`; false once an event has grown past the cap. A blank line (two line
    /// feeds, a carriage return between them or not) ends an event; line breaks are not
    /// counted.
    fn within(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            match byte {
                b'\n' if self.after_line_break => self.in_event = 0,
                b'\n' => self.after_line_break = true,
                b'\r' => {}
                _ => {
                    self.after_line_break = false;
                    self.in_event += 1;
                    if self.in_event > ANSWER_CAP {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// `response`'s body as an event stream's bytes that fails, and then ends, at the first event
/// past the cap; `refused` is set when it does, so the reader can tell that failure from a
/// broken connection.
pub fn events(
    response: reqwest::Response,
    refused: Arc<AtomicBool>,
) -> impl Stream<Item = Result<Bytes, BodyError>> + Send + 'static {
    let mut count = EventBytes::default();
    let mut ended = false;
    response.bytes_stream().scan((), move |(), chunk| {
        let item = match chunk {
            _ if ended => None,
            Ok(chunk) if count.within(&chunk) => Some(Ok(chunk)),
            Ok(_) => {
                ended = true;
                refused.store(true, Ordering::SeqCst);
                Some(Err(BodyError::TooLarge))
            }
            Err(e) => {
                ended = true;
                Some(Err(e.into()))
            }
        };
        futures_util::future::ready(item)
    })
}

/// The JSON-RPC error answering request `id` in place of an answer past the cap.
pub fn refusal(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": TOO_LARGE}})
}

/// The id of `message` if it is a request (it has a method and an id), which an answer names.
pub fn request_id(message: &impl serde::Serialize) -> Option<Value> {
    let value = serde_json::to_value(message).ok()?;
    value.get("method")?;
    value.get("id").cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_counted_alone_across_chunks() {
        let mut count = EventBytes::default();
        let half = vec![b'x'; ANSWER_CAP / 2];
        // Two events of half the cap each, split across chunks, with CRLF line breaks.
        for chunk in [
            &b"data: "[..],
            &half,
            b"\r\n\r\n",
            b"data: ",
            &half,
            b"\n\n",
        ] {
            assert!(count.within(chunk));
        }
        // One event past the cap, however it is cut.
        assert!(count.within(b"data: "));
        assert!(count.within(&half));
        assert!(count.within(b"\n"), "one line break does not end an event");
        assert!(!count.within(&half));
    }
}
