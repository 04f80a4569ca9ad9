//! Diagnostics grouped for reading: the same finding about many ops of one
//! kind (a thousand custom ops without a kernel, every hybrid
//! FULLY_CONNECTED) is one line with a count, whose places unfold on demand.
//! The messages are core's, unchanged; only the op's place is taken out of
//! the text to find the ones that say the same thing.

use microarena_core::report::DiagnosticInfo;

/// Diagnostics that say the same thing about ops of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticGroup {
    /// `info`, `warning` or `error`.
    pub severity: String,
    /// The ops' opcode, when the message is about ops.
    pub opcode: Option<String>,
    /// The message with the op's place replaced by `op …` (for one
    /// diagnostic, its message as it is).
    pub text: String,
    /// The grouped diagnostics (indices into `report.diagnostics`), in order.
    pub items: Vec<usize>,
    /// Each one's op as (subgraph, op index), when it names one.
    pub places: Vec<Option<(usize, usize)>>,
}

/// Where a message names its op: `subgraph G op I`, as byte range and numbers.
fn op_place(m: &str) -> Option<(usize, usize, usize, usize)> {
    let start = m.find("subgraph ")?;
    let rest = &m[start + "subgraph ".len()..];
    let g_len = rest.find(|c: char| !c.is_ascii_digit())?;
    let g = rest[..g_len].parse().ok()?;
    let rest = rest[g_len..].strip_prefix(" op ")?;
    let i_len = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let i = rest[..i_len].parse().ok()?;
    let end = m.len() - (rest.len() - i_len);
    Some((start, end, g, i))
}

/// The opcode a message names right after its place: ` (NAME)`,
/// ` is custom op 'NAME'` or ` is 'NAME'`.
fn opcode_after(tail: &str) -> Option<&str> {
    if let Some(r) = tail.strip_prefix(" (") {
        return r.split(')').next();
    }
    let r = tail
        .strip_prefix(" is custom op '")
        .or_else(|| tail.strip_prefix(" is '"))?;
    r.split('\'').next()
}

/// The diagnostics in groups, each group where its first member was.
pub fn group(diags: &[DiagnosticInfo]) -> Vec<DiagnosticGroup> {
    let mut out: Vec<DiagnosticGroup> = Vec::new();
    let mut index: std::collections::HashMap<(String, String), usize> = Default::default();
    for (k, d) in diags.iter().enumerate() {
        let (key, opcode, place) = match op_place(&d.message) {
            Some((start, end, g, i)) => (
                format!("{}op …{}", &d.message[..start], &d.message[end..]),
                opcode_after(&d.message[end..]).map(String::from),
                Some((g, i)),
            ),
            None => (d.message.clone(), None, None),
        };
        match index.get(&(d.severity.clone(), key.clone())) {
            Some(&gi) if place.is_some() => {
                if let Some(grp) = out.get_mut(gi) {
                    grp.items.push(k);
                    grp.places.push(place);
                }
            }
            _ => {
                index.insert((d.severity.clone(), key.clone()), out.len());
                out.push(DiagnosticGroup {
                    severity: d.severity.clone(),
                    opcode,
                    text: key,
                    items: vec![k],
                    places: vec![place],
                });
            }
        }
    }
    // A group of one reads as its own message.
    for g in &mut out {
        if let [k] = g.items[..]
            && let Some(d) = diags.get(k)
        {
            g.text = d.message.clone();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(severity: &str, message: &str) -> DiagnosticInfo {
        DiagnosticInfo {
            severity: severity.into(),
            message: message.into(),
        }
    }

    #[test]
    fn the_same_finding_on_many_ops_of_a_kind_is_one_group() {
        let diags = [
            d(
                "error",
                "TFLM would not run this model: subgraph 0 op 9 is custom op 'ACCEL_ADD', which has no kernel",
            ),
            d(
                "warning",
                "subgraph 0 op 3 (CONV_2D): estimated on cortex-m: why",
            ),
            d(
                "error",
                "TFLM would not run this model: subgraph 0 op 19 is custom op 'ACCEL_ADD', which has no kernel",
            ),
            d(
                "info",
                "TFLM reports 10 bytes, but AllocateTensors needs 16",
            ),
            d(
                "warning",
                "subgraph 1 op 12 (CONV_2D): estimated on cortex-m: why",
            ),
            d(
                "error",
                "TFLM would not run this model: subgraph 0 op 29 is custom op 'OTHER', which has no kernel",
            ),
        ];
        let g = group(&diags);
        assert_eq!(g.len(), 4);
        assert_eq!(g[0].items, vec![0, 2]);
        assert_eq!(g[0].opcode.as_deref(), Some("ACCEL_ADD"));
        assert_eq!(
            g[0].text,
            "TFLM would not run this model: op … is custom op 'ACCEL_ADD', which has no kernel"
        );
        assert_eq!(g[0].places, vec![Some((0, 9)), Some((0, 19))]);
        assert_eq!(g[1].items, vec![1, 4]);
        assert_eq!(g[1].opcode.as_deref(), Some("CONV_2D"));
        assert_eq!(g[1].places, vec![Some((0, 3)), Some((1, 12))]);
        assert_eq!(g[2].text, diags[3].message);
        assert_eq!(g[2].places, vec![None]);
        // Another op kind is another group, and a group of one keeps its message.
        assert_eq!(g[3].items, vec![5]);
        assert_eq!(g[3].text, diags[5].message);
        let total: usize = g.iter().map(|g| g.items.len()).sum();
        assert_eq!(total, diags.len());
    }

    #[test]
    fn messages_without_an_op_are_never_merged() {
        let same = d("error", "subgraph 0 tensor 4 'x' has a dynamic shape");
        let g = group(&[same.clone(), same]);
        assert_eq!(g.len(), 2);
    }
}
