//! The `cosmoscope` binary: see the library's `cli` module.

fn main() -> std::process::ExitCode {
    cosmoscope::cli::run()
}
