//! wire-report: which tier of the interconnect ladder each data flow of a
//! GPU node lives in, with the evidence.
//!
//! # The pipeline
//! ```text
//! live:    collect::live (sysfs, vendor tools, copy sweeps, verbs) --.
//! files:   inputs (the one walker: bundles, node dirs, folders) -----+
//!            -> ingest::read_transcript: bytes -> evidence::detect
//!               -> the tool's parser (evidence::TOOLS) -> Reading
//!            -> Bundle::absorb -> Bundle (observations + transcripts
//!               + problems + probes) -> bundle.json (version 3, compact;
//!               atomic rename per file, one sync per run)
//! use:     inputs -> Bundle -> facts::NodeFacts -> diagnosis, models,
//!            diff, placement -> render (site, single file, markdown)
//! ```
//! Both stages stream: `collect --from` writes each node's bundle when its
//! files are read and drops it ([`inputs::ingest_each`]); `render` to a site
//! names every node first ([`inputs::node_sources`]), then loads, renders
//! and writes one node at a time, keeping only the index rows and the
//! fleet's per-node facts.
//!
//! # I/O rules
//! Only [`collect`] (live probing), [`inputs`] (reading the user's files),
//! [`fs`] (every write, atomic) and [`commands`] touch the outside world.
//! [`ingest`], the parsers, [`bundle`], the models, the diagnosis, the
//! diff and render are pure: bytes or values in, values out; none of them
//! imports `collect`. Every error names the file and line.
//!
//! # Adding an evidence source
//! 1. Add a variant to [`evidence::Tool`].
//! 2. Write `looks_like_*` and `parse_*` in the module of its kind under
//!    `src/evidence/`, taking `&str`, returning typed evidence or a
//!    [`evidence::ParseError`] with the line and what was expected. Read
//!    with plain `str` methods; where a search runs on every line of
//!    every block, the reading kit (`src/read/`: lines, byte searches,
//!    literals searched once) is the one place for byte-level code.
//! 3. Add one entry to [`evidence::TOOLS`] (its place there is its
//!    detection priority): name, detector, parser, its header line if it
//!    prints one at the top of its output and nowhere else (output pasted
//!    after another tool's is cut there), and, when live collection should
//!    run it, its command and transcript file. Nothing else lists tools.
//!
//! A tool whose facts fit an existing [`evidence::Parsed`] field (a matrix, a
//! list of figures, ports) needs nothing more. One with a new kind of fact
//! also needs its section in [`bundle::Bundle`] (`absorb` takes it in; the
//! writer and the reader name each section once: `bundle::wire`'s `Out`
//! and `bundle::read`'s `In`).
//! 4. Copy real transcripts into `captures/<node>/` with a line in
//!    `captures/SOURCES.tsv`; the capture tests then snapshot them.

/// mimalloc (see Cargo.toml for why and the figures): for every binary
/// that links this crate, tests and benches included, so the benches'
/// in-process measures allocate as `wire-report` does.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod bundle;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod diagnosis;
pub mod diff;
pub mod evidence;
pub mod facts;
pub mod fs;
pub mod ingest;
pub mod inputs;
pub mod models;
pub mod placement;
mod read;
pub mod render;
pub mod say;
