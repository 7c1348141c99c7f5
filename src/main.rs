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
        Command::Placement {
            source,
            gpus,
            require,
            json,
        } => commands::placement(&source, &gpus, require, json),
        Command::Render {
            inputs,
            out,
            single_file,
            format,
            redact,
        } => commands::render(
            &inputs,
            out.as_deref(),
            single_file.as_deref(),
            format,
            redact,
        ),
        Command::Diff {
            old,
            new,
            json,
            html,
        } => commands::diff(&old, &new, json, html.as_deref()),
        Command::Model { model } => commands::model::run(&model),
        Command::Schema => commands::schema(),
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
