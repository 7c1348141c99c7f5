//! The command line: one subcommand per stage. Only the top level lives
//! here; each subcommand's flags and help live beside its code in
//! [`crate::commands`].

use clap::{Parser, Subcommand};

use crate::commands;

#[derive(Debug, Parser)]
#[command(
    name = "wire-report",
    version,
    about = "Which tier of the interconnect ladder does each data flow live in, and why is a number low?",
    long_about = "wire-report reads topology and bandwidth evidence from GPU nodes (vendor tool \
transcripts, sysfs, its own measurements) into one versioned JSON bundle per node, and \
answers questions about it: which GPU pairs have a direct link, which stage through the host, \
which placement is safe.\n\nExit codes: 0 success, 1 the check failed or nothing was parsed, \
2 bad input or usage."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print errors only: no progress, warnings or summary (the exit
    /// status and the outputs are the same).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print what each file read gave and each file written.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

impl Cli {
    /// How much the run says, from `-q` and `-v`.
    pub fn level(&self) -> crate::say::Level {
        match (self.quiet, self.verbose) {
            (true, _) => crate::say::Level::Quiet,
            (_, true) => crate::say::Level::Verbose,
            _ => crate::say::Level::Normal,
        }
    }
}

/// The subcommands; each one's flags, help and `run` live in its module
/// under [`crate::commands`].
#[derive(Debug, Subcommand)]
pub enum Command {
    Collect(commands::collect::Args),
    Render(commands::render::Args),
    Check(commands::check::Args),
    Diff(commands::diff::Args),
    Placement(commands::placement::Args),
    Model(commands::model::Args),
    Schema(commands::schema::Args),
    /// Print a shell completion script.
    Completions(commands::shell::CompletionsArgs),
    /// Print the man page.
    Man(commands::shell::ManArgs),
}
