//! Prometheus's text exposition, written by hand: requests by route and status, and their
//! durations as a histogram by route.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the duration histogram, in seconds.
const BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    durations: Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    pub fn observe(&self, route: &str, status: u16, took: Duration) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((route.to_owned(), status))
            .or_default() += 1;
        let mut durations = self.durations.lock().unwrap_or_else(|p| p.into_inner());
        let h = durations.entry(route.to_owned()).or_default();
        let secs = took.as_secs_f64();
        for (bound, count) in BUCKETS.iter().zip(h.counts.iter_mut()) {
            if secs <= *bound {
                *count += 1;
            }
        }
        h.count += 1;
        h.sum += secs;
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP harness_cloud_requests_total Requests answered, by route and status.\n",
        );
        out.push_str("# TYPE harness_cloud_requests_total counter\n");
        for ((route, status), n) in self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "harness_cloud_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP harness_cloud_request_duration_seconds Time to answer a request, by route.\n",
        );
        out.push_str("# TYPE harness_cloud_request_duration_seconds histogram\n");
        for (route, h) in self
            .durations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            for (bound, count) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(
                    out,
                    "harness_cloud_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "harness_cloud_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "harness_cloud_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "harness_cloud_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        out
    }
}
