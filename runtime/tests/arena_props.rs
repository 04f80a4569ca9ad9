//! Property test of the arena allocator: random request sequences never
//! overlap each other or the planned head, never leave the arena, always
//! respect the requested alignment, and fail cleanly once Invoke has begun.

use microarena_runtime::{ArenaAllocator, Error};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn allocations_never_overlap_or_escape(
        len in 0usize..4096,
        head in 0usize..2048,
        reqs in proptest::collection::vec((0usize..700, 0u32..5), 0..40),
    ) {
        let Ok(mut a) = ArenaAllocator::new(len, head) else {
            prop_assert!(head > len & !3);
            return Ok(());
        };
        let mut taken: Vec<(usize, usize)> = Vec::new();
        for (bytes, align_pow) in reqs {
            let align = 1usize << align_pow; // 1..=16
            match a.allocate_persistent(bytes, align) {
                Ok(off) => {
                    prop_assert_eq!(off % align, 0);
                    prop_assert!(off >= head, "into the head");
                    prop_assert!(off + bytes <= len, "past the end");
                    for &(o, b) in &taken {
                        prop_assert!(off + bytes <= o || o + b <= off || bytes == 0 || b == 0, "overlap");
                    }
                    taken.push((off, bytes));
                }
                Err(Error::ArenaTooSmall { needed, available }) => {
                    prop_assert_eq!(available, len);
                    prop_assert!(needed > head);
                }
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
            let u = a.usage();
            prop_assert!(u.used <= len && u.high_water >= u.used && u.used == u.head + u.tail);
        }
        a.finish_prepare();
        prop_assert_eq!(a.allocate_persistent(1, 1), Err(Error::AllocationDuringInvoke));
        prop_assert_eq!(a.request_scratch(0, 1, (0, 16)), Err(Error::AllocationDuringInvoke));
    }

    #[test]
    fn bad_alignments_are_refused(align in 17usize..1000) {
        let mut a = ArenaAllocator::new(1024, 0).unwrap();
        if !align.is_power_of_two() || align > 16 {
            prop_assert_eq!(a.allocate_persistent(8, align), Err(Error::BadAlignment { align }));
        }
    }
}
