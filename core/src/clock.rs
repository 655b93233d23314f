//! Time comes from a [`Clock`] given at construction, so tests control it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A wait that resolves once the clock reaches an instant.
pub type Until = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Milliseconds since the Unix epoch.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;

    /// Resolves once `now_ms()` reaches `at_ms`: what every wait of the core's own (an undo
    /// window, an unanswered ask) waits on, so a test clock ends it by being moved, not by
    /// time passing. The system clock sleeps.
    fn until(&self, at_ms: i64) -> Until {
        let wait = u64::try_from(at_ms.saturating_sub(self.now_ms())).unwrap_or(0);
        Box::pin(tokio::time::sleep(Duration::from_millis(wait)))
    }
}

/// The system's wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}
