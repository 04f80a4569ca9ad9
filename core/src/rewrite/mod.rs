//! Stage 5: models written back — an `OfflineMemoryAllocation` plan TFLM obeys
//! ([`offline`]), a lower-peak operator order ([`reorder`]), and
//! [`optimize`], which chooses among candidate plans by what TFLM would do.

pub mod offline;
pub mod optimize;
pub mod reorder;
