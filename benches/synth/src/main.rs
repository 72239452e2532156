//! `flamesite-synth`: writes a synthetic folded profile (for benchmarks and examples), with
//! the flags that `flamesite synth` had before the generator left the product.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use flamesite_synth::{generate, Size, SynthParams};

/// Writes a deterministic synthetic folded profile.
#[derive(Parser, Debug)]
#[command(name = "flamesite-synth", version, about)]
struct Args {
    /// small, large or huge.
    #[arg(long, default_value = "small")]
    size: String,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of stacks, instead of the preset's.
    #[arg(long)]
    stacks: Option<usize>,
    /// Output file [default: standard output]; a name ending in .gz is gzipped.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let size = Size::parse(&args.size).ok_or_else(|| format!("--size {:?}: expected small, large or huge", args.size))?;
    let mut params = SynthParams::preset(size, args.seed);
    if let Some(n) = args.stacks {
        params.stacks = n;
    }
    let io = |e: std::io::Error| e.to_string();
    match &args.output {
        None => generate(&params, &mut std::io::stdout().lock()).map_err(io),
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
            if path.extension().is_some_and(|e| e == "gz") {
                let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
                generate(&params, &mut gz).map_err(io)?;
                gz.finish().map_err(io)?;
                Ok(())
            } else {
                generate(&params, &mut std::io::BufWriter::new(file)).map_err(io)
            }
        }
    }
}
