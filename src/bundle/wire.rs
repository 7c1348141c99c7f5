//! Writing a bundle: version 3's compact form ([`super::read`] reads all
//! three versions).
//!
//! The wire form differs from the in-memory [`Bundle`] in three ways:
//! - `files` lists every transcript path a source names, once; a source is
//!   then `[file_index, line]` instead of `{ "file": "...", "line": n }`.
//! - `measurements` is `{ "series": [...], "cells": [...] }`: what cells of
//!   one test share (tool, file, kind, test, direction, statistic, p2p,
//!   buffers, copy engine, iteration counts, queue depth, QPs, verification,
//!   and the seven questions' answers as facts, each left out when the
//!   transcript does not give it) is a series, stored once; a cell holds
//!   its numbers, its line and `series`, the index of its series.
//! - The JSON is compact (no indentation).
//!
//! Writing borrows: the series and cells are views of the bundle's
//! measurements (`series`), every other part is the bundle's own, with
//! serde's derived `Serialize`. One serializer ([`compact`]) writes
//! serde_json's exact bytes, faster, and keeps the file table: a source
//! hands it its path, which becomes an index (the first time, a new
//! entry). serde_json (its writer, or `to_value`) gets those same bytes
//! from [`Bundle`]'s `Serialize`, as a `RawValue`.

use serde::{Serialize, Serializer};

use super::{Bundle, Generator, Host, PeerLink, Probe, Problem, System, Transcript};
use crate::evidence::Source;
use crate::evidence::counters::CounterDump;
use crate::evidence::ethtool::InterfaceStats;
use crate::evidence::lsmod::ModuleListing;
use crate::evidence::nccl::NcclInit;
use crate::evidence::numa::NumaTopology;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;

pub mod compact;
mod series;

/// A path written as its index in the file table (serde_json writes the
/// path).
#[derive(Debug, PartialEq, Eq, Hash)]
struct File<'a>(&'a Text);

impl Serialize for File<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(compact::FILE, self.0.as_str())
    }
}

/// `[file_index, line]` in a bundle; `{file, line}` elsewhere.
impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct(compact::SOURCE, 2)?;
        st.serialize_field("file", &File(&self.file))?;
        st.serialize_field("line", &self.line)?;
        st.end()
    }
}

/// Where the file table goes ([`compact::FILES`]).
pub struct FilesMark;

impl Serialize for FilesMark {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(compact::FILES, &())
    }
}

/// Version 3 as written: [`Bundle`]'s fields in its order, `files` after
/// `host`, `measurements` as series.
#[derive(Serialize)]
struct Out<'a> {
    schema_version: u32,
    generator: &'a Generator,
    host: &'a Host,
    files: FilesMark,
    topology: &'a Topology,
    measurements: series::MeasurementsOut<'a>,
    rdma: &'a [RdmaDevice],
    pcie: &'a [PcieLink],
    #[serde(skip_serializing_if = "<[InterfaceStats]>::is_empty")]
    interfaces: &'a [InterfaceStats],
    #[serde(skip_serializing_if = "<[ModuleListing]>::is_empty")]
    modules: &'a [ModuleListing],
    #[serde(skip_serializing_if = "<[NcclInit]>::is_empty")]
    nccl: &'a [NcclInit],
    #[serde(skip_serializing_if = "<[NumaTopology]>::is_empty")]
    numa: &'a [NumaTopology],
    #[serde(skip_serializing_if = "<[CounterDump]>::is_empty")]
    counters: &'a [CounterDump],
    transcripts: &'a [Transcript],
    #[serde(skip_serializing_if = "<[Probe]>::is_empty")]
    probes: &'a [Probe],
    #[serde(skip_serializing_if = "Option::is_none")]
    system: &'a Option<System>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: &'a Option<PeerLink>,
    problems: &'a [Problem],
}

impl Bundle {
    /// The bundle as written.
    fn out(&self) -> Out<'_> {
        let Bundle {
            schema_version,
            generator,
            host,
            topology,
            measurements,
            rdma,
            pcie,
            interfaces,
            modules,
            nccl,
            numa,
            counters,
            transcripts,
            probes,
            system,
            peer,
            problems,
        } = self;
        Out {
            schema_version: *schema_version,
            generator,
            host,
            files: FilesMark,
            topology,
            measurements: series::MeasurementsOut::of(measurements),
            rdma,
            pcie,
            interfaces,
            modules,
            nccl,
            numa,
            counters,
            transcripts,
            probes,
            system,
            peer,
            problems,
        }
    }
}

impl Serialize for Bundle {
    /// Always version 3's form for serde_json: `serde_json::to_vec`
    /// of a bundle is a bundle file.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut out = Vec::new();
        compact::write(&self.out(), &mut out).map_err(S::Error::custom)?;
        let text = String::from_utf8(out).map_err(S::Error::custom)?;
        serde_json::value::RawValue::from_string(text)
            .map_err(S::Error::custom)?
            .serialize(s)
    }
}

/// Writes `b` as version 3, compact, with a trailing newline.
pub fn write(b: &Bundle) -> Vec<u8> {
    let mut v = Vec::new();
    write_into(b, &mut v);
    v
}

/// [`write`] into `out`, replacing what it held: a caller writing many
/// bundles reuses one buffer instead of growing a new one each time.
pub fn write_into(b: &Bundle, out: &mut Vec<u8>) {
    out.clear();
    compact::write(&b.out(), out).expect("a bundle has no map key that is not a string");
    out.push(b'\n');
}
