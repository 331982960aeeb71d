//! `ovir bench`: latency and throughput of repeated runs, like OpenVINO's `benchmark_app`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use super::run::{InputArgs, gather};
use super::{ExitStatus, Format, load_model, print_stdout};
use ovir::report::render_errors;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The model's .xml file.
    pub model: PathBuf,
    /// The weights file (default: the .bin beside the .xml).
    #[arg(long, value_name = "BIN")]
    pub weights: Option<PathBuf>,
    /// Inputs (default: random, from --seed; dynamic inputs need --shape).
    #[command(flatten)]
    pub input: InputArgs,
    /// Number of measured runs.
    #[arg(
        short = 'n',
        long = "iterations",
        value_name = "N",
        conflicts_with = "time"
    )]
    pub iterations: Option<u64>,
    /// Measure for this many seconds (default 5, when -n is not given).
    #[arg(short = 't', long = "time", value_name = "SECONDS")]
    pub time: Option<f64>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,
    /// Also time each step (a layer, or a group of fused layers) and print where the time goes,
    /// like benchmark_app's `-pc`: the slowest steps and the time per layer type.
    #[arg(long)]
    pub per_layer: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// What `--format json` prints. Latencies are in milliseconds, as the key names say.
#[derive(Debug, Serialize)]
struct Report {
    version: u32,
    model: String,
    threads: usize,
    warmup_runs: u64,
    iterations: u64,
    duration_s: f64,
    latency: Latency,
    throughput_per_s: f64,
    /// With --per-layer: every step in execution order.
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<Vec<Step>>,
}

#[derive(Debug, Serialize)]
struct Step {
    layer: String,
    op_type: String,
    layers: usize,
    mean_ms: f64,
}

#[derive(Debug, Serialize)]
struct Latency {
    min_ms: f64,
    median_ms: f64,
    mean_ms: f64,
    p90_ms: f64,
    max_ms: f64,
}

/// Milliseconds, to the nanosecond.
fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// The value at quantile `q` (nearest rank) of sorted samples.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

pub fn bench(args: &BenchArgs) -> ExitStatus {
    if let Some(t) = args.time
        && !(t.is_finite() && t > 0.0)
    {
        eprintln!("error: --time must be a positive number of seconds");
        return ExitStatus::Error;
    }
    if args.iterations == Some(0) {
        eprintln!("error: --iterations must be at least 1");
        return ExitStatus::Error;
    }
    if args.threads == Some(0) {
        eprintln!("error: --threads must be at least 1 (leave it out to use one thread per core)");
        return ExitStatus::Error;
    }
    let model = match load_model(&args.model, args.weights.as_deref(), args.input.max_memory) {
        Ok(m) => m,
        Err(status) => return status,
    };
    if let Err(status) = super::run::ready(&model, &args.input) {
        return status;
    }
    let random = args.input.random_inputs
        || (args.input.inputs.is_empty() && args.input.input_dir.is_none());
    let inputs: Vec<(ovir::InputKey, Arc<ovir::Tensor>)> = match gather(&model, &args.input, random)
    {
        Ok(b) => b.into_iter().map(|(k, t)| (k, Arc::new(t))).collect(),
        Err(status) => return status,
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "error: cannot start {} threads: {e}",
                args.threads.unwrap_or(0)
            );
            return ExitStatus::Error;
        }
    };
    let threads = pool.current_num_threads();
    let profile = std::sync::Mutex::new(ovir::Profile::new());
    let run_once = || match args.per_layer {
        true => model
            .run_profiled(
                inputs.iter().cloned(),
                &mut profile.lock().unwrap_or_else(|e| e.into_inner()),
            )
            .map(|_| ()),
        false => model.run_shared(inputs.iter().cloned()).map(|_| ()),
    };
    let progress = std::io::stderr().is_terminal();
    let result = pool.install(|| -> Result<(u64, Vec<Duration>, Duration), ovir::Error> {
        // Warm-up: one run, then more until 10% of the time budget or 10 runs.
        let first = Instant::now();
        run_once()?;
        let mut warmup = 1;
        let budget = Duration::from_secs_f64(args.time.unwrap_or(5.0));
        while args.iterations.is_none() && warmup < 10 && first.elapsed() < budget / 10 {
            run_once()?;
            warmup += 1;
        }
        // Only the measured runs are profiled.
        *profile.lock().unwrap_or_else(|e| e.into_inner()) = ovir::Profile::new();
        let mut samples = Vec::new();
        let start = Instant::now();
        let mut shown = Instant::now();
        loop {
            let t = Instant::now();
            run_once()?;
            samples.push(t.elapsed());
            let done = match args.iterations {
                Some(n) => samples.len() as u64 >= n,
                None => start.elapsed() >= budget,
            };
            if progress && shown.elapsed() >= Duration::from_secs(1) {
                shown = Instant::now();
                eprint!(
                    "\r{:.1} s, {} runs",
                    start.elapsed().as_secs_f64(),
                    samples.len()
                );
                let _ = std::io::stderr().flush();
            }
            if done {
                break;
            }
        }
        let total = start.elapsed();
        if progress && total >= Duration::from_secs(1) {
            eprint!("\r\x1b[K");
        }
        Ok((warmup, samples, total))
    });
    let (warmup, mut samples, total) = match result {
        Ok(r) => r,
        Err(e) => {
            eprint!("{}", render_errors(&e));
            return ExitStatus::Error;
        }
    };
    samples.sort();
    let n = samples.len() as u64;
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let report = Report {
        version: 1,
        model: args.model.display().to_string(),
        threads,
        warmup_runs: warmup,
        iterations: n,
        duration_s: total.as_secs_f64(),
        latency: Latency {
            min_ms: ms(samples[0]),
            median_ms: ms(quantile(&samples, 0.5)),
            mean_ms: ms(mean),
            p90_ms: ms(quantile(&samples, 0.9)),
            max_ms: ms(samples[samples.len() - 1]),
        },
        throughput_per_s: n as f64 / total.as_secs_f64(),
        steps: args.per_layer.then(|| {
            profile
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .steps(&model)
                .into_iter()
                .map(|s| Step {
                    layer: s.layer,
                    op_type: s.op_type,
                    layers: s.layers,
                    mean_ms: ms(s.mean),
                })
                .collect()
        }),
    };
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
        Format::Text => {
            let l = &report.latency;
            let summary = format!(
                "model: {}\nthreads: {}\nruns: {} in {:.2} s (after {} warm-up)\nlatency (ms): min {:.4}, median {:.4}, mean {:.4}, p90 {:.4}, max {:.4}\nthroughput: {:.1} runs/s\n",
                report.model,
                report.threads,
                report.iterations,
                report.duration_s,
                report.warmup_runs,
                l.min_ms,
                l.median_ms,
                l.mean_ms,
                l.p90_ms,
                l.max_ms,
                report.throughput_per_s
            );
            match &report.steps {
                Some(steps) => summary + &per_layer_text(steps, l.mean_ms),
                None => summary,
            }
        }
    };
    print_stdout(&text)
}

/// How many of the slowest steps the text report lists.
const SLOWEST: usize = 20;

/// The text form of a per-layer profile: the slowest steps, then the time per layer type
/// (a fused step counts under its types joined by `+`). Shares are of the mean run.
fn per_layer_text(steps: &[Step], run_ms: f64) -> String {
    use std::fmt::Write as _;
    let share = |t: f64| {
        if run_ms > 0.0 {
            100.0 * t / run_ms
        } else {
            0.0
        }
    };
    let mut order: Vec<&Step> = steps.iter().collect();
    order.sort_by(|a, b| b.mean_ms.total_cmp(&a.mean_ms));
    let mut out = format!(
        "\nslowest steps (mean ms per run; {} steps, {} layers):\n",
        steps.len(),
        steps.iter().map(|s| s.layers).sum::<usize>()
    );
    for s in order.iter().take(SLOWEST) {
        let _ = writeln!(
            out,
            "{:>10.4} {:>5.1}%  {}  [{}]",
            s.mean_ms,
            share(s.mean_ms),
            s.layer,
            s.op_type
        );
    }
    if order.len() > SLOWEST {
        let rest: f64 = order[SLOWEST..].iter().map(|s| s.mean_ms).sum();
        let _ = writeln!(
            out,
            "{:>10.4} {:>5.1}%  ({} more steps)",
            rest,
            share(rest),
            order.len() - SLOWEST
        );
    }
    let mut by_type: Vec<(&str, f64, usize)> = Vec::new();
    for s in steps {
        match by_type.iter_mut().find(|(t, _, _)| *t == s.op_type) {
            Some(e) => {
                e.1 += s.mean_ms;
                e.2 += 1;
            }
            None => by_type.push((&s.op_type, s.mean_ms, 1)),
        }
    }
    by_type.sort_by(|a, b| b.1.total_cmp(&a.1));
    out.push_str("\nby layer type (mean ms per run):\n");
    for (t, ms, n) in by_type {
        let _ = writeln!(out, "{ms:>10.4} {:>5.1}%  {t} ×{n}", share(ms));
    }
    out
}
