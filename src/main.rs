//! Parse the command line, run one stage, print the error chain on one
//! line, pick the exit code.

use std::process::ExitCode;

use clap::Parser;
use wire_report::cli::{Cli, Command};
use wire_report::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Collect { from, out, quiet } => commands::collect_from(&from, &out, quiet),
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
        } => commands::render(&inputs, &out, single_file.as_deref()),
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
