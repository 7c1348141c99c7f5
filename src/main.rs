//! Parse the command line, run one stage, print the error chain on one
//! line, pick the exit code.

use std::process::ExitCode;

use clap::Parser;
use wire_report::cli::{Cli, Command};
use wire_report::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Collect {
            from,
            out,
            quiet,
            redact,
            sysfs_root,
            tool_timeout,
            sizes,
            budget,
            no_sweep,
            benchmarks,
            benchmark_budget,
            peer,
            rdma_device,
            peer_port,
        } => {
            if from.is_empty() {
                commands::collect_live(&commands::LiveArgs {
                    out,
                    quiet,
                    redact,
                    sysfs_root,
                    tool_timeout,
                    sizes,
                    budget,
                    no_sweep,
                    benchmarks: (benchmarks || peer.is_some()).then_some(benchmark_budget),
                    peer,
                    rdma_device,
                    peer_port,
                })
            } else {
                match out {
                    Some(out) => commands::collect_from(&from, &out, quiet),
                    None => commands::usage(
                        "collect --from needs --out (a .json file, `-`, or a directory)",
                    ),
                }
            }
        }
        Command::Render(args) => commands::render::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Placement(args) => commands::placement::run(args),
        Command::Model(args) => commands::model::run(args),
        Command::Schema(args) => commands::schema::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(ToString::to_string).collect();
            eprintln!("error: {}", chain.join(": "));
            ExitCode::from(2)
        }
    }
}
