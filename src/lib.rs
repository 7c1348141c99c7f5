//! wire-report: which tier of the interconnect ladder each data flow of a
//! GPU node lives in, with the evidence.
//!
//! # The pipeline
//! ```text
//! collect:  a captured file (or, later, a live probe)
//!             -> raw text -> evidence::detect -> evidence::parse -> typed evidence
//!             -> Bundle (observations + raw transcripts + problems) -> bundle.json
//! use:      bundle.json -> Bundle -> placement checks (and, later, models,
//!             diagnosis and the rendered site)
//! ```
//!
//! # I/O rules
//! Only [`collect`], [`fs`] and the binary touch the outside world. Parsers
//! take `&str`; every error names the file and line; every write goes
//! through [`fs::write_atomic`].
//!
//! # Adding an evidence source
//! 1. Add a variant to [`evidence::Tool`].
//! 2. Write `looks_like_*` and `parse_*` in the module of its kind under
//!    `src/evidence/`, taking `&str`, returning typed evidence or a
//!    [`evidence::ParseError`] with the line and what was expected.
//! 3. Wire both into [`evidence::detect`] and [`evidence::parse`].
//! 4. Copy real transcripts into `captures/<node>/` with a line in
//!    `captures/SOURCES.tsv`; the capture tests then snapshot them.

pub mod bundle;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod diagnosis;
pub mod diff;
pub mod evidence;
pub mod facts;
pub mod fs;
pub mod models;
pub mod placement;
pub mod render;
