//! `wire-report completions <shell>` and `wire-report man`: the shell's
//! completion script and the man page, both generated from the same clap
//! definitions as `--help` (clap_complete, clap_mangen), so they never
//! drift from the flags.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::Cli;

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report completions bash > ~/.local/share/bash-completion/completions/wire-report\n  \
wire-report completions zsh > ~/.zfunc/_wire-report\n  \
wire-report completions fish > ~/.config/fish/completions/wire-report.fish")]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Print the man page (roff) to standard output.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  wire-report man > ~/.local/share/man/man1/wire-report.1")]
pub struct ManArgs {}

fn stdout_error(e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("failed to write to standard output: {e}")
}

pub fn completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "wire-report", &mut out);
    std::io::stdout().write_all(&out).map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(_: ManArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    std::io::stdout().write_all(&out).map_err(stdout_error)?;
    Ok(ExitCode::SUCCESS)
}
