//! The subgraph call graph: which subgraph each IF, WHILE and CALL_ONCE
//! calls. One check for both sides: core's `lower` refuses a model whose
//! calls [`check_calls`] refuses (so `plan` has no runtime figure), and the
//! runtime's image parser refuses such an image, so the device never
//! recurses without end or deeper than its stack was sized for.

/// Most subgraphs an image holds (the check keeps one counter per subgraph
/// on the stack; converters emit a handful).
pub const MAX_SUBGRAPHS: usize = 32;
/// Deepest nesting of subgraph calls from subgraph 0 (each level is one
/// interpreter frame on the device's stack).
pub const MAX_CALL_DEPTH: usize = 8;

/// Why a call graph is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallError {
    /// More subgraphs than [`MAX_SUBGRAPHS`].
    TooManySubgraphs { count: usize },
    /// An op of `caller` names a subgraph that does not exist.
    OutOfRange { caller: usize, callee: i64 },
    /// `subgraph` calls itself, directly or through others, or calls one
    /// that does (TFLM would recurse without end).
    Cycle { subgraph: usize },
    /// Calls from subgraph 0 nest `depth` deep, beyond [`MAX_CALL_DEPTH`].
    TooDeep { depth: usize },
}

impl CallError {
    /// The reason, for a person (the runtime's error carries it as is).
    pub const fn why(&self) -> &'static str {
        match self {
            CallError::TooManySubgraphs { .. } => "more subgraphs than the runtime holds (32)",
            CallError::OutOfRange { .. } => {
                "a control-flow op calls a subgraph that does not exist"
            }
            CallError::Cycle { .. } => {
                "a subgraph calls itself through IF/WHILE/CALL_ONCE (recursion without end)"
            }
            CallError::TooDeep { .. } => "subgraph calls nest deeper than the runtime's 8 levels",
        }
    }
}

/// Lists a call graph: calls its argument with each (caller, callee) pair.
pub type Calls<'a> = &'a dyn Fn(&mut dyn FnMut(usize, i64));

/// Checks the call graph of `n` subgraphs, whose calls `calls` lists by
/// calling its argument with each (caller, callee) pair (callee as written,
/// possibly negative or out of range). Returns the call depth from
/// subgraph 0 (0 when it calls nothing).
pub fn check_calls(n: usize, calls: Calls<'_>) -> Result<usize, CallError> {
    if n > MAX_SUBGRAPHS {
        return Err(CallError::TooManySubgraphs { count: n });
    }
    let mut bad = None;
    calls(&mut |caller, callee| {
        if bad.is_none() && (caller >= n || callee < 0 || callee >= n as i64) {
            bad = Some(CallError::OutOfRange { caller, callee });
        }
    });
    if let Some(e) = bad {
        return Err(e);
    }
    // Longest call chain below each subgraph, relaxed round by round: an
    // acyclic graph settles below `n`, a cycle grows by one each round.
    let mut depth = [0usize; MAX_SUBGRAPHS];
    for _ in 0..=n {
        let mut changed = false;
        calls(&mut |caller, callee| {
            let below = depth.get(callee as usize).copied().unwrap_or(0);
            if let Some(d) = depth.get_mut(caller)
                && *d < below + 1
                && *d <= n
            {
                *d = below + 1;
                changed = true;
            }
        });
        if !changed {
            break;
        }
    }
    if let Some(g) = depth.iter().take(n).position(|&d| d >= n.max(1)) {
        return Err(CallError::Cycle { subgraph: g });
    }
    let d = depth.first().copied().unwrap_or(0);
    if d > MAX_CALL_DEPTH {
        return Err(CallError::TooDeep { depth: d });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: usize, edges: &[(usize, i64)]) -> Result<usize, CallError> {
        check_calls(n, &|visit| {
            for &(a, b) in edges {
                visit(a, b);
            }
        })
    }

    #[test]
    fn chains_diamonds_and_cycles() {
        assert_eq!(run(1, &[]), Ok(0));
        assert_eq!(run(3, &[(0, 1), (0, 2)]), Ok(1));
        assert_eq!(run(4, &[(0, 1), (1, 2), (0, 2), (2, 3)]), Ok(3));
        // Subgraph 2 calls 1, which comes before it: order does not matter.
        assert_eq!(run(3, &[(0, 2), (2, 1)]), Ok(2));
        assert_eq!(
            run(2, &[(0, 1), (1, 1)]),
            Err(CallError::Cycle { subgraph: 0 })
        );
        assert!(matches!(
            run(3, &[(0, 1), (1, 2), (2, 1)]),
            Err(CallError::Cycle { .. })
        ));
        assert!(matches!(
            run(2, &[(1, 0), (0, 1)]),
            Err(CallError::Cycle { .. })
        ));
        assert_eq!(
            run(2, &[(0, 2)]),
            Err(CallError::OutOfRange {
                caller: 0,
                callee: 2
            })
        );
        assert!(matches!(
            run(2, &[(0, -1)]),
            Err(CallError::OutOfRange { .. })
        ));
        let chain: std::vec::Vec<(usize, i64)> = (0..10).map(|g| (g, g as i64 + 1)).collect();
        assert_eq!(run(11, &chain), Err(CallError::TooDeep { depth: 10 }));
        assert_eq!(run(33, &[]), Err(CallError::TooManySubgraphs { count: 33 }));
    }
}
