//! TFLite `TensorType` codes the runtime can hold, and their element sizes.

pub const F32: i8 = 0;
pub const I32: i8 = 2;
pub const U8: i8 = 3;
pub const I64: i8 = 4;
pub const BOOL: i8 = 6;
pub const I16: i8 = 7;
pub const I8: i8 = 9;
pub const U64: i8 = 12;
pub const U32: i8 = 15;

/// Bytes per element of a type the runtime can hold, `None` otherwise.
pub const fn dtype_size(code: i8) -> Option<u32> {
    match code {
        F32 | I32 | U32 => Some(4),
        I16 => Some(2),
        I8 | U8 | BOOL => Some(1),
        I64 | U64 => Some(8),
        _ => None,
    }
}
