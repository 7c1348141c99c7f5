//! Live collection: the only code that runs commands, reads sysfs and
//! touches devices. What it reads goes through the same
//! [`read_transcript`](crate::ingest::read_transcript) as captured files;
//! loading files from disk is [`inputs`](crate::inputs)' job.

pub mod cuda;
pub mod gpu;
#[cfg(feature = "rocm")]
pub mod hip;
pub mod live;
pub mod pair;
pub mod probes;
pub mod sweep;
pub mod sysfs;
#[cfg(feature = "rdma")]
pub mod verbs;
