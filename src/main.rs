use std::process::ExitCode;

fn main() -> ExitCode {
    flamesite::cli::main()
}
