//! The crawl's figures, in one home: the snapshot they fold into ([`stats::Stats`],
//! `stats.json`), the width gauges the shards publish, the operator's host board, the
//! monitor that shows progress and publishes the snapshot, and the Prometheus and
//! status-page listener that serves it (`docs/monitoring.md`).
//!
//! Every figure an operator reads comes from here, so adding one means touching this
//! folder (and `docs/monitoring.md`), nothing else of the engine but the counter it
//! reads.

pub(crate) mod board;
pub mod metrics;
pub(crate) mod monitor;
pub(crate) mod stats;
pub(crate) mod width;
