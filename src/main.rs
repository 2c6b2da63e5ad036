//! The `cosmoscope` binary: see the library's `cli` module.

// mimalloc: the store's write path allocates per item (JSON values, keys, records); with
// glibc malloc that was a quarter of import time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cosmoscope::cli::run()
}
