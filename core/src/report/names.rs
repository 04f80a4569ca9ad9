//! The report's closed sets of words: enums that serialize to exactly the
//! strings the JSON contract has always carried, so shells match on variants
//! instead of comparing strings.

use core::fmt;

/// Declares a fieldless enum whose serde form, [`fmt::Display`] and
/// `as_str` are the given strings, and whose `from_name` inverts them.
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum $name {
            $($(#[$vmeta])* #[cfg_attr(feature = "serde", serde(rename = $text))] $variant,)+
        }

        impl $name {
            /// The word as the JSON contract spells it.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// The variant spelled `text`, if any.
            pub fn from_name(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // `pad` so that width and alignment flags apply, as for a string.
                f.pad(self.as_str())
            }
        }
    };
}

named_enum! {
    /// What a head buffer holds.
    pub enum BufferClass {
        /// A tensor's activations.
        Tensor => "tensor",
        /// A kernel's scratch buffer.
        Scratch => "scratch",
    }
}

named_enum! {
    /// Where a variable tensor lives.
    pub enum Region {
        /// In the head, at the offset the model's offline plan gives.
        Head => "head",
        /// In the persistent tail (TFLM's "TfLiteTensor variable buffer data").
        Tail => "tail",
    }
}

named_enum! {
    /// How long a variable tensor lives.
    pub enum VariableLifetime {
        /// Allocated once, kept across invocations for the interpreter's life.
        Interpreter => "interpreter",
    }
}

named_enum! {
    /// Which phase of `AllocateTensors` needs the most arena.
    pub enum MinimumPhase {
        /// Kernels' Prepare with its temporary allocations.
        Prepare => "prepare",
        /// Memory planning (the planner's own scratch).
        Planning => "memory planning",
        /// The final head and tail.
        Final => "final head+tail",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_pad_like_strings() {
        for p in [
            MinimumPhase::Prepare,
            MinimumPhase::Planning,
            MinimumPhase::Final,
        ] {
            assert_eq!(MinimumPhase::from_name(p.as_str()), Some(p));
        }
        assert_eq!(
            BufferClass::from_name("scratch"),
            Some(BufferClass::Scratch)
        );
        assert_eq!(BufferClass::from_name("Scratch"), None);
        assert_eq!(alloc::format!("[{:<8}]", Region::Tail), "[tail    ]");
        assert_eq!(
            serde_json::to_string(&MinimumPhase::Final).unwrap(),
            "\"final head+tail\""
        );
        assert_eq!(
            serde_json::from_str::<BufferClass>("\"tensor\"").unwrap(),
            BufferClass::Tensor
        );
    }
}
