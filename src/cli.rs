//! The command line: a thin layer over the library. Errors print once, with their path;
//! an error on one profile is reported and only changes the exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{Config, INIT_TOML};
use crate::build::{self, Options, Summary};
use crate::error::CommandError;

/// Turns a directory of profiles into a static archive of interactive flame graphs.
#[derive(Parser, Debug)]
#[command(name = "flamesite", version, about)]
pub struct Cli {
    /// The site configuration [default: ./site.toml]
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the site (the default): read site.toml, write the output folder.
    Build(BuildArgs),
    /// Build, serve the site on 127.0.0.1 and rebuild when profiles or site.toml change.
    Serve {
        #[command(flatten)]
        build: BuildArgs,
        /// Port to listen on.
        #[arg(long, default_value_t = 8000)]
        port: u16,
    },
    /// Validate the configuration and every profile; write nothing. Prints, per graph, the
    /// format the profile was read as, the graph's total and unit, and its frames.
    Check {
        #[command(flatten)]
        build: BuildArgs,
        /// Print the input formats flamesite reads, in the order they are tried, and stop.
        #[arg(long)]
        formats: bool,
    },
    /// Write a commented site.toml and the profile folder.
    Init {
        /// Folder of the new site.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Compare two profile files (any format): print the functions whose share changed most,
    /// check budgets (exit 1 when one is exceeded), and with -o write their differential flame
    /// graph page to a folder any static host serves.
    Diff {
        /// The earlier profile.
        before: PathBuf,
        /// The later profile.
        after: PathBuf,
        /// Also write the comparison page to this folder (replaced whole; never a folder
        /// flamesite did not write).
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
        /// How the report is printed on standard output.
        #[arg(long, value_enum, default_value_t = crate::derive::report::Format::Text)]
        format: crate::derive::report::Format,
        /// Exit 1 when a function's self share grew by more than this many percentage points
        /// (such as 2pp); site.toml's [[budget]] tables add limits per function.
        #[arg(long, value_name = "POINTS", value_parser = crate::config::parse_points)]
        max_increase: Option<f64>,
        /// Functions listed per graph, for the self and for the total share.
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
    },
    /// Print a built graph as folded stacks, read from its chunk files.
    Fold {
        /// A graph folder (with manifest.json), or a profile page folder with one graph.
        graph_dir: PathBuf,
    },
}

#[derive(clap::Args, Debug, Default, Clone)]
struct BuildArgs {
    /// Folder of profiles, or a bucket: s3://, gs://, az:// (overrides `input` in site.toml).
    #[arg(long, value_name = "DIR")]
    input: Option<PathBuf>,
    /// Output folder, or a bucket: s3://, gs://, az:// (overrides `output` in site.toml).
    #[arg(long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Exit 0 even when some profiles were skipped.
    #[arg(long)]
    keep_going: bool,
    /// Worker threads [default: one per core].
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// Decode every profile again instead of reusing unchanged ones from the build cache.
    #[arg(long)]
    no_cache: bool,
    /// Only decode part I of N of the profiles (split by a hash of their folder) into the
    /// shared store (the bucket's record, or the cache folder), for a build spread over N
    /// machines; a plain build afterwards publishes. Example: --shard 2/3.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
}

fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?}: give the part and the number of parts, as 2/3 (from 1/N to N/N)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Runs the command line and returns the process's exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            crate::say!("error: {}", printable(&e.to_string()));
            ExitCode::from(e.exit_status())
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, CommandError> {
    let command = cli.command.unwrap_or(Command::Build(BuildArgs::default()));
    match command {
        Command::Build(args) if args.shard.is_some() => {
            let config = load_config(cli.config.as_deref(), &args).map_err(CommandError::Usage)?;
            let (i, n) = args.shard.expect("a shard");
            if args.no_cache {
                return Err(CommandError::Usage("--shard stores what it decodes in the build cache (or a bucket's record): it cannot be used with --no-cache".into()));
            }
            let s = build::shard::shard(&config, args.threads, i, n)?;
            let mut err = std::io::stderr().lock();
            for e in &s.skipped {
                let _ = writeln!(err, "error: {}", printable(&format!("{}: {}", config.input.join(&e.path).display(), e.reason)));
            }
            let _ = writeln!(
                err,
                "shard {i}/{n}: {} of {} profiles; {} decoded, {} already stored; stored in {} (a build without --shard publishes)",
                s.part,
                s.all,
                s.decoded,
                s.stored,
                printable(&s.store)
            );
            Ok(if s.skipped.is_empty() || config.keep_going || args.keep_going { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Build(args) => {
            let config = load_config(cli.config.as_deref(), &args).map_err(CommandError::Usage)?;
            let options = Options { threads: args.threads, progress: true, dry_run: false, cache: !args.no_cache };
            let summary = build::build(&config, &options)?;
            Ok(report(&summary, &config, false))
        }
        Command::Check { formats: true, .. } => {
            let mut out = std::io::stdout().lock();
            for (name, description) in crate::ingest::decode::formats() {
                let _ = writeln!(out, "{name:<12} {description}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { build: args, .. } => {
            let config = load_config(cli.config.as_deref(), &args).map_err(CommandError::Usage)?;
            let options = Options { threads: args.threads, progress: true, dry_run: true, cache: false };
            // Nothing is written: the data files need not be packed.
            crate::store::gz::skip_packing();
            let summary = build::build(&config, &options)?;
            let mut out = std::io::stdout().lock();
            for p in &summary.built {
                for g in &p.graphs {
                    let _ = writeln!(out, "{}: {}, {} {} {}, {} frames", p.source, p.format, g.name, crate::units::exact(g.total, g.decimals), g.unit, g.frames);
                }
            }
            Ok(report(&summary, &config, true))
        }
        Command::Serve { build, port } => {
            let config = load_config(cli.config.as_deref(), &build).map_err(CommandError::Usage)?;
            if build.shard.is_some() {
                return Err(CommandError::Usage("--shard is for `flamesite build` on one of several machines, not for serve".into()));
            }
            if crate::config::is_url(&config.input) {
                return Err(CommandError::Usage(format!("serve watches a local folder of profiles, and the input is {}: give a folder with --input", config.input.display())));
            }
            if crate::config::is_url(&config.output) {
                return Err(CommandError::Usage(format!(
                    "serve previews a site in a local folder, and the output is {}: give a folder with --output (a bucket is served by its host)",
                    config.output.display()
                )));
            }
            let options = Options { threads: build.threads, progress: true, dry_run: false, cache: !build.no_cache };
            let summary = build::build(&config, &options)?;
            // `serve` goes on whatever the build skipped: its exit status is not the build's.
            let _ = report(&summary, &config, false);
            let mut watched = vec![config.input.clone()];
            if let Some(path) = config_path(cli.config.as_deref()) {
                watched.push(path);
            }
            if let Some(theme) = &config.theme_dir {
                // Watched even before they exist, so that a first override is picked up.
                watched.extend(["templates", "static"].map(|d| theme.join(d)));
            }
            // The site's static files, copied to the output's root (also before it exists).
            watched.extend(config.static_dir.clone());
            let flag = cli.config.clone();
            let output = config.output.clone();
            let rebuild = move || {
                crate::say!("change detected, rebuilding");
                // site.toml may be what changed; the output folder stays the one being served.
                let config = match load_config(flag.as_deref(), &build) {
                    Ok(c) if c.output == output => c,
                    Ok(_) => {
                        crate::say!("error: the output folder changed in site.toml; restart `flamesite serve` to serve the new one");
                        return false;
                    }
                    Err(e) => {
                        crate::say!("error: {}", printable(&e.to_string()));
                        return false;
                    }
                };
                match build::build(&config, &Options { progress: false, ..options.clone() }) {
                    Ok(summary) => {
                        let _ = report(&summary, &config, false);
                        true
                    }
                    Err(e) => {
                        crate::say!("error: {}", printable(&e.to_string()));
                        false
                    }
                }
            };
            crate::serve::serve(&config.output, port, watched, rebuild)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Init { dir } => {
            init(&dir)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff { before, after, output, format, max_increase, top } => {
            use crate::derive::report;
            // Chunking, limits, palette, theme and budgets from site.toml when there is one.
            let config = match config_path(cli.config.as_deref()) {
                Some(path) => Config::load(&path)?,
                None => Config::default(),
            };
            let made = crate::diff::standalone(&config, &before, &after, output.as_deref())?;
            for g in &made.unmatched {
                crate::say!("warning: graph {g:?} is in only one of the two profiles; not compared");
            }
            for b in &config.budgets {
                if let Some(g) = b.graph.as_ref().filter(|g| !made.graphs.contains(g)) {
                    crate::say!("warning: the budget for {:?} names graph {g:?}, which was not compared", b.function.as_str());
                }
            }
            let mut graphs = Vec::new();
            let mut budgets = Vec::new();
            let first = report::first_of_their_samples(&made.samples.iter().map(|(_, d)| d.as_deref()).collect::<Vec<_>>());
            for (((name, unit, table), (samples, _)), first) in made.tables.iter().zip(&made.samples).zip(first) {
                graphs.push(report::graph_report(name, unit, table, top, *samples));
                budgets.extend(report::check_budgets(name, table, max_increase, &config.budgets, *samples, !first));
            }
            let exceeded = budgets.iter().any(|b| b.exceeded);
            let report = report::Report { format: "flamesite-diff", before: before.display().to_string(), after: after.display().to_string(), graphs, budgets, exceeded };
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match out.write_all(report.render(format).as_bytes()).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(CommandError::Stdout(e)),
                _ => {}
            }
            let graphs = format!("{} graph{}", made.graphs.len(), if made.graphs.len() == 1 { "" } else { "s" });
            match &output {
                Some(dir) => crate::say!("compared {graphs}; wrote {}/index.html", dir.display()),
                None => crate::say!("compared {graphs}"),
            }
            if exceeded {
                crate::say!("a budget is exceeded: exit status 1");
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Fold { graph_dir } => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            crate::store::fold::fold(&graph_dir, &mut out)?;
            match out.flush() {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CommandError::Stdout(e)),
                _ => Ok(ExitCode::SUCCESS),
            }
        }
    }
}

/// The site.toml to read: `--config`, else `./site.toml` when it exists.
fn config_path(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) => Some(p.to_path_buf()),
        None => Some(PathBuf::from("site.toml")).filter(|p| p.is_file()),
    }
}

fn load_config(flag: Option<&Path>, args: &BuildArgs) -> Result<Config, String> {
    if let Some(j) = args.threads {
        // A thread is a stack and a share of every buffer: `-j 100000` ran for minutes
        // starting them.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let max = (64 * cores).min(4096);
        if j > max {
            return Err(format!("-j {j}: more worker threads than this machine can use ({cores} core{}); give at most {max}", if cores == 1 { "" } else { "s" }));
        }
    }
    let mut config = match config_path(flag) {
        Some(path) => Config::load(&path)?,
        None if args.input.is_some() && args.output.is_some() => Config::default(),
        None if args.input.is_some() => Config { output: PathBuf::from("public"), ..Config::default() },
        None => {
            return Err("no site.toml in this folder: run `flamesite init`, pass --config FILE, or give --input DIR and --output DIR".into())
        }
    };
    if let Some(i) = &args.input {
        config.input = i.clone();
    }
    if let Some(o) = &args.output {
        config.output = o.clone();
    }
    config.keep_going |= args.keep_going;
    Ok(config)
}

/// `text` as one line a terminal shows as it is: control characters (a newline or an escape
/// sequence in a file name, which could forge an `error:` line or colour the terminal) are
/// written as `\n`, `\x1b`, `\u{85}`.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Prints the problems and the summary; returns the exit status.
fn report(summary: &Summary, config: &Config, check: bool) -> ExitCode {
    let mut err = std::io::stderr().lock();
    for w in &summary.warnings {
        // A warning about an object names it by its URL; one about a file, by its path.
        let path = if crate::config::is_url(std::path::Path::new(&w.path)) { w.path.clone() } else { config.input.join(&w.path).display().to_string() };
        let _ = writeln!(err, "warning: {}", printable(&format!("{path}: {}", w.message)));
    }
    for e in &summary.skipped {
        let _ = writeln!(err, "error: {}", printable(&format!("{}: {}", config.input.join(&e.path).display(), e.reason)));
    }
    let graphs = summary.graphs;
    let verb = if check { "checked" } else { "built" };
    let _ = write!(
        err,
        "{verb} {} profile{} ({graphs} graph{}",
        summary.runs,
        if summary.runs == 1 { "" } else { "s" },
        if graphs == 1 { "" } else { "s" },
    );
    if !check {
        let _ = write!(
            err,
            "; {} decoded, {} from the cache, {} unchanged",
            summary.decoded, summary.cached, summary.unchanged
        );
    }
    let _ = write!(err, ") in {:.2} s", summary.elapsed.as_secs_f64());
    if !check && summary.comparisons > 0 {
        let _ = write!(
            err,
            "; {} comparison{} ({} made in {:.2} s, the others kept)",
            summary.comparisons,
            if summary.comparisons == 1 { "" } else { "s" },
            summary.comparisons_made,
            summary.derive_elapsed.as_secs_f64()
        );
    }
    if !summary.skipped.is_empty() {
        let _ = write!(err, "; skipped {} (see errors above)", summary.skipped.len());
    }
    if summary.nothing_changed {
        let _ = write!(err, "; nothing changed, {} left as it was", config.output.display());
    } else if !check {
        let _ = write!(
            err,
            "; {} page{} rendered, {} kept; wrote {}: {} ({} new)",
            summary.pages_rendered,
            if summary.pages_rendered == 1 { "" } else { "s" },
            summary.pages_kept,
            config.output.display(),
            megabytes(summary.published_bytes),
            megabytes(summary.new_bytes),
        );
        if let Some(kept) = summary.kept_bytes {
            let _ = write!(err, ", {} kept beside it in {}", megabytes(kept), config.cache_folder().display());
        }
    }
    let _ = writeln!(err);
    if summary.skipped.is_empty() || config.keep_going {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A number of bytes as people read them: `23.8 MB`, `412 kB`, `96 B` (powers of 1000, as
/// `du --si` and the benchmarks give them).
fn megabytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.0} kB", n as f64 / 1e3),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

fn init(dir: &Path) -> Result<(), String> {
    let toml = dir.join("site.toml");
    if toml.exists() {
        return Err(format!("{} already exists; not overwritten", toml.display()));
    }
    std::fs::create_dir_all(dir.join("profiles")).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(&toml, INIT_TOML).map_err(|e| format!("{}: {e}", toml.display()))?;
    crate::say!(
        "wrote {} and {}/; put profiles there and run `flamesite build`",
        toml.display(),
        dir.join("profiles").display()
    );
    Ok(())
}
