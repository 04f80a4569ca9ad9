fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        match microarena_core::Model::parse(&bytes) {
            Err(e) => println!("{path}: {e}"),
            Ok(m) => {
                println!(
                    "== {path}: {} subgraphs, meta {:?} offline {:?}",
                    m.subgraphs.len(),
                    m.metadata,
                    m.offline_plan.as_ref().map(|p| p.offsets.clone())
                );
                for (g, sg) in m.subgraphs.iter().enumerate() {
                    println!(" sg{g} in {:?} out {:?}", sg.inputs, sg.outputs);
                    for (i, t) in sg.tensors.iter().enumerate() {
                        println!(
                            "  t{i} {} {:?} {} data={} var={} bytes={:?} q={:?}",
                            t.name,
                            t.shape,
                            t.dtype,
                            t.has_data,
                            t.is_variable,
                            t.bytes,
                            t.quantization
                                .as_ref()
                                .map(|q| (q.scales.len(), q.zero_points.len()))
                        );
                    }
                    for (i, o) in sg.operators.iter().enumerate() {
                        println!(
                            "  op{i} {} in {:?} out {:?} im {:?} opts {:?} custom {}",
                            o.name(),
                            o.inputs,
                            o.outputs,
                            o.intermediates,
                            o.options,
                            o.custom_options.len()
                        );
                    }
                }
            }
        }
    }
}
