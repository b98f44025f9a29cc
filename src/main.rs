//! The `lockbench` binary: the command line over the built-in locks ([`lockbench::main_with`]
//! parses, dispatches and maps errors to exit codes: 2 for bad input).

fn main() {
    lockbench::main_with(lockbench::registry::Registry::builtin())
}
