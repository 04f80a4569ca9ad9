//! The main subgraph's inputs as converted: what the what-if control edits.

use microarena_core::Model;
use serde::{Deserialize, Serialize};

/// One input of the main subgraph, as converted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphInput {
    /// How an override names it: the tensor name, or `#k` (the k-th graph
    /// input) when the name is empty, repeated or could be read as an index.
    pub key: String,
    /// Tensor name (may be empty).
    pub name: String,
    /// Tensor index.
    pub tensor: usize,
    /// Shape in the model as converted.
    pub shape: Vec<i32>,
    /// Element type.
    pub dtype: String,
}

/// The main subgraph's inputs of `model`.
pub fn graph_inputs(model: &Model<'_>) -> Vec<GraphInput> {
    let sg = model.main();
    let tensors: Vec<(usize, usize)> = sg
        .inputs
        .iter()
        .enumerate()
        .filter_map(|(k, &t)| Some((k, usize::try_from(t).ok()?)))
        .collect();
    let name_of = |t: usize| sg.tensors.get(t).map_or("", |x| x.name);
    tensors
        .iter()
        .filter_map(|&(k, t)| {
            let x = sg.tensors.get(t)?;
            let name = x.name;
            let unique = tensors.iter().filter(|&&(_, u)| name_of(u) == name).count() == 1;
            let plain = !name.is_empty()
                && unique
                && !name.starts_with('#')
                && name.parse::<usize>().is_err();
            Some(GraphInput {
                key: if plain {
                    name.to_string()
                } else {
                    format!("#{k}")
                },
                name: name.to_string(),
                tensor: t,
                shape: x.shape.clone(),
                dtype: x.dtype.name().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use microarena_core::build::builder::ModelBuilder;
    use microarena_core::build::example;
    use microarena_core::read::dtype::DType;
    use microarena_core::read::ops::BuiltinOp;

    #[test]
    fn the_example_has_one_named_image_input() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).expect("the bundled example parses");
        let inputs = graph_inputs(&model);
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].shape, vec![1, 96, 96, 1]);
        assert_eq!(inputs[0].dtype, "int8");
        assert_eq!(inputs[0].key, inputs[0].name);
        assert!(!inputs[0].name.is_empty());
    }

    #[test]
    fn names_that_cannot_key_an_override_fall_back_to_the_position() {
        // Inputs: "a", "a" (repeated), "" (empty), "7" (reads as an index), "#x".
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let names = ["a", "a", "", "7", "#x", "ok"];
        let ids: Vec<i32> = names
            .iter()
            .map(|n| b.tensor(g, n, &[1, 4], DType::F32).id())
            .collect();
        let out = b.tensor(g, "out", &[1, 4], DType::F32).id();
        b.op(g, BuiltinOp::ADD, &ids[..2], &[out]);
        b.inputs(g, &ids).outputs(g, &[out]);
        let bytes = b.build().expect("a valid model");
        let model = Model::parse(&bytes).expect("it parses");
        let keys: Vec<String> = graph_inputs(&model).into_iter().map(|g| g.key).collect();
        assert_eq!(keys, ["#0", "#1", "#2", "#3", "#4", "ok"]);
    }
}
