// hotrust: Rust hot functions (generic, in a module, a trait method) for demangling.
// Built with -C opt-level=1 -C force-frame-pointers=yes -g, legacy and v0 mangling.
// usage: hotrust [UNITS]
use std::hint::black_box;

const UNIT: u64 = 10_000_000;

mod hot {
    pub struct Worker<T> {
        pub seed: T,
    }

    impl<T: Copy + Into<u64>> Worker<T> {
        #[inline(never)]
        pub fn run(&self, n: u64) -> u64 {
            let mut acc: u64 = self.seed.into();
            for i in 0..n {
                acc = std::hint::black_box(acc.wrapping_add(i & 7));
            }
            acc
        }
    }

    pub trait Spin {
        fn spin(&self, n: u64) -> u64;
    }

    pub struct Plain;

    impl Spin for Plain {
        #[inline(never)]
        fn spin(&self, n: u64) -> u64 {
            let mut acc = 1u64;
            for i in 0..n {
                acc = std::hint::black_box(acc ^ i);
            }
            acc
        }
    }
}

#[inline(never)]
fn hot_generic<F: Fn(u64) -> u64>(f: F, n: u64) -> u64 {
    let mut r = 0;
    for _ in 0..4 {
        r += f(n / 4);
    }
    r
}

fn main() {
    use hot::Spin;
    let units: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut r = hot::Worker { seed: 1u32 }.run(2 * units * UNIT);
    r = r.wrapping_add(hot::Worker { seed: 2u8 }.run(units * UNIT));
    r = r.wrapping_add(hot::Plain.spin(units * UNIT));
    r = r.wrapping_add(hot_generic(|n| hot::Plain.spin(black_box(n)), units * UNIT));
    println!("{}", r & 1);
}
