//! Parse the command line, run one stage, print the error chain on one
//! line, pick the exit code.

use std::process::ExitCode;

use clap::Parser;
use wire_report::cli::{Cli, Command};
use wire_report::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    wire_report::say::set_level(cli.level());
    let result = match cli.command {
        Command::Collect(args) => commands::collect::run(args),
        Command::Render(args) => commands::render::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Placement(args) => commands::placement::run(args),
        Command::Model(args) => commands::model::run(args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Completions(args) => commands::shell::completions(args),
        Command::Man(args) => commands::shell::man(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(ToString::to_string).collect();
            wire_report::say::line(format_args!("error: {}", chain.join(": ")));
            ExitCode::from(2)
        }
    }
}
