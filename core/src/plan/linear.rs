//! TFLM's `LinearMemoryPlanner`: buffers side by side in id order, no reuse.

use alloc::vec::Vec;

use super::{Plan, PlanBuffer, PlanError};

/// `LinearMemoryPlanner::kMaxBufferCount`.
pub const MAX_BUFFERS: usize = 1024;

/// Offset of buffer k = sum of the sizes of buffers 0..k.
pub fn plan(buffers: &[PlanBuffer]) -> Result<Plan, PlanError> {
    if buffers.iter().any(|b| b.fixed_offset.is_some()) {
        return Err(PlanError::FixedOffsetsUnsupported { planner: "linear" });
    }
    if buffers.len() > MAX_BUFFERS {
        return Err(PlanError::TooManyBuffers {
            count: buffers.len(),
            limit: MAX_BUFFERS,
        });
    }
    let mut offsets = Vec::with_capacity(buffers.len());
    let mut end = 0u64;
    for b in buffers {
        offsets.push(end as i64);
        end += b.size;
    }
    Ok(Plan {
        offsets,
        head_bytes: end,
    })
}
