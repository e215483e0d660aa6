//! A counting global allocator for the no-allocation tests: it counts the allocations (and
//! reallocations) of the thread that asked, so the test harness running beside it does not
//! disturb the count. A test binary installs it with `herd_testutil::counting_allocator!();`
//! (one global allocator per binary; the macro also adds the test `the_counter_counts`,
//! which fails if the counter is not installed and every count would read 0) and measures
//! with [`allocations_in`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to [`System`], counting on the threads that asked ([`allocations_in`]).
pub struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are const-initialized
// thread locals, which do not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count() {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

/// The allocations `f` made on this thread (with [`Counting`] installed).
pub fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Installs [`Counting`] as the test binary's global allocator, with a test that fails if it
/// does not count (every "allocates nothing" would then pass for nothing).
#[macro_export]
macro_rules! counting_allocator {
    () => {
        #[global_allocator]
        static GLOBAL: $crate::alloc::Counting = $crate::alloc::Counting;

        #[test]
        fn the_counter_counts() {
            let n = $crate::alloc::allocations_in(|| {
                drop(std::hint::black_box(Vec::<u8>::with_capacity(8)))
            });
            assert_eq!(n, 1);
        }
    };
}
