//! The `best` planner on MiniMalloc's 11 "challenging" instances (Moffitt,
//! ASPLOS 2023; capacity 1 MiB each) and on generated instances of 500 and
//! 5,000 buffers.
//!
//! `cargo bench -p microarena-core --bench minimalloc`
//!
//! * Instances: `$MICROARENA_CORPUS/bench/minimalloc-challenging/*.csv`
//!   (`MICROARENA_CORPUS` defaults to `../shared` beside the workspace; a
//!   relative value is taken from the workspace root). Columns
//!   `id,lower,upper,size`; lifetimes are half-open `[lower, upper)` and become
//!   inclusive scopes `[lower, upper-1]` in the instance's own time units, so
//!   lifetime widths (and areas) are MiniMalloc's, which its static orders
//!   rank by. `MICROARENA_MM_COMPRESS=1` compresses times to ranks instead
//!   (`[rank(lower), rank(upper)-1]`): same conflicts, but the widths become
//!   counts of event points. MiniMalloc's width-based static orders then
//!   degrade (MiniMalloc itself solves 6/11 so within 60 s); `best` adds two
//!   width-free orders and canonical lifts, see `plan::best`.
//! * `MICROARENA_MM_ONLY=D,E` runs only those instances (no generated ones).
//! * `MICROARENA_MM_BIN=path/to/minimalloc` (set by
//!   `scripts/bench-minimalloc.sh` from the MiniMalloc CLI it is given) runs
//!   MiniMalloc's CLI and `best` on the same instances, raw then
//!   rank-compressed (written to a temporary CSV for MiniMalloc), and prints
//!   both solve times, their ratio (best / MiniMalloc) and both heads.
//!   MiniMalloc gets `--timeout=$MICROARENA_MM_TIMEOUT` (default 60s).
//! * Sizes are used raw with alignment 1 (they happen to be multiples of 16).
//! * `MICROARENA_BEST_BUDGET` overrides the node budget (default 10,000,000).
//!   The search stops early once the head is within the 1 MiB capacity
//!   ("solved", as MiniMalloc's decision problem is posed) unless
//!   `MICROARENA_BEST_MINIMIZE=1`, which keeps minimizing to the budget.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use microarena_core::plan::best::{self, BestOptions};
use microarena_core::plan::{PlanBuffer, greedy, lower_bound};

const CAPACITY: u64 = 1_048_576;

struct Row {
    name: String,
    buffers: usize,
    greedy: u64,
    lower: u64,
    head: u64,
    proven: bool,
    nodes: u64,
    seconds: f64,
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; nothing else is understood.
    let budget = std::env::var("MICROARENA_BEST_BUDGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000u64);
    let minimize = std::env::var("MICROARENA_BEST_MINIMIZE").is_ok_and(|v| v == "1");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (corpus, explicit) = match std::env::var_os("MICROARENA_CORPUS") {
        Some(v) => {
            let p = PathBuf::from(v);
            (if p.is_absolute() { p } else { root.join(p) }, true)
        }
        None => (root.join("../shared"), false),
    };
    let dir = corpus.join("bench/minimalloc-challenging");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "csv"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    // `MICROARENA_MM_ONLY=D,E` runs only those instances (and no generated ones).
    let only: Option<Vec<String>> = std::env::var("MICROARENA_MM_ONLY")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());

    let compress = std::env::var("MICROARENA_MM_COMPRESS").is_ok_and(|v| v == "1");
    if let Some(bin) = std::env::var_os("MICROARENA_MM_BIN") {
        files.retain(|f| only.as_ref().is_none_or(|o| o.contains(&instance_name(f))));
        return side_by_side(&files, Path::new(&bin), budget);
    }

    let mut rows = Vec::new();
    if files.is_empty() {
        if explicit {
            eprintln!(
                "error: MICROARENA_CORPUS is set but {} holds no *.csv instances",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
        println!(
            "minimalloc-challenging: skipped ({} not found)",
            dir.display()
        );
    } else {
        if explicit && files.len() != 11 {
            eprintln!(
                "error: expected 11 instances in {}, found {}",
                dir.display(),
                files.len()
            );
            return ExitCode::FAILURE;
        }
        let good_enough = (!minimize).then_some(CAPACITY);
        for f in &files {
            let name = instance_name(f);
            if only.as_ref().is_some_and(|o| !o.contains(&name)) {
                continue;
            }
            let buffers = match read_csv(f, compress) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("error: {}: {e}", f.display());
                    return ExitCode::FAILURE;
                }
            };
            rows.push(run(&name, &buffers, budget, good_enough));
        }
    }
    for n in [500usize, 5_000] {
        if only.is_some() {
            break;
        }
        let buffers = generate(n, 0x5eed_0000 + n as u64);
        rows.push(run(&format!("gen-{n}"), &buffers, budget, None));
    }

    println!();
    println!(
        "budget {budget} nodes, alignment 1, stop at capacity: {}",
        !minimize
    );
    println!(
        "{:<8} {:>6} {:>9} {:>9} {:>9} {:>6} {:>7} {:>10} {:>8}",
        "instance", "bufs", "lower", "greedy", "best", "<=1MiB", "proven", "nodes", "seconds"
    );
    let mut solved = 0;
    let mut challenge = 0;
    for r in &rows {
        let within = r.head <= CAPACITY;
        if !r.name.starts_with("gen-") {
            challenge += 1;
            solved += usize::from(within);
        }
        println!(
            "{:<8} {:>6} {:>9} {:>9} {:>9} {:>6} {:>7} {:>10} {:>8.2}",
            r.name,
            r.buffers,
            r.lower,
            r.greedy,
            r.head,
            if within { "yes" } else { "no" },
            if r.proven { "yes" } else { "no" },
            r.nodes,
            r.seconds
        );
    }
    if challenge > 0 {
        println!("solved within 1 MiB: {solved}/{challenge}");
    }
    ExitCode::SUCCESS
}

/// `A` for `A.1048576.csv`.
fn instance_name(f: &Path) -> String {
    f.file_stem().map_or_else(String::new, |s| {
        s.to_string_lossy()
            .split('.')
            .next()
            .unwrap_or("")
            .to_owned()
    })
}

/// What one MiniMalloc run reported: its solve time and, when it found a
/// placement within the capacity, the placement's height.
struct MmRun {
    seconds: f64,
    head: Option<u64>,
}

/// Runs the MiniMalloc CLI on `csv` with the 1 MiB capacity.
fn run_minimalloc(bin: &Path, csv: &Path, out: &Path, timeout: &str) -> Result<MmRun, String> {
    let o = std::process::Command::new(bin)
        .arg(format!("--capacity={CAPACITY}"))
        .arg(format!("--input={}", csv.display()))
        .arg(format!("--output={}", out.display()))
        .arg(format!("--timeout={timeout}"))
        .arg("--validate")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let text = String::from_utf8_lossy(&o.stderr);
    // Since 2025-09 its CLI logs "Elapsed time 1.234s" around the solve, then
    // "Validation PASS, height N" when a placement was found and checked.
    // Before, it wrote the seconds alone ("1.234"), then "PASS"; the height
    // is then the output CSV's highest end.
    let seconds = text
        .lines()
        .find_map(|l| l.strip_prefix("Elapsed time "))
        .and_then(|v| v.trim().trim_end_matches('s').parse().ok())
        .or_else(|| {
            let first = text.lines().next().unwrap_or("");
            let n = first
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(first.len());
            first[..n].parse().ok()
        })
        .ok_or_else(|| format!("no elapsed time in MiniMalloc's output: {text}"))?;
    let head = text
        .lines()
        .find_map(|l| l.strip_prefix("Validation PASS, height "))
        .and_then(|v| v.trim().parse().ok())
        .or_else(|| {
            let passed = text.lines().next().is_some_and(|l| l.ends_with("PASS"));
            passed.then(|| output_height(out)).flatten()
        });
    if o.status.success() && head.is_none() {
        return Err(format!(
            "MiniMalloc succeeded without a validated height: {text}"
        ));
    }
    Ok(MmRun { seconds, head })
}

/// The highest `offset + size` in MiniMalloc's output CSV (columns named in
/// its header row), `None` when it cannot be read.
fn output_height(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let (size, offset) = (col("size")?, col("offset")?);
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let v = |i: usize| f.get(i)?.trim().parse::<u64>().ok();
            Some(v(offset)? + v(size)?)
        })
        .try_fold(0u64, |m, h| Some(m.max(h?)))
}

/// Writes the instance with times compressed to ranks, in MiniMalloc's CSV
/// format (half-open `[lower, upper)`).
fn write_compressed(buffers: &[PlanBuffer], path: &Path) -> std::io::Result<()> {
    let mut text = String::from("id,lower,upper,size\n");
    for (i, b) in buffers.iter().enumerate() {
        text.push_str(&format!("{i},{},{},{}\n", b.first, b.last + 1, b.size));
    }
    std::fs::write(path, text)
}

/// MiniMalloc and `best` on the same instances, raw and rank-compressed.
fn side_by_side(files: &[PathBuf], bin: &Path, budget: u64) -> ExitCode {
    let timeout = std::env::var("MICROARENA_MM_TIMEOUT").unwrap_or_else(|_| "60s".to_owned());
    let tmp = std::env::temp_dir().join(format!("microarena-mm-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&tmp) {
        eprintln!("error: {}: {e}", tmp.display());
        return ExitCode::FAILURE;
    }
    let show = |h: Option<u64>| match h {
        Some(h) if h <= CAPACITY => format!("{h} yes"),
        Some(h) => format!("{h} no"),
        None => "- no".to_owned(),
    };
    println!(
        "MiniMalloc: {} (timeout {timeout}); best: budget {budget} nodes; both stop at 1 MiB",
        bin.display()
    );
    println!(
        "{:<4} {:<10} {:>5} {:>9} {:>9} {:>8} {:>15} {:>15}",
        "inst", "times", "bufs", "mm s", "best s", "best/mm", "mm head ok", "best head ok"
    );
    for compress in [false, true] {
        let (mut mm_solved, mut ours_solved, mut mm_total, mut ours_total) = (0, 0, 0.0, 0.0);
        for f in files {
            let name = instance_name(f);
            let buffers = match read_csv(f, compress) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("error: {}: {e}", f.display());
                    return ExitCode::FAILURE;
                }
            };
            let csv = if compress {
                let p = tmp.join(format!("{name}.ranks.csv"));
                if let Err(e) = write_compressed(&buffers, &p) {
                    eprintln!("error: {}: {e}", p.display());
                    return ExitCode::FAILURE;
                }
                p
            } else {
                f.clone()
            };
            let mm = match run_minimalloc(bin, &csv, &tmp.join("out.csv"), &timeout) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {name}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let ours = run(&name, &buffers, budget, Some(CAPACITY));
            mm_solved += usize::from(mm.head.is_some_and(|h| h <= CAPACITY));
            ours_solved += usize::from(ours.head <= CAPACITY);
            mm_total += mm.seconds;
            ours_total += ours.seconds;
            println!(
                "{:<4} {:<10} {:>5} {:>9.3} {:>9.3} {:>8.3} {:>15} {:>15}",
                name,
                if compress { "ranks" } else { "raw" },
                ours.buffers,
                mm.seconds,
                ours.seconds,
                ours.seconds / mm.seconds.max(1e-6),
                show(mm.head),
                show(Some(ours.head)),
            );
        }
        println!(
            "{:<4} {:<10} {:>5} {:>9.3} {:>9.3} {:>8.3} {:>15} {:>15}",
            "all",
            if compress { "ranks" } else { "raw" },
            "",
            mm_total,
            ours_total,
            ours_total / f64::max(mm_total, 1e-6),
            format!("{mm_solved}/{} solved", files.len()),
            format!("{ours_solved}/{} solved", files.len()),
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
    ExitCode::SUCCESS
}

fn run(name: &str, buffers: &[PlanBuffer], budget: u64, good_enough: Option<u64>) -> Row {
    let opts = BestOptions {
        budget_nodes: budget,
        alignment: 1,
        good_enough,
    };
    let start = Instant::now();
    let r = best::plan_with_options(buffers, &opts);
    let seconds = start.elapsed().as_secs_f64();
    check(buffers, &r.plan.offsets, r.plan.head_bytes);
    let row = Row {
        name: name.to_owned(),
        buffers: buffers.len(),
        greedy: greedy::plan(buffers).head_bytes,
        lower: lower_bound(buffers),
        head: r.plan.head_bytes,
        proven: r.proven_optimal,
        nodes: r.nodes_used,
        seconds,
    };
    eprintln!(
        "{name}: head {} (greedy {}, lower {}), proven {}, {} nodes, {:.2} s",
        row.head, row.greedy, row.lower, row.proven, row.nodes, row.seconds
    );
    row
}

/// Independent overlap check (alignment 1, so `validate` does not apply).
fn check(buffers: &[PlanBuffer], offsets: &[i64], head: u64) {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut top = 0i64;
    for (k, &i) in order.iter().enumerate() {
        let (a, oa) = (buffers[i], offsets[i]);
        assert!(oa >= 0, "negative offset");
        top = top.max(oa + a.size as i64);
        for &j in &order[k + 1..] {
            if offsets[j] >= oa + a.size as i64 {
                break;
            }
            assert!(
                a.size == 0 || buffers[j].size == 0 || !a.overlaps_in_time(&buffers[j]),
                "buffers {i} and {j} overlap"
            );
        }
    }
    assert_eq!(top as u64, head, "head mismatch");
}

fn read_csv(path: &Path, compress: bool) -> Result<Vec<PlanBuffer>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |k: usize| -> Result<u64, String> {
            f.get(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("line {}: bad column {k}", n + 1))
        };
        let (lower, upper, size) = (num(1)?, num(2)?, num(3)?);
        if upper <= lower {
            return Err(format!("line {}: empty lifetime", n + 1));
        }
        raw.push((lower, upper, size));
    }
    let mut times: Vec<u64> = raw.iter().flat_map(|&(l, u, _)| [l, u]).collect();
    times.sort_unstable();
    times.dedup();
    let rank = |t: u64| -> Result<i32, String> {
        if compress {
            Ok(times.partition_point(|&x| x < t) as i32)
        } else {
            i32::try_from(t).map_err(|_| format!("time {t} exceeds i32"))
        }
    };
    raw.into_iter()
        .map(|(l, u, size)| {
            Ok(PlanBuffer {
                size,
                first: rank(l)?,
                last: rank(u)? - 1,
                fixed_offset: None,
            })
        })
        .collect()
}

/// Deterministic pseudo-random instance (xorshift): `n` buffers over `n / 4`
/// steps, mostly short-lived with a fifth living up to 128 steps, sizes
/// multiple of 16 from 16 B to 256 KiB on a log scale.
fn generate(n: usize, seed: u64) -> Vec<PlanBuffer> {
    let mut s = seed;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let steps = (n / 4).max(1) as u64;
    (0..n)
        .map(|_| {
            let first = (next() % steps) as i32;
            let len = if next() % 5 == 0 {
                next() % 128
            } else {
                next() % 12
            } as i32;
            let size = (1 + next() % (1 << (4 + next() % 11))) * 16;
            PlanBuffer {
                size: size.min(256 * 1024),
                first,
                last: first + len,
                fixed_offset: None,
            }
        })
        .collect()
}
