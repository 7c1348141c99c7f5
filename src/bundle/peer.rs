//! The two-node check a node took part in, as the bundle records it.

use serde::{Deserialize, Serialize};

/// Which side this node plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Server,
    Client,
}

/// How the pair was formed and what each side ran. Example: `{ "role":
/// "client", "peer": "n1", "address": "10.0.0.1", "tool": "ib_write_bw",
/// "transcript": "ib_write_bw-pair-client.txt", "via": "slurm", "job":
/// "42" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerLink {
    pub role: Role,
    /// The other node's name, when known (Slurm's node name, or `--peer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The address the client connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub tool: String,
    /// This side's transcript, when the tool printed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// `slurm` or `--peer`.
    pub via: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Whether the run completed on this side.
    pub ok: bool,
}
