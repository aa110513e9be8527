//! Scratch driver (uncommitted): row 3 only, N times.
use std::time::Duration;
fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let calls: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    for _ in 0..runs {
        let figures = rt
            .block_on(mcpl_bench::surface::overhead(
                calls,
                Duration::from_secs(120),
            ))
            .unwrap();
        let f = &figures[0];
        let d = &figures[2];
        println!(
            "surface {:.1} relay {:.1} ratio {:.2} direct {:.1}",
            f.ours,
            f.baseline,
            f.ratio(),
            d.baseline
        );
    }
}
