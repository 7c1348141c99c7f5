//! What happened to each live probe: part of the bundle, so it lives here
//! and not with the code that runs the probes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What happened to one probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeStatus {
    /// Ran, exited 0, and its output was read.
    Ok,
    /// The tool is not installed (not on PATH).
    Absent,
    /// Exited non-zero, or could not be started.
    Failed,
    /// Did not finish within its timeout and was killed.
    TimedOut,
    /// Not run: the same tool hung earlier in this collection.
    SkippedAfterHang,
    /// Ran, but printed nothing any parser recognises.
    Unrecognized,
}

/// One probe: a command or a sysfs read, and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    /// `nvidia-smi topo -m`, `sysfs pci`, `host memcpy sweep`...
    pub name: String,
    pub status: ProbeStatus,
    /// How long it took, in seconds.
    pub duration_s: f64,
    /// The saved transcript, relative to the bundle, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// Why it failed, or what it found, in one line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
