fn main() {
    let target = std::env::var("TARGET").unwrap_or("x86_64".into());
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let m = microarena_core::Model::parse(&bytes).unwrap();
        let cfg = microarena_core::Config {
            profile: microarena_core::tflm::profile::by_name(&target).unwrap(),
            planner: microarena_core::plan::PlannerKind::TflmGreedy,
        };
        match microarena_core::analyze(&m, &cfg) {
            Err(e) => println!("{path}: {e}"),
            Ok(a) => {
                let mut cats = std::collections::BTreeMap::new();
                for al in &a.tail.allocs {
                    let e = cats.entry(al.category.name()).or_insert((0u64, 0u64, 0u64));
                    e.0 += al.used;
                    e.1 += al.requested;
                    e.2 += 1;
                }
                println!(
                    "{} head {} tail {} total {} min {} ({:?}) lb {} {:?}",
                    path.rsplit('/').next().unwrap(),
                    a.head_bytes,
                    a.tail_bytes,
                    a.total_bytes,
                    a.minimum_bytes,
                    a.minimum_phase,
                    a.lower_bound_bytes,
                    cats
                );
                for d in &a.diagnostics {
                    println!("   {:?}: {}", d.severity, d.message);
                }
            }
        }
    }
}
