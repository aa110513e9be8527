//! Row 9, change cost, and the growth curves: what one hint change costs the host controller
//! as the open instances grow (1 to 1,000) and as the tools per instance grow (1 to 200).
//!
//! The controller is the sans-IO `mcpl-host` one, ready with `N` instances of toolset `go`
//! open, each with `T` dynamic tools, all visible. Each frame is one `tools/hints` change
//! that turns one tool of one instance invisible or visible again (instances in turn), and
//! its cost is the time to decode it, apply it and drain the effects, as in row 2. A cost that
//! grows with `N` or `T` means the controller does work for what did not change.
//!
//! - **`change_cost_1000_vs_1`**: the cost with 1,000 open instances over the cost with 1
//!   (two tools per instance), in the same run.
//! - A second figure: the cost with 200 tools per instance over the cost with 1 (one
//!   instance).

use crate::chart::Curve;
use crate::controller::{apply_all, ready_with};
use crate::error::BenchError;
use crate::report::{Figure, Unit};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How many frames and passes each point takes.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Frames per pass.
    pub frames: usize,
    /// Passes per point; the best counts.
    pub passes: usize,
    /// The most one pass may take.
    pub budget: Duration,
}

/// The open instances of the instances curve.
pub const INSTANCES: [usize; 7] = [1, 3, 10, 30, 100, 300, 1000];
/// The tools per instance of the tools curve.
pub const TOOLS: [usize; 6] = [1, 3, 10, 30, 100, 200];
/// Tools per instance on the instances curve.
const TOOLS_ON_INSTANCES_CURVE: usize = 2;

/// What the controller holds open: `instances` instances of `go`, `tools` tools each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Open instances.
    pub instances: usize,
    /// Dynamic tools per instance.
    pub tools: usize,
}

fn tool_name(t: usize) -> String {
    format!("t{t}")
}

fn instance_name(i: usize) -> String {
    format!("g{i}")
}

/// The server's `tools/list`: `tools` dynamic tools of toolset `go`, none visible at rev 0.
fn listed(shape: Shape) -> Value {
    let meta = json!({"mcpl/toolset": "go", "mcpl/visible": false});
    let tools: Vec<Value> = (0..shape.tools)
        .map(|t| {
            json!({"name": tool_name(t), "description": format!("Tool {t}."),
                   "inputSchema": {"type": "object"}, "_meta": meta})
        })
        .collect();
    json!({"tools": tools, "_meta": {"mcpl/rev": 0}})
}

/// The full statement at rev 1: every instance open, every tool of each visible.
fn statement(shape: Shape) -> Value {
    let open: Vec<Value> = (0..shape.instances)
        .map(|i| json!({"toolset": "go", "instance": instance_name(i), "title": format!("Game {i}")}))
        .collect();
    let hints: Vec<Value> = (0..shape.instances)
        .flat_map(|i| {
            (0..shape.tools).map(move |t| {
                json!({"name": tool_name(t), "instance": instance_name(i), "visible": true})
            })
        })
        .collect();
    json!({"open": open, "ended": [],
           "_meta": {"mcpl/hints": {"rev": 1, "tools": hints}}})
}

/// The frames: rev 2, 3, ...; frame `k` turns tool `t0` of instance `k mod N` invisible on
/// its odd visits and visible again on its even ones.
pub fn frames(shape: Shape, count: usize) -> Vec<Vec<u8>> {
    let n = shape.instances.max(1);
    (0..count)
        .map(|k| {
            let visible = (k / n) % 2 == 1;
            let msg = json!({"jsonrpc": "2.0", "method": "tools/hints",
                "params": {"rev": k as u64 + 2, "tools": [
                    {"name": tool_name(0), "instance": instance_name(k % n), "visible": visible}]}});
            serde_json::to_vec(&msg).expect("a json value serializes")
        })
        .collect()
}

/// The best (least) cost of one change in µs for `shape`, over `settings.passes` passes.
pub fn cost_per_change(shape: Shape, settings: Settings) -> Result<f64, BenchError> {
    let frames = frames(shape, settings.frames);
    let listed = listed(shape);
    let statement = statement(shape);
    let mut best = f64::INFINITY;
    for _ in 0..settings.passes.max(1) {
        let now = Instant::now();
        let mut controller = ready_with(now, listed.clone(), statement.clone())?;
        let (count, took) = apply_all(&mut controller, &frames, settings.budget, now)?;
        best = best.min(took.as_secs_f64() * 1e6 / count.max(1) as f64);
    }
    Ok(best)
}

/// What row 9 found: its figures and the two curves.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The row's figures.
    pub figures: Vec<Figure>,
    /// Cost of one change against open instances, and against tools per instance.
    pub curves: Vec<Curve>,
}

/// Measures row 9 and its curves.
pub fn measure(settings: Settings) -> Result<Measured, BenchError> {
    let mut by_instances = Vec::new();
    for instances in INSTANCES {
        let shape = Shape {
            instances,
            tools: TOOLS_ON_INSTANCES_CURVE,
        };
        by_instances.push((instances as f64, cost_per_change(shape, settings)?));
    }
    let mut by_tools = Vec::new();
    for tools in TOOLS {
        let shape = Shape {
            instances: 1,
            tools,
        };
        by_tools.push((tools as f64, cost_per_change(shape, settings)?));
    }
    let ends = |curve: &[(f64, f64)]| (curve[0].1, curve[curve.len() - 1].1);
    let (one, thousand) = ends(&by_instances);
    let (one_tool, many_tools) = ends(&by_tools);
    let figures = vec![
        Figure {
            id: Some("change_cost_1000_vs_1"),
            measure: format!(
                "host controller, one hint change with {} open instances ({} tools each)",
                INSTANCES[INSTANCES.len() - 1],
                TOOLS_ON_INSTANCES_CURVE
            ),
            ours: thousand,
            baseline_name: "the same with 1 open instance".into(),
            baseline: one,
            unit: Unit::Micros,
            ..Default::default()
        },
        Figure {
            measure: format!(
                "host controller, one hint change with {} tools per instance (1 instance)",
                TOOLS[TOOLS.len() - 1]
            ),
            ours: many_tools,
            baseline_name: "the same with 1 tool".into(),
            baseline: one_tool,
            unit: Unit::Micros,
            ..Default::default()
        },
    ];
    let curves = vec![
        Curve {
            file: "change-cost-instances.svg".into(),
            title: format!(
                "Host controller: cost of one hint change as open instances grow ({TOOLS_ON_INSTANCES_CURVE} tools each)"
            ),
            x_label: "open instances".into(),
            y_label: "µs per change".into(),
            points: by_instances,
        },
        Curve {
            file: "change-cost-tools.svg".into(),
            title: "Host controller: cost of one hint change as tools per instance grow".into(),
            x_label: "tools per instance (1 instance)".into(),
            y_label: "µs per change".into(),
            points: by_tools,
        },
    ];
    Ok(Measured { figures, curves })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame applies in order against every shape of the curves' ends, and the row has
    /// its id'd figure and two curves with a point per size.
    #[test]
    fn every_shape_applies_its_frames_and_the_row_has_its_curves() {
        let settings = Settings {
            frames: 50,
            passes: 1,
            budget: Duration::from_secs(60),
        };
        let measured = measure(settings).expect("a clean run");
        assert_eq!(measured.figures[0].id, Some("change_cost_1000_vs_1"));
        assert!(
            measured
                .figures
                .iter()
                .all(|f| f.ours > 0.0 && f.baseline > 0.0)
        );
        assert_eq!(measured.curves.len(), 2);
        assert_eq!(measured.curves[0].points.len(), INSTANCES.len());
        assert_eq!(measured.curves[1].points.len(), TOOLS.len());
    }

    #[test]
    fn frames_visit_the_instances_in_turn_and_toggle_on_each_visit() {
        let f = frames(
            Shape {
                instances: 2,
                tools: 3,
            },
            4,
        );
        let hint = |i: usize| -> Value {
            let v: Value = serde_json::from_slice(&f[i]).unwrap();
            v["params"]["tools"][0].clone()
        };
        assert_eq!(hint(0)["instance"], "g0");
        assert_eq!(hint(0)["visible"], false);
        assert_eq!(hint(1)["instance"], "g1");
        assert_eq!(hint(2)["instance"], "g0");
        assert_eq!(hint(2)["visible"], true);
    }
}
