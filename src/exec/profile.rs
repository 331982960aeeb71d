//! Time per execution step, summed over runs: what `ovir bench --per-layer` prints (like
//! `benchmark_app -pc`). A step is one layer, or a fused group named by its last layer.

use std::time::Duration;

use crate::graph::Graph;
use crate::model::Model;

/// Wall time of each step, summed over the runs given to [`Model::run_profiled`].
#[derive(Clone, Debug, Default)]
pub struct Profile {
    runs: u64,
    /// Per node: the time of the step it is the root of.
    time: Vec<Duration>,
    /// Per node: the layers its step computes (empty when it is no step's root).
    members: Vec<Vec<usize>>,
    /// Step roots in the order they first ran.
    order: Vec<usize>,
}

/// One step of a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTime {
    /// The layer whose output the step makes (a fused group's last layer).
    pub layer: String,
    /// The layer types the step computes, in execution order, joined by `+`.
    pub op_type: String,
    /// How many layers the step computes (more than 1 when fused).
    pub layers: usize,
    /// Mean wall time per run.
    pub mean: Duration,
}

impl Profile {
    pub fn new() -> Profile {
        Profile::default()
    }

    /// How many runs the profile sums.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Records that a run starts on `g`.
    pub(super) fn start(&mut self, g: &Graph) {
        if self.time.len() != g.nodes.len() {
            *self = Profile {
                time: vec![Duration::ZERO; g.nodes.len()],
                members: vec![Vec::new(); g.nodes.len()],
                ..Profile::default()
            };
        }
        self.runs += 1;
    }

    /// Adds the time of the step rooted at `root`, which computes `group`.
    pub(super) fn add(&mut self, root: usize, group: &[usize], t: Duration) {
        if self.members[root].is_empty() {
            self.members[root] = group.to_vec();
            self.order.push(root);
        }
        self.time[root] += t;
    }

    /// The steps in the order they ran, with their mean time per run (empty before any run).
    pub fn steps(&self, model: &Model) -> Vec<StepTime> {
        let g = model.graph();
        if self.runs == 0 || self.time.len() != g.nodes.len() {
            return Vec::new();
        }
        let runs = u32::try_from(self.runs).unwrap_or(u32::MAX);
        self.order
            .iter()
            .map(|&root| {
                let members = &self.members[root];
                let types: Vec<&str> = members.iter().map(|&m| g.nodes[m].op.name()).collect();
                StepTime {
                    layer: g.nodes[root].name.clone(),
                    op_type: types.join("+"),
                    layers: members.len(),
                    mean: self.time[root] / runs,
                }
            })
            .collect()
    }
}
