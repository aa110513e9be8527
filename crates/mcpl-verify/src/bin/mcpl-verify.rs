//! `mcpl-verify`: runs the fault schedules and the model check; see `scripts/verify`.

use mcpl_verify::{model, schedule};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut schedules = 10_000u64;
    let mut seed: Option<u64> = None;
    let mut first = 0u64;
    let mut verbose = false;
    let mut model_check = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| usage(a))
        };
        match a.as_str() {
            "--schedules" => schedules = value(),
            "--seed" => seed = Some(value()),
            "--first" => first = value(),
            "--verbose" => verbose = true,
            "--no-model" => model_check = false,
            _ => usage(a),
        }
    }
    let mut failed = false;
    if let Some(s) = seed {
        let r = schedule::run(s);
        for line in &r.log {
            println!("{line}");
        }
        for v in &r.violations {
            println!("violation: {}", v.0);
        }
        println!(
            "convergence: {}/1 schedules converge (seed {s})",
            u64::from(r.ok())
        );
        std::process::exit(i32::from(!r.ok()));
    }
    let mut ok = 0u64;
    for s in first..first + schedules {
        let r = schedule::run(s);
        if r.ok() {
            ok += 1;
        } else {
            failed = true;
            println!("seed {s} fails (replay: scripts/verify --seed {s}):");
            for v in &r.violations {
                println!("  {}", v.0);
            }
            if verbose {
                for line in &r.log {
                    println!("    {line}");
                }
            }
        }
    }
    println!("convergence: {ok}/{schedules} schedules converge");
    if model_check {
        let (states, violations) = model::check(model::Rules::Real);
        println!("model check: {states} states, {violations} violations");
        failed |= violations > 0;
        // The check must also see a bug: each planted one is found.
        for rules in model::Rules::PLANTED {
            let found = model::first_failures(rules);
            println!("model check, planted bug {rules:?}: found by {found:?}");
            failed |= found.is_empty();
        }
    }
    std::process::exit(i32::from(failed));
}

fn usage(arg: &str) -> ! {
    eprintln!(
        "mcpl-verify: bad argument {arg:?}\nusage: mcpl-verify [--schedules N] [--first S] [--seed S] [--verbose] [--no-model]"
    );
    std::process::exit(2)
}
