//! Tensor element types and their sizes as TFLM counts them.

use core::fmt;

/// Element type of a tensor (TFLite `TensorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs, non_camel_case_types)]
pub enum DType {
    F32,
    F16,
    I32,
    U8,
    I64,
    String,
    Bool,
    I16,
    C64,
    I8,
    F64,
    C128,
    U64,
    Resource,
    Variant,
    U32,
    U16,
    I4,
    BF16,
    I2,
    /// Schema codes 20..=22 (newer sub-byte types); TFLM cannot size them.
    Other(i8),
}

impl DType {
    /// Maps a schema `TensorType` code; `None` for codes no schema defines.
    pub fn from_code(code: i8) -> Option<DType> {
        use DType::*;
        Some(match code {
            0 => F32,
            1 => F16,
            2 => I32,
            3 => U8,
            4 => I64,
            5 => String,
            6 => Bool,
            7 => I16,
            8 => C64,
            9 => I8,
            10 => F64,
            11 => C128,
            12 => U64,
            13 => Resource,
            14 => Variant,
            15 => U32,
            16 => U16,
            17 => I4,
            18 => BF16,
            19 => I2,
            20..=22 => Other(code),
            _ => return None,
        })
    }

    /// The schema code (inverse of [`DType::from_code`]).
    pub fn code(self) -> i8 {
        use DType::*;
        match self {
            F32 => 0,
            F16 => 1,
            I32 => 2,
            U8 => 3,
            I64 => 4,
            String => 5,
            Bool => 6,
            I16 => 7,
            C64 => 8,
            I8 => 9,
            F64 => 10,
            C128 => 11,
            U64 => 12,
            Resource => 13,
            Variant => 14,
            U32 => 15,
            U16 => 16,
            I4 => 17,
            BF16 => 18,
            I2 => 19,
            Other(c) => c,
        }
    }

    /// Bytes per element as `TfLiteTypeSizeOf` reports it (int4 is stored unpacked,
    /// one byte per element). `None` where TFLM fails to size the type.
    pub fn size_bytes(self) -> Option<u32> {
        use DType::*;
        match self {
            F32 | I32 | U32 | Resource => Some(4),
            F16 | BF16 | I16 | U16 => Some(2),
            I8 | U8 | Bool | I4 => Some(1),
            I64 | U64 | F64 | C64 => Some(8),
            C128 => Some(16),
            String | I2 | Variant | Other(_) => None,
        }
    }

    /// Lower-case name as numpy spells it (`int8`, `float32`, …).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            F32 => "float32",
            F16 => "float16",
            I32 => "int32",
            U8 => "uint8",
            I64 => "int64",
            String => "string",
            Bool => "bool",
            I16 => "int16",
            C64 => "complex64",
            I8 => "int8",
            F64 => "float64",
            C128 => "complex128",
            U64 => "uint64",
            Resource => "resource",
            Variant => "variant",
            U32 => "uint32",
            U16 => "uint16",
            I4 => "int4",
            BF16 => "bfloat16",
            I2 => "int2",
            Other(_) => "unknown",
        }
    }

    /// Float types (kernels treat these as non-quantized).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
