//! Human-readable text for the terminal. Formatting only: every figure comes
//! from the report.

use std::fmt::Write;

use microarena_core::report::advice::Advice;
use microarena_core::report::budget::{Budget, CheckReport, Verdict};
use microarena_core::report::diff::{Change, ReportDiff};
use microarena_core::report::flash::FlashVerdict;
use microarena_core::report::measured::{self, MeasuredCheck, Source};
use microarena_core::report::placement::Placement;
use microarena_core::report::{Report, grouped, grouped_signed};
use microarena_core::rewrite::optimize::Optimized;

/// One line saying whether the model fits, and by how much.
pub fn verdict_line(file: &str, b: &Budget, v: &Verdict, target: &str) -> String {
    let headroom = format!("{}.{:02}", b.headroom_bp / 100, b.headroom_bp % 100);
    let headroom = format!("{}%", headroom.trim_end_matches('0').trim_end_matches('.'));
    let what = format!(
        "{file} ({target}): arena {} B (minimum {} B + {headroom} headroom) vs {} B free (RAM {} B - reserves {} B)",
        grouped(v.arena_bytes),
        grouped(v.minimum_bytes),
        grouped_signed(v.available_bytes),
        grouped(b.ram_bytes),
        grouped(b.reserved_bytes())
    );
    if v.fits {
        format!("fits: {what}; margin {} B", grouped_signed(v.margin_bytes))
    } else {
        format!(
            "does not fit: {what}; short by {} B",
            grouped(v.margin_bytes.unsigned_abs())
        )
    }
}

/// One line saying whether the model and the firmware's code fit the flash.
pub fn flash_verdict_line(file: &str, v: &FlashVerdict) -> String {
    let what = format!(
        "{file}: flash {} B used (model {} B + code {} B) of {} B",
        grouped(v.used_bytes),
        grouped(v.model_bytes),
        grouped(v.code_bytes),
        grouped(v.flash_bytes)
    );
    if v.fits {
        format!("fits: {what}; margin {} B", grouped_signed(v.margin_bytes))
    } else {
        format!(
            "does not fit: {what}; short by {} B",
            grouped(v.margin_bytes.unsigned_abs())
        )
    }
}

/// What `check` prints: the verdict line; when it does not fit, the largest
/// buffers at the head's peak and, on a CMSIS-NN target, the reference-kernel
/// figure for the same budget.
pub fn check_lines(file: &str, b: &Budget, c: &CheckReport) -> Vec<String> {
    let v = Verdict {
        available_bytes: c.available_bytes,
        minimum_bytes: c.minimum_bytes,
        arena_bytes: c.arena_bytes,
        margin_bytes: c.margin_bytes,
        // The RAM verdict; the placement may still fail (below).
        fits: c.margin_bytes >= 0,
    };
    // A target never measured against TFLM is labelled as such, as `plan` does.
    let derived = if c.target_derived { ", derived" } else { "" };
    let target = match &c.device {
        Some(d) => format!("{d}, {}{derived}", c.target),
        None => format!("{}{derived}", c.target),
    };
    let mut lines = vec![verdict_line(file, b, &v, &target)];
    if let Some(f) = &c.flash {
        lines.push(flash_verdict_line(file, f));
    }
    if c.margin_bytes >= 0 && c.placement.as_ref().is_some_and(|p| !p.fits()) {
        // The RAM adds up, but no memory of the device holds the buffers.
        lines[0] = format!(
            "does not fit: {}, but no single memory holds the arena (below)",
            lines[0].trim_start_matches("fits: ")
        );
    }
    if let Some(p) = &c.placement {
        lines.extend(placement_lines(
            c.device.as_deref().unwrap_or("the device"),
            p,
        ));
    }
    if let Some(m) = &c.measured {
        if c.margin_bytes >= 0 && !m.overflows.is_empty() {
            // The RAM adds up, but a stack already used more than was reserved for it.
            lines[0] = format!(
                "does not fit: {}, but {} outgrew its reservation (below)",
                lines[0].trim_start_matches("fits: "),
                m.overflows
                    .iter()
                    .map(|o| o.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            );
        }
        lines.extend(measured_lines(m));
        if !c.fits {
            let advice = measured::advice(b, &v, m);
            lines.extend(advice.iter().map(|a| format!("  to change: {a}")));
        }
    }
    // What fills the head matters when the RAM is short, not the flash.
    if c.margin_bytes >= 0 && c.placement.as_ref().is_none_or(|p| p.fits()) {
        return lines;
    }
    if let Some(p) = c.peak_summary() {
        lines.push(format!(
            "  head at its peak holds {} B: {}",
            grouped(p.total_bytes),
            p.named
        ));
        if p.scratch_bytes > 0 {
            lines.push(format!(
                "  of which {} B is kernel scratch requested in Prepare",
                grouped(p.scratch_bytes)
            ));
        }
    }
    if let Some(r) = &c.reference {
        let extra = c.minimum_bytes as i64 - r.minimum_bytes as i64;
        lines.push(format!(
            "  with TFLM's reference kernels ({}) the minimum is {} B ({} B {} than {}) and the arena {} B {}",
            r.target,
            grouped(r.minimum_bytes),
            grouped(extra.unsigned_abs()),
            if extra >= 0 { "less" } else { "more" },
            c.target,
            grouped(r.arena_bytes),
            if r.fits { "would fit" } else { "would not fit either" },
        ));
    }
    lines
}

/// Which figure of a measured check came from where, what outgrew its
/// reservation, what the inference loop showed and whether the firmware's
/// own verdict agrees.
fn measured_lines(m: &MeasuredCheck) -> Vec<String> {
    let figures: Vec<String> = m
        .figures
        .iter()
        .map(|f| {
            let what = match (f.name.as_str(), f.source) {
                ("minimum", Source::Measured) => "minimum arena (measured high-water)".to_string(),
                ("minimum", Source::Linked) => {
                    "minimum arena (the linked .noinit arena)".to_string()
                }
                ("minimum", s) => format!("minimum arena ({})", s.as_str()),
                ("ram", s) => format!("RAM ({})", s.as_str()),
                (name, s) => match (f.high_water_bytes, f.reserved_bytes) {
                    (Some(hw), Some(r)) if hw > r => {
                        format!("{name} (measured high-water; {} B reserved)", grouped(r))
                    }
                    (Some(hw), _) => format!(
                        "{name} ({}; measured high-water {} B)",
                        s.as_str(),
                        grouped(hw)
                    ),
                    (None, _) => format!("{name} ({})", s.as_str()),
                },
            };
            format!("{} B {what}", grouped(f.bytes))
        })
        .collect();
    let mut lines = vec![format!("  figures: {}", figures.join("; "))];
    for o in &m.overflows {
        lines.push(format!(
            "  {}: high-water {} B exceeds its {} B reservation by {} B",
            o.name,
            grouped(o.high_water_bytes),
            grouped(o.reserved_bytes),
            grouped(o.high_water_bytes - o.reserved_bytes)
        ));
    }
    if let Some(p) = &m.procedure {
        lines.push(format!(
            "  on the device: {} invokes, arena high-water {}, outputs {}; {} timer interrupts during inference; free gap {} B; .noinit arena {} B not zeroed at boot",
            p.invokes,
            if p.arena_stable { "identical after each" } else { "CHANGED between invokes" },
            match p.outputs_stable {
                Some(true) => "identical each time",
                Some(false) => "NOT identical each time",
                None => "not compared (the model keeps state)",
            },
            p.ticks,
            grouped_signed(p.gap_bytes),
            grouped(p.noinit_bytes)
        ));
    }
    match (m.device_agrees, &m.device_verdict) {
        (Some(true), _) => {
            lines.push("  the firmware's own verdict agrees, figure for figure".into())
        }
        (Some(false), Some(d)) => lines.push(format!(
            "  the firmware's own verdict DIFFERS: arena {} B, {} B free, margin {} B, {}",
            grouped(d.arena_bytes),
            grouped_signed(d.available_bytes),
            grouped_signed(d.margin_bytes),
            if d.fits { "fits" } else { "does not fit" }
        )),
        _ => {}
    }
    lines
}

/// Where the arena goes among the device's memories, and the C++ for it.
fn placement_lines(device: &str, p: &Placement) -> Vec<String> {
    let mut lines = vec![format!("  placement on {device}: {}", p.summary())];
    if p.fits() {
        lines.extend(p.cpp.lines().map(|l| format!("    {l}")));
    }
    lines
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.0%".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The short summary printed by `microarena plan`.
pub fn summary(r: &Report) -> String {
    let mut s = String::new();
    let a = &r.arena;
    let measured = match &r.target_measured_against {
        Some(build) => format!(" (measured against {build})"),
        None => " (derived, not measured)".into(),
    };
    let _ = writeln!(
        s,
        "{}: {} subgraph(s), {} ops, {} tensors; target {}{measured}, planner {}",
        r.model.file, r.model.subgraphs, r.model.operators, r.model.tensors, r.target, r.planner
    );
    let _ = writeln!(
        s,
        "  head     {:>11} B  activations and scratch, planned",
        grouped(a.head_bytes)
    );
    let _ = writeln!(
        s,
        "  tail     {:>11} B  persistent: tensor metadata, nodes, OpData, variables",
        grouped(a.tail_bytes)
    );
    let _ = writeln!(
        s,
        "  total    {:>11} B  what TFLM reports (head + tail)",
        grouped(a.total_bytes)
    );
    let _ = writeln!(
        s,
        "  minimum  {:>11} B  smallest arena that works (binding phase: {})",
        grouped(a.minimum_bytes),
        a.minimum_phase
    );
    match (&r.runtime, &r.runtime_refusal) {
        (Some(rt), _) => {
            let _ = writeln!(
                s,
                "  runtime  {:>11} B  microarena-runtime needs (head {} + tail {}, variables {})",
                grouped(rt.total_bytes),
                grouped(rt.head_bytes),
                grouped(rt.tail_bytes),
                grouped(rt.variable_bytes)
            );
            if rt.opdata_bytes > 0 {
                let _ = writeln!(
                    s,
                    "           {:>11} B  with its OpData in flash (run --opdata flash; {} B of the tail)",
                    grouped(rt.total_with_opdata_in_flash()),
                    grouped(rt.opdata_bytes)
                );
            }
            if let (Some(b), Some(total)) = (&rt.banded, rt.banded_total_with_opdata_in_flash()) {
                let _ = writeln!(
                    s,
                    "           {:>11} B  patch-based in row bands, OpData in flash (run --exec banded --opdata flash): {}, rings {} B, +{} MACs; head {} B",
                    grouped(total),
                    b.stages_summary(),
                    grouped(b.ring_bytes()),
                    grouped(b.extra_macs),
                    grouped(b.head_bytes)
                );
            }
            if let Some(ip) = &rt.in_place {
                if let Some(total) = rt.in_place_total_with_opdata_in_flash() {
                    let _ = writeln!(
                        s,
                        "           {:>11} B  in place, OpData in flash (run --in-place --opdata flash): {}; head {} B",
                        grouped(total),
                        ip.summary(),
                        grouped(ip.head_bytes)
                    );
                }
                if let Some(total) = rt.banded_in_place_total_with_opdata_in_flash() {
                    let _ = writeln!(
                        s,
                        "           {:>11} B  banded and in place, OpData in flash (run --exec banded --in-place --opdata flash)",
                        grouped(total)
                    );
                }
            }
        }
        (None, Some(why)) => {
            let _ = writeln!(
                s,
                "  runtime            -  microarena-runtime cannot run it: {why}"
            );
        }
        (None, None) => {}
    }
    let f = &r.flash;
    let _ = writeln!(
        s,
        "  flash    {:>11} B  model file: constants {} B ({}), flatbuffer overhead {} B",
        grouped(f.file_bytes),
        grouped(f.constant_bytes),
        pct(f.constant_bytes, f.file_bytes),
        grouped(f.overhead_bytes)
    );
    let _ = writeln!(
        s,
        "  compute  {:>11}    MACs per invoke ({} elements written)",
        grouped(r.compute.macs),
        grouped(r.compute.elements)
    );
    if let Some(w) = &r.what_if {
        let d = |new: u64, old: u64| {
            let delta = new as i64 - old as i64;
            format!(
                "{} → {} B ({}{})",
                grouped(old),
                grouped(new),
                if delta >= 0 { "+" } else { "−" },
                grouped(delta.unsigned_abs())
            )
        };
        let _ = writeln!(s, "  what-if  {}", w.input_shapes.join(" "));
        let _ = writeln!(
            s,
            "           total {}",
            d(a.total_bytes, w.original_total_bytes)
        );
        let _ = writeln!(
            s,
            "           head {}, tail {}",
            d(a.head_bytes, w.original_head_bytes),
            d(a.tail_bytes, w.original_tail_bytes)
        );
        let _ = writeln!(
            s,
            "           minimum {}",
            d(a.minimum_bytes, w.original_minimum_bytes)
        );
        if let (Some(rt), Some(old)) = (&r.runtime, w.original_runtime_total_bytes) {
            let _ = writeln!(s, "           runtime {}", d(rt.total_bytes, old));
        }
    }
    let gap = a.head_bytes.saturating_sub(a.lower_bound_bytes);
    let _ = writeln!(
        s,
        "  lower bound {:>8} B  for the head; this plan is {} B ({}) above it",
        grouped(a.lower_bound_bytes),
        grouped(gap),
        pct(gap, a.lower_bound_bytes)
    );
    let _ = writeln!(
        s,
        "  padding  {:>11} B  lost to 16-byte alignment of head buffers",
        grouped(a.padding_bytes)
    );
    match (&a.peak_op, &a.peak_opcode) {
        (Some(op), Some(name)) => {
            let live = r
                .operators
                .iter()
                .find(|o| o.subgraph == 0 && o.index == *op)
                .map_or(0, |o| o.live_bytes);
            let _ = writeln!(
                s,
                "  peak     scope {}: op {op} {name}, {} B live",
                a.peak_scope,
                grouped(live)
            );
        }
        _ => {
            let _ = writeln!(s, "  peak     scope {}", a.peak_scope);
        }
    }

    if !r.plans.is_empty() {
        let _ = writeln!(s, "planners on this model (head):");
        for p in &r.plans {
            let _ = writeln!(
                s,
                "  {:<12} {:>11} B{}{}",
                p.planner,
                grouped(p.head_bytes),
                if p.proven_optimal { "  optimal" } else { "" },
                if p.planner == r.planner {
                    "  <- this plan"
                } else {
                    ""
                }
            );
        }
    }

    let mut bufs: Vec<_> = r.buffers.iter().collect();
    bufs.sort_by_key(|b| std::cmp::Reverse(b.aligned_bytes));
    if !bufs.is_empty() {
        let _ = writeln!(s, "largest head buffers:");
        for b in bufs.iter().take(5) {
            let _ = writeln!(
                s,
                "  {:>9} B  @{:<8} scopes {:>3}..{:<3} {} {}",
                grouped(b.aligned_bytes),
                b.offset,
                b.first,
                b.last,
                b.kind,
                b.name
            );
        }
    }
    if !r.variables.is_empty() {
        let _ = writeln!(
            s,
            "variable tensors (state, alive for the interpreter's life):"
        );
        for v in r.variables.iter().take(8) {
            let owner = match (&v.op, &v.opcode) {
                (Some(op), Some(name)) => format!("op {op} {name}"),
                _ => "no reader".into(),
            };
            let at = v.offset.map_or(String::new(), |o| format!(" @{o}"));
            let _ = writeln!(
                s,
                "  {:>9} B  {}{} tensor {} {} {:?} ({owner})",
                grouped(v.bytes),
                v.region,
                at,
                v.tensor,
                v.dtype,
                v.shape
            );
        }
        if r.variables.len() > 8 {
            let _ = writeln!(s, "  … and {} more", r.variables.len() - 8);
        }
    }
    let mut tail: Vec<_> = r.tail.iter().collect();
    tail.sort_by_key(|t| std::cmp::Reverse(t.bytes));
    let _ = writeln!(s, "tail by category:");
    for t in tail {
        let _ = writeln!(
            s,
            "  {:>9} B  {:<42} ({} allocations)",
            grouped(t.bytes),
            t.category,
            t.count
        );
    }
    let mut ops: Vec<_> = r
        .operators
        .iter()
        .filter(|o| o.persistent_bytes > 0)
        .collect();
    ops.sort_by_key(|o| std::cmp::Reverse(o.persistent_bytes));
    if !ops.is_empty() {
        let _ = writeln!(s, "largest persistent consumers:");
        for o in ops.iter().take(3) {
            // What the kernel keeps there, by purpose and requested bytes
            // (`OpData 56, per-channel …`; the total includes alignment).
            let kept: Vec<String> = o
                .allocations
                .iter()
                .map(|a| format!("{} {}", a.purpose, grouped(a.requested_bytes)))
                .collect();
            let _ = writeln!(
                s,
                "  {:>9} B  subgraph {} op {} {}{}",
                grouped(o.persistent_bytes),
                o.subgraph,
                o.index,
                o.opcode,
                if kept.is_empty() {
                    String::new()
                } else {
                    format!(": {}", kept.join(", "))
                }
            );
        }
    }
    if !f.largest.is_empty() {
        let _ = writeln!(s, "largest constants (flash, read in place):");
        for c in f.largest.iter().take(5) {
            let reader = match (&c.op, &c.opcode) {
                (Some(op), Some(name)) => format!("op {op} {name}"),
                _ => "no reader".into(),
            };
            let _ = writeln!(
                s,
                "  {:>9} B  {} {:?} {} ({reader})",
                grouped(c.bytes),
                c.dtype,
                c.shape,
                c.name
            );
        }
    }
    if let Some(npu) = &r.npu {
        let _ = writeln!(
            s,
            "NPU ({}{}): {} B of the arena are its scratch{}, {} B of flash its command streams and weights",
            npu.co_processor,
            if npu.registered {
                ""
            } else {
                ", not registered by this target's build"
            },
            grouped(npu.arena_bytes),
            if npu.fast_scratch_shared {
                " (fast scratch shares it: Shared_Sram)"
            } else {
                " and fast scratch"
            },
            grouped(npu.flash_bytes)
        );
        for o in &npu.ops {
            let part = |t: &Option<microarena_core::report::npu::NpuTensor>, what: &str| {
                t.as_ref().map(|t| {
                    let at = t.offset.map_or(String::new(), |o| format!(" @{o}"));
                    format!("{what} {} B{at}", grouped(t.bytes))
                })
            };
            let parts: Vec<String> = [
                part(&o.scratch, "scratch"),
                part(&o.fast_scratch, "fast scratch"),
                part(&o.command_stream, "command stream"),
                part(&o.weights, "weights"),
            ]
            .into_iter()
            .flatten()
            .collect();
            let _ = writeln!(
                s,
                "  subgraph {} op {} ethos-u: {}; {} feature map(s) inside the scratch",
                o.subgraph,
                o.op_index,
                parts.join(", "),
                o.inside_scratch.len()
            );
        }
    }
    let mut heavy: Vec<_> = r.operators.iter().filter(|o| o.macs > 0).collect();
    heavy.sort_by_key(|o| std::cmp::Reverse(o.macs));
    if !heavy.is_empty() {
        let _ = writeln!(
            s,
            "most compute (MACs; constants in flash, tail bytes Prepare derives in RAM):"
        );
        for o in heavy.iter().take(5) {
            let _ = writeln!(
                s,
                "  {:>13}  subgraph {} op {} {}: flash {} B, tail {} B",
                grouped(o.macs),
                o.subgraph,
                o.index,
                o.opcode,
                grouped(o.constant_bytes),
                grouped(o.persistent_bytes)
            );
        }
    }
    for c in &f.ram_copies {
        let _ = writeln!(
            s,
            "warning: subgraph {} op {} {} copies up to {} B of constants into RAM: {}",
            c.subgraph,
            c.op,
            c.opcode,
            grouped(c.bytes),
            c.condition
        );
    }
    for d in &r.diagnostics {
        let _ = writeln!(s, "{}: {}", d.severity, d.message);
    }
    s
}

/// What `microarena optimize` did.
pub fn optimized(input: &str, output: &str, o: &Optimized, r: &Report) -> String {
    let mut s = String::new();
    let saved = o.original_head_bytes.saturating_sub(o.head_bytes);
    let _ = writeln!(
        s,
        "{input} -> {output}: head {} B -> {} B (saved {} B, {})",
        grouped(o.original_head_bytes),
        grouped(o.head_bytes),
        grouped(saved),
        pct(saved, o.original_head_bytes)
    );
    let _ = writeln!(
        s,
        "  TFLM greedy on the input vs TFLM honouring the written OfflineMemoryAllocation plan"
    );
    let _ = writeln!(
        s,
        "  plan: {}; {} tensor(s) placed offline, scratch buffers online; lower bound {} B{}",
        o.strategy.name(),
        o.planned_tensors,
        grouped(o.lower_bound_bytes),
        if o.proven_optimal { " (optimal)" } else { "" }
    );
    match (&o.order, o.reorder_method) {
        (Some(order), m) => {
            let _ = writeln!(
                s,
                "  op order of subgraph 0 changed ({} search): {:?}",
                m.map_or("?", |m| m.name()),
                order
            );
        }
        (None, Some(m)) => {
            let _ = writeln!(
                s,
                "  op order kept (the {} search found nothing lower)",
                m.name()
            );
        }
        (None, None) => {}
    }
    let _ = writeln!(
        s,
        "  output: head {} B + tail {} B = total {} B; minimum arena {} B ({})",
        grouped(r.arena.head_bytes),
        grouped(r.arena.tail_bytes),
        grouped(r.arena.total_bytes),
        grouped(r.arena.minimum_bytes),
        r.target
    );
    s
}

/// Measured ways to a smaller arena, largest saving first.
pub fn advice(list: &[Advice], model: &str) -> String {
    let mut s = String::new();
    if list.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "ways to need fewer bytes (each measured by re-planning):"
    );
    for a in list {
        let _ = writeln!(
            s,
            "  -{:>9} B  {} {} -> {} B: {}",
            grouped(a.saving_bytes()),
            a.figure,
            grouped(a.from_bytes),
            grouped(a.to_bytes),
            a.action
        );
        if let Some(args) = &a.try_args {
            // The model goes right after the subcommand.
            let (cmd, rest) = args.split_once(' ').unwrap_or((args, ""));
            let _ = writeln!(s, "               try: microarena {cmd} {model} {rest}");
        }
    }
    s
}

/// `microarena diff`: the headline figures always, then what changed.
pub fn diff(d: &ReportDiff) -> String {
    let mut out = format!(
        "{} -> {}  (target {}, planner {}; {} -> {} ops)\n",
        d.old_file, d.new_file, d.target, d.planner, d.operators.0, d.operators.1
    );
    let bytes =
        |b: Option<u64>| b.map_or_else(|| "n/a".to_string(), |b| format!("{} B", grouped(b)));
    let change = |c: &Change| match (c.delta_bytes, c.old_bytes) {
        (Some(0), _) => "unchanged".to_string(),
        (Some(delta), Some(old)) if old > 0 => format!(
            "{} B ({:+.1}%)",
            signed_plus(delta),
            delta as f64 * 100.0 / old as f64
        ),
        (Some(delta), _) => format!("{} B", signed_plus(delta)),
        (None, None) => "added".to_string(),
        (None, Some(_)) => "removed".to_string(),
    };
    out.push_str(&format!(
        "  {:<12} {:>12} {:>12}  change\n",
        "", "before", "after"
    ));
    for c in &d.figures {
        out.push_str(&format!(
            "  {:<12} {:>12} {:>12}  {}\n",
            c.name,
            bytes(c.old_bytes),
            bytes(c.new_bytes),
            change(c)
        ));
    }
    let section = |out: &mut String, title: &str, rows: &[Change], max: usize| {
        if rows.is_empty() {
            return;
        }
        out.push_str(&format!("{title}:\n"));
        for c in rows.iter().take(max) {
            out.push_str(&format!(
                "  {:>12} {:>12}  {:<22} {}\n",
                bytes(c.old_bytes),
                bytes(c.new_bytes),
                change(c),
                if c.name.is_empty() {
                    "(unnamed)"
                } else {
                    &c.name
                }
            ));
        }
        if rows.len() > max {
            out.push_str(&format!("  … and {} more\n", rows.len() - max));
        }
    };
    section(
        &mut out,
        "tail categories that changed",
        &d.tail,
        usize::MAX,
    );
    section(
        &mut out,
        "head tensors added, removed or resized (largest change first)",
        &d.tensors,
        20,
    );
    if d.tail.is_empty() && d.tensors.is_empty() {
        out.push_str("no tail category or head tensor changed\n");
    }
    out
}

/// `+1,024` / `-16` / `0`.
fn signed_plus(n: i64) -> String {
    if n > 0 {
        format!("+{}", grouped(n as u64))
    } else {
        grouped_signed(n)
    }
}
