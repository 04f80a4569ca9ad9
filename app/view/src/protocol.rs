//! The page ↔ worker protocol: typed messages, each encoded into one byte
//! frame by this module alone, so the two sides cannot disagree on a key.
//!
//! Frame: `id` (u32 LE) ‖ header length (u32 LE) ‖ header (JSON of the
//! message without its bulk) ‖ bulk. The bulk is the model bytes in a
//! request and the report in share-codec bytes (`share::to_bytes`, compact
//! and lossless) in a report answer. The id leads so the page can drop an
//! answer to a superseded request without decoding it.

use core::fmt;
use std::sync::Arc;

use microarena_core::report::Report;
use microarena_core::report::advice::Advice;
use microarena_core::report::share::{self, ShareError};
use microarena_core::report::steps::Steps;
use microarena_core::tflm::split::SplitArena;
use serde::{Deserialize, Serialize};

use crate::inputs::GraphInput;

/// What a request asks the worker for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Want {
    /// The report, then the extras (planners, share code, advice).
    #[default]
    Plan,
    /// The step-through of the same analysis (`report::steps`).
    Steps,
    /// The report only (the other side of a comparison).
    Report,
    /// The report of the model `optimize` writes (`microarena optimize`'s
    /// defaults for the target), for comparing a model with its optimized copy.
    Optimized,
}

/// One analysis request: model bytes plus the choices that shape the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// Numbers requests so only the latest one's answers are shown.
    pub id: u32,
    /// File name shown in the report.
    pub name: String,
    /// Target profile name.
    pub target: String,
    /// Planner name.
    pub planner: String,
    /// What-if input shapes, `NAME=D0,D1,…` as `microarena plan --input-shape`
    /// takes them; empty for the model as converted.
    pub input_shapes: Vec<String>,
    /// What to answer with.
    pub want: Want,
    /// Model bytes.
    pub bytes: &'a [u8],
}

#[derive(Serialize, Deserialize)]
struct RequestHeader {
    name: String,
    target: String,
    planner: String,
    input_shapes: Vec<String>,
    #[serde(default)]
    want: Want,
}

/// Phase timings in milliseconds, published for the browser tests.
pub type Timings = Vec<(String, f64)>;

/// Why a request gave no report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The message.
    pub message: String,
    /// The what-if shapes could not be applied (the model as converted is fine).
    pub what_if: bool,
}

/// Head size each planner achieves on the same buffers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerHead {
    /// Planner name.
    pub planner: String,
    /// Head bytes, or why the planner refused.
    pub head: Result<u64, String>,
}

/// The second answer, computed after the report is on its way to the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extras {
    /// Every planner's head on the same buffers.
    pub planners: Vec<PlannerHead>,
    /// The share code of the report.
    pub share_code: String,
    /// Measured ways to need fewer bytes (`core::advice`, as `microarena plan`
    /// prints them); empty for a shared layout, which has no model.
    pub advice: Vec<Advice>,
    /// The buffer sizes of TFLM's two-buffer allocator (head and tail apart),
    /// for the budget panel's placement; `None` for a shared layout.
    #[serde(default)]
    pub split: Option<SplitArena>,
}

/// What the worker answers: for [`Want::Plan`] `Report` (or `Failed`), then
/// `Extras`; for [`Want::Steps`] `Steps` (or `Failed`); for
/// [`Want::Report`] and [`Want::Optimized`] `Report` (or `Failed`).
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The report, exactly as `microarena plan --json` builds it, and the
    /// model's inputs as converted.
    Report {
        /// The request answered.
        id: u32,
        /// The report, shared with whoever shows it rather than copied.
        report: Arc<Report>,
        /// The model's graph inputs as converted.
        inputs: Vec<GraphInput>,
        /// Worker phase timings.
        timings: Timings,
    },
    /// The request gave no report.
    Failed {
        /// The request answered.
        id: u32,
        /// Why.
        failure: Failure,
    },
    /// Planner comparison, share code and advice for the report just sent.
    Extras {
        /// The request answered.
        id: u32,
        /// The extras.
        extras: Extras,
        /// Worker phase timings.
        timings: Timings,
    },
    /// The step-through of the request's analysis.
    Steps {
        /// The request answered.
        id: u32,
        /// The steps, in TFLM's order.
        steps: Arc<Steps>,
    },
}

impl Response {
    /// The request this answers.
    pub fn id(&self) -> u32 {
        match self {
            Response::Report { id, .. }
            | Response::Failed { id, .. }
            | Response::Extras { id, .. }
            | Response::Steps { id, .. } => *id,
        }
    }
}

/// A response's header: everything but the report.
#[derive(Serialize, Deserialize)]
enum ResponseHeader {
    Report {
        inputs: Vec<GraphInput>,
        timings: Timings,
    },
    Failed(Failure),
    Extras {
        extras: Extras,
        timings: Timings,
    },
    Steps(Steps),
}

/// A frame that does not decode.
#[derive(Debug, Clone, PartialEq)]
pub enum ProtocolError {
    /// Shorter than its own length fields say.
    Truncated {
        /// Bytes the frame needs at least.
        needed: usize,
        /// Bytes it has.
        got: usize,
    },
    /// The header is not this protocol's JSON (the page and the worker are
    /// from different builds).
    Header(String),
    /// The report bytes do not decode.
    Report(ShareError),
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::Truncated { needed, got } => write!(
                f,
                "the worker's message is cut short ({got} of at least {needed} bytes); reload the page"
            ),
            ProtocolError::Header(e) => write!(
                f,
                "the worker's message does not match this page ({e}); reload the page"
            ),
            ProtocolError::Report(e) => write!(f, "the worker sent an unreadable report: {e}"),
        }
    }
}

impl std::error::Error for ProtocolError {}

fn frame(id: u32, header: &impl Serialize, bulk: &[u8]) -> Vec<u8> {
    // Serializing plain structs of strings and numbers cannot fail.
    let header = serde_json::to_vec(header).unwrap_or_default();
    let mut out = Vec::with_capacity(8 + header.len() + bulk.len());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(bulk);
    out
}

fn word(bytes: &[u8], at: usize) -> Result<u32, ProtocolError> {
    bytes
        .get(at..at + 4)
        .and_then(|w| w.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or(ProtocolError::Truncated {
            needed: at + 4,
            got: bytes.len(),
        })
}

/// Splits a frame into id, header JSON and bulk.
fn unframe(bytes: &[u8]) -> Result<(u32, &[u8], &[u8]), ProtocolError> {
    let id = word(bytes, 0)?;
    let len = word(bytes, 4)? as usize;
    let end = 8usize.saturating_add(len);
    let header = bytes.get(8..end).ok_or(ProtocolError::Truncated {
        needed: end,
        got: bytes.len(),
    })?;
    Ok((id, header, &bytes[end..]))
}

fn header<'de, T: Deserialize<'de>>(json: &'de [u8]) -> Result<T, ProtocolError> {
    serde_json::from_slice(json).map_err(|e| ProtocolError::Header(e.to_string()))
}

/// The id of a frame, read without decoding the rest.
pub fn frame_id(bytes: &[u8]) -> Option<u32> {
    word(bytes, 0).ok()
}

impl Request<'_> {
    /// The request as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let h = RequestHeader {
            name: self.name.clone(),
            target: self.target.clone(),
            planner: self.planner.clone(),
            input_shapes: self.input_shapes.clone(),
            want: self.want,
        };
        frame(self.id, &h, self.bytes)
    }

    /// Reads a request frame; the model bytes borrow from it.
    pub fn decode(bytes: &[u8]) -> Result<Request<'_>, ProtocolError> {
        let (id, json, bulk) = unframe(bytes)?;
        let h: RequestHeader = header(json)?;
        Ok(Request {
            id,
            name: h.name,
            target: h.target,
            planner: h.planner,
            input_shapes: h.input_shapes,
            want: h.want,
            bytes: bulk,
        })
    }
}

impl Response {
    /// The response as one frame.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Response::Report {
                id,
                report,
                inputs,
                timings,
            } => {
                let h = ResponseHeader::Report {
                    inputs: inputs.clone(),
                    timings: timings.clone(),
                };
                frame(*id, &h, &share::to_bytes(report))
            }
            Response::Failed { id, failure } => {
                frame(*id, &ResponseHeader::Failed(failure.clone()), &[])
            }
            Response::Extras {
                id,
                extras,
                timings,
            } => {
                let h = ResponseHeader::Extras {
                    extras: extras.clone(),
                    timings: timings.clone(),
                };
                frame(*id, &h, &[])
            }
            Response::Steps { id, steps } => {
                // Borrowed, in `ResponseHeader::Steps`'s encoding: the steps
                // are plain numbers and short strings, JSON is compact enough.
                #[derive(Serialize)]
                enum Borrowed<'a> {
                    Steps(&'a Steps),
                }
                frame(*id, &Borrowed::Steps(steps), &[])
            }
        }
    }

    /// Reads a response frame.
    pub fn decode(bytes: &[u8]) -> Result<Response, ProtocolError> {
        let (id, json, bulk) = unframe(bytes)?;
        Ok(match header(json)? {
            ResponseHeader::Report { inputs, timings } => Response::Report {
                id,
                report: Arc::new(share::from_bytes(bulk).map_err(ProtocolError::Report)?),
                inputs,
                timings,
            },
            ResponseHeader::Failed(failure) => Response::Failed { id, failure },
            ResponseHeader::Extras { extras, timings } => Response::Extras {
                id,
                extras,
                timings,
            },
            ResponseHeader::Steps(steps) => Response::Steps {
                id,
                steps: Arc::new(steps),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn a_request_round_trips_with_its_bytes_borrowed() {
        let model = [b'T', b'F', b'L', b'3', 0, 1, 2, 255];
        let req = Request {
            id: 7,
            name: "kws.tflite".into(),
            target: "cortex-m".into(),
            planner: "best".into(),
            input_shapes: vec!["input=1,25,257".into()],
            want: Want::Optimized,
            bytes: &model,
        };
        let frame = req.encode();
        assert_eq!(frame_id(&frame), Some(7));
        // The model is the frame's tail, byte for byte.
        assert!(frame.ends_with(&model));
        assert_eq!(Request::decode(&frame), Ok(req));
    }

    #[test]
    fn every_response_round_trips() {
        let report = testing::report();
        let input = GraphInput {
            key: "#0".into(),
            name: String::new(),
            tensor: 3,
            shape: vec![1, 49, 40],
            dtype: "int8".into(),
        };
        let all = [
            Response::Report {
                id: 1,
                report: Arc::new(report),
                inputs: vec![input],
                timings: vec![("parse+analyze+report".into(), 12.5)],
            },
            Response::Failed {
                id: 2,
                failure: Failure {
                    message: "what-if: `x`: expected NAME=DIMS".into(),
                    what_if: true,
                },
            },
            Response::Extras {
                id: u32::MAX,
                extras: Extras {
                    planners: vec![
                        PlannerHead {
                            planner: "tflm-greedy".into(),
                            head: Ok(176),
                        },
                        PlannerHead {
                            planner: "best".into(),
                            head: Err("budget exhausted".into()),
                        },
                    ],
                    share_code: "AbC_-".into(),
                    advice: vec![Advice {
                        action: "plan with best".into(),
                        figure: "head".into(),
                        from_bytes: 176,
                        to_bytes: 160,
                        try_args: Some("plan --planner best".into()),
                    }],
                    split: Some(SplitArena {
                        persistent_bytes: 400,
                        non_persistent_bytes: 176,
                    }),
                },
                timings: vec![],
            },
            Response::Steps {
                id: 9,
                steps: Arc::new(testing::steps()),
            },
        ];
        for r in all {
            let frame = r.encode();
            assert_eq!(frame_id(&frame), Some(r.id()));
            assert_eq!(Response::decode(&frame), Ok(r));
        }
    }

    #[test]
    fn broken_frames_are_errors_not_panics() {
        assert_eq!(
            Response::decode(&[1, 0, 0]),
            Err(ProtocolError::Truncated { needed: 4, got: 3 })
        );
        // Header length 100 with 2 header bytes present.
        assert_eq!(
            Response::decode(&[1, 0, 0, 0, 100, 0, 0, 0, b'{', b'}']),
            Err(ProtocolError::Truncated {
                needed: 108,
                got: 10
            })
        );
        assert!(matches!(
            Response::decode(&[1, 0, 0, 0, 2, 0, 0, 0, b'{', b'}']),
            Err(ProtocolError::Header(_))
        ));
        // A report header followed by bytes that are no report.
        let mut f = Response::Report {
            id: 1,
            report: Arc::new(testing::report()),
            inputs: vec![],
            timings: vec![],
        }
        .encode();
        let header_end = 8 + u32::from_le_bytes([f[4], f[5], f[6], f[7]]) as usize;
        f.truncate(header_end + 3);
        assert!(matches!(
            Response::decode(&f),
            Err(ProtocolError::Report(_))
        ));
        assert_eq!(frame_id(&[]), None);
    }
}
