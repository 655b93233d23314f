//! The shell's alarm (DESIGN.md §7): the core tells it the scheduler's next wake time, exact
//! while the user grants the exact-alarm permission.

use super::Scheduler;
use crate::consent::PermissionState;
use crate::lock;

/// The shell's alarm: the core tells it when to wake next (DESIGN.md §7). Exact when the user
/// granted the exact-alarm permission, otherwise inexact work the system may delay.
pub trait WakeScheduler: Send + Sync {
    /// Wake the app at `at_ms` (possibly already past: then at once) and call `run_due`.
    fn arm(&self, at_ms: i64, exact: bool) -> Result<(), String>;
    /// Nothing is scheduled.
    fn cancel(&self) -> Result<(), String>;
}

/// A shell without alarms (the CLI, tests): `harness tick` runs what is due.
pub struct NoWake;

impl WakeScheduler for NoWake {
    fn arm(&self, _at_ms: i64, _exact: bool) -> Result<(), String> {
        Ok(())
    }
    fn cancel(&self) -> Result<(), String> {
        Ok(())
    }
}

impl Scheduler {
    /// The earliest due instant of an active job not running now: when the shell should wake.
    pub fn next_wake_ms(&self) -> Option<i64> {
        lock(&self.jobs).next_wake()
    }

    /// The ids of the jobs `run_due(now_ms)` would run.
    pub fn due_jobs(&self, now_ms: i64) -> Vec<i64> {
        lock(&self.jobs).due(now_ms)
    }

    /// Tells the shell the next wake time when it changed: exact when the exact-alarm permission
    /// is granted (DESIGN.md §7). Called after every change to the jobs; the shell calls it after
    /// reporting the exact-alarm permission. Never called holding a core lock (STYLE.md §4).
    pub fn rearm_wake(&self) {
        let next = self.next_wake_ms();
        let exact = self.consent.read(|c| c.exact_alarm) == PermissionState::Granted;
        let want = next.map(|at| (at, exact));
        {
            let mut armed = lock(&self.armed);
            if *armed == Some(want) {
                return;
            }
            *armed = Some(want);
        }
        let result = match want {
            Some((at, exact)) => self.wake.arm(at, exact),
            None => self.wake.cancel(),
        };
        if let Err(e) = result {
            eprintln!("harness: the wake-up alarm could not be set: {e}");
            // Unknown again, so the next change tries once more.
            *lock(&self.armed) = None;
        }
    }
}
