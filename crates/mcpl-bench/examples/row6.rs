//! Temporary: row 6 alone.
fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let settings = mcpl_bench::replicas::Settings {
        changes: 300,
        budget: std::time::Duration::from_secs(10),
    };
    let out = rt.block_on(mcpl_bench::replicas::measure(&settings));
    println!("{out:?}");
}
