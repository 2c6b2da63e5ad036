//! The command line through the real binary (`CARGO_BIN_EXE_cosmoscope`) on temporary data
//! directories, with stdin, stdout and stderr not terminals.

mod batch;
mod commands;
mod contract_gaps;
mod damage;
mod full_disk;
mod read_only;
mod samples;
mod scripts;
mod workbench;
