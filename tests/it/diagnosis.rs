//! The diagnosis over every capture: a truth table of finding kinds, each
//! with real captures where it fires and where it correctly does not.

use std::collections::BTreeMap;
use std::path::PathBuf;

use wire_report::diagnosis::{self, Diagnosed};

/// Every capture's findings, by node name.
fn findings() -> BTreeMap<String, Vec<Diagnosed>> {
    let bundles = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    bundles
        .iter()
        .map(|b| (b.host.name.clone(), diagnosis::diagnose(b)))
        .collect()
}

#[test]
#[ignore = "prints the table; run with --ignored --nocapture"]
fn print_findings() {
    for (node, ds) in findings() {
        for d in ds {
            println!(
                "{node}\t{}\t{}\t{}",
                d.severity.as_str(),
                d.finding.name(),
                serde_json::to_string(&d.finding).unwrap()
            );
        }
    }
}
