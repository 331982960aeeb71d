//! Stage 4: execution. Runs a validated graph on input tensors in topological order: dead
//! layers are skipped, chains of elementwise layers run fused and in place when they can
//! (`group.rs`), constant subgraphs are computed once per model and kept (`fold.rs`), a tensor
//! is freed after its last use, Results share their producer's tensor. Each layer is computed
//! by its op ([`Op::eval`](crate::ops::Op::eval)); what the graph does itself is by role
//! (inputs, Consts, outputs). A model with a live layer ovir does not implement is refused
//! before anything runs.

pub mod fold;
mod group;
mod mixed;
mod profile;

use std::collections::HashMap;
use std::sync::Arc;

pub use fold::Folded;
pub use profile::{Profile, StepTime};

use crate::error::{Error, ErrorKind, OpaqueUse};
use crate::graph::{Graph, Node};
use crate::memory::Budget;
use crate::model::Model;
use crate::ops::{EvalCx, Prepared, Role};
use crate::shape::PartialShape;
use crate::tensor::{Mapped, Tensor, Value};

/// How an input is named when binding: by a tensor or layer name, or by position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputKey {
    Name(String),
    Index(usize),
}

impl From<&str> for InputKey {
    fn from(s: &str) -> InputKey {
        InputKey::Name(s.to_owned())
    }
}

impl From<String> for InputKey {
    fn from(s: String) -> InputKey {
        InputKey::Name(s)
    }
}

impl From<usize> for InputKey {
    fn from(i: usize) -> InputKey {
        InputKey::Index(i)
    }
}

/// One model output.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: String,
    pub tensor: Arc<Tensor>,
}

/// A layer output as execution produces it (see [`Model::run_observed`]).
#[derive(Clone, Copy, Debug)]
pub struct Produced<'a> {
    pub node: &'a Node,
    /// The output's position among the layer's outputs (OpenVINO's `output(i)`).
    pub port: usize,
    pub tensor: &'a Tensor,
}

/// Whether a concrete shape fits a partial shape.
pub fn fits(shape: &[usize], partial: &PartialShape) -> bool {
    match partial.dims() {
        None => true,
        Some(dims) => {
            dims.len() == shape.len() && dims.iter().zip(shape).all(|(d, &s)| d.contains(s as u64))
        }
    }
}

impl Model {
    /// Runs the model. Inputs bind by any tensor name of their Parameter, its layer name, or
    /// position (`0usize`, `1usize`, ...).
    ///
    /// ```
    /// use ndarray::arr1;
    /// let model = ovir::Model::load("ir_samples/int_divide/model.xml")?;
    /// let a = arr1(&[7i32, 7, -7, -7, 0, 1, -1]).into_dyn();
    /// let b = arr1(&[3i32, -3, 2, -2, 5, -5, 5]).into_dyn();
    /// let out = model.run([("a", a.into()), ("b", b.into())])?;
    /// assert_eq!(out[0].name, "floor");
    /// assert_eq!(out[0].tensor.view::<i32>().unwrap().as_slice().unwrap(), &[2, -3, -4, 3, 0, -1, -1]);
    /// # Ok::<(), ovir::Error>(())
    /// ```
    pub fn run<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Tensor)>,
    ) -> Result<Vec<Output>, Error> {
        self.runnable()?;
        let g = self.graph();
        let bound = bind(
            g,
            inputs
                .into_iter()
                .map(|(k, t)| (k, Value::Tensor(Arc::new(t)))),
        )?;
        execute(
            g,
            bound,
            self.memory_limit(),
            Some(self.folded()?),
            None,
            None,
        )
    }

    /// Runs the model on shared input tensors, which are not copied (for repeated runs on the
    /// same inputs, as `ovir bench` does).
    pub fn run_shared<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Arc<Tensor>)>,
    ) -> Result<Vec<Output>, Error> {
        self.run_values(inputs.into_iter().map(|(k, t)| (k, Value::Tensor(t))))
    }

    /// Runs the model on input values: tensors, or elements the caller lends
    /// ([`Value::borrowed`], [`Value::from_slice`]), which are read where they lie and never
    /// written. Elementwise layers and fused chains read a lent input in place; the first
    /// layer that needs a tensor of it (a Convolution, a MatMul...) makes one copy, which the
    /// input's other such readers share until the run ends.
    ///
    /// ```
    /// use ovir::Value;
    /// let model = ovir::Model::load("ir_samples/int_divide/model.xml")?;
    /// let a = vec![7i32, 7, -7, -7, 0, 1, -1];
    /// let b = vec![3i32, -3, 2, -2, 5, -5, 5];
    /// let (a, b) = (Value::from_slice(&[7], &a).unwrap(), Value::from_slice(&[7], &b).unwrap());
    /// let out = model.run_values([("a", a), ("b", b)])?;
    /// assert_eq!(out[0].tensor.view::<i32>().unwrap().as_slice().unwrap(), &[2, -3, -4, 3, 0, -1, -1]);
    /// # Ok::<(), ovir::Error>(())
    /// ```
    pub fn run_values<'a, K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Value<'a>)>,
    ) -> Result<Vec<Output>, Error> {
        self.runnable()?;
        let g = self.graph();
        let bound = bind(g, inputs)?;
        execute(
            g,
            bound,
            self.memory_limit(),
            Some(self.folded()?),
            None,
            None,
        )
    }

    /// Runs the model like [`Model::run_shared`], adding the wall time of each step (a layer,
    /// or a group of fused layers) to `profile`.
    pub fn run_profiled<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Arc<Tensor>)>,
        profile: &mut Profile,
    ) -> Result<Vec<Output>, Error> {
        self.runnable()?;
        let g = self.graph();
        let bound = bind(g, inputs.into_iter().map(|(k, t)| (k, Value::Tensor(t))))?;
        profile.start(g);
        let folded = Some(self.folded()?);
        execute(g, bound, self.memory_limit(), folded, None, Some(profile))
    }

    /// Runs the model like [`Model::run`], showing `observe` every layer output (Parameters,
    /// Consts and computed layers; not Results) as soon as it is computed, in execution order.
    /// An error from `observe` stops the run. Layers are not fused and constant subgraphs are
    /// computed again, so that each output is seen (a Const of a packed type such as u4 is not
    /// shown: no tensor holds it).
    pub fn run_observed<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Tensor)>,
        mut observe: impl FnMut(Produced<'_>) -> Result<(), Error>,
    ) -> Result<Vec<Output>, Error> {
        self.runnable()?;
        let g = self.graph();
        let bound = bind(
            g,
            inputs
                .into_iter()
                .map(|(k, t)| (k, Value::Tensor(Arc::new(t)))),
        )?;
        execute(
            g,
            bound,
            self.memory_limit(),
            None,
            Some(&mut observe),
            None,
        )
    }

    /// The op types of live layers ovir does not implement, with their counts and first
    /// layers, in order of first appearance (empty when the model runs).
    pub fn unimplemented(&self) -> Vec<OpaqueUse> {
        let g = self.graph();
        if g.opaque.is_empty() {
            return Vec::new();
        }
        let dead = g.dead_mask();
        g.opaque_uses(|i| !dead[i])
    }

    /// Whether every live layer is one ovir runs: else error E605 naming every op type it does
    /// not implement (with counts and first line:col), before any input is read.
    pub fn runnable(&self) -> Result<(), Error> {
        let ops = self.unimplemented();
        if ops.is_empty() {
            return Ok(());
        }
        let at = crate::error::Location::file(&self.graph().file);
        Err(Error::at(ErrorKind::CannotRun { ops }, at))
    }
}

/// Binds inputs to Parameters and checks their types and shapes (every problem at once).
fn bind<'a, K: Into<InputKey>>(
    g: &Graph,
    inputs: impl IntoIterator<Item = (K, Value<'a>)>,
) -> Result<Vec<Value<'a>>, Error> {
    let n = g.inputs.len();
    let display = |i: usize| {
        g.input_names(i)
            .first()
            .map_or_else(|| format!("#{i}"), |s| s.to_string())
    };
    let mut slots: Vec<Option<Value<'a>>> = vec![None; n];
    // Inputs given but refused (wrong type or shape) are not reported as missing too.
    let mut refused = vec![false; n];
    let mut errors = Vec::new();
    let mut count = 0;
    for (key, tensor) in inputs {
        count += 1;
        let index = match key.into() {
            InputKey::Index(i) if i < n => Some(i),
            InputKey::Index(_) => None,
            InputKey::Name(name) => {
                let found = (0..n).find(|&i| g.input_names(i).contains(&name.as_str()));
                if found.is_none() {
                    errors.push(Error::new(ErrorKind::UnknownInput {
                        name,
                        known: (0..n).map(display).collect(),
                    }));
                }
                found
            }
        };
        let Some(i) = index else {
            if count > n {
                errors.push(Error::new(ErrorKind::TooManyInputs { count, expected: n }));
            }
            continue;
        };
        if slots[i].is_some() {
            errors.push(Error::new(ErrorKind::InputGivenTwice { name: display(i) }));
            continue;
        }
        if let Some(p) = g.nodes[g.inputs[i]].parameter() {
            // Made only for an error (it copies the layer's names).
            let at = || g.locate(g.inputs[i], None);
            if p.element_type != crate::ElementType::Dynamic
                && tensor.element_type() != p.element_type
            {
                errors.push(Error::at(
                    ErrorKind::InputType {
                        name: display(i),
                        expected: p.element_type,
                        got: tensor.element_type(),
                    },
                    at(),
                ));
                refused[i] = true;
                continue;
            }
            // Lent bytes must hold their shape (the fields of a value are public).
            let short = match &tensor {
                Value::Mapped(m) if !m.holds(&m.shape) => Some(m.bytes.len()),
                _ => None,
            };
            if let Some(len) = short {
                errors.push(Error::at(
                    ErrorKind::InputShape {
                        name: display(i),
                        expected: p.shape.to_string(),
                        got: format!(
                            "{} but {len} bytes",
                            crate::io::text::dims_text(tensor.shape())
                        ),
                    },
                    at(),
                ));
                refused[i] = true;
                continue;
            }
            if !fits(tensor.shape(), &p.shape) {
                errors.push(Error::at(
                    ErrorKind::InputShape {
                        name: display(i),
                        expected: p.shape.to_string(),
                        got: crate::io::text::dims_text(tensor.shape()),
                    },
                    at(),
                ));
                refused[i] = true;
                continue;
            }
        }
        slots[i] = Some(tensor);
    }
    for (i, s) in slots.iter().enumerate() {
        if s.is_none() && !refused[i] {
            errors.push(Error::new(ErrorKind::InputNotGiven { name: display(i) }));
        }
    }
    if !errors.is_empty() {
        return Err(Error::from_list(errors));
    }
    Ok(slots.into_iter().flatten().collect())
}

/// A layer's outputs as execution makes them (most layers have one: no list for it).
enum Outs<'g> {
    None,
    One(Value<'g>),
    Many(Vec<Value<'g>>),
    /// The one output is a view of input 0's tensor ([`view`]).
    View(Value<'g>),
}

/// A layer whose output is input 0's elements under another shape ([`Op::view`]): input 0's
/// tensor itself when the shape is the same (shared), or its buffer under the new shape when
/// this layer is its last reader and nothing else holds it (handed on). `None` when neither
/// holds (the layer computes a copy with `eval`).
fn view<'g>(
    g: &Graph,
    node: usize,
    values: &mut Values<'g>,
    uses: &[Vec<usize>],
    budget: &Budget,
    copy: Option<&'g Lent>,
) -> Option<Result<Value<'g>, Error>> {
    let n = &g.nodes[node];
    let src = n.inputs.first()?.source;
    values[src.node][src.port].as_ref()?;
    let shape = {
        let inputs = match args(g, node, values) {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        match n.op.view(&EvalCx::new(&inputs, *budget))? {
            Ok(s) => s,
            Err(e) => return Some(Err(eval_error(g, node, e))),
        }
    };
    match &values[src.node][src.port] {
        Some(Value::Tensor(t)) if t.shape() == shape.as_slice() => {
            return Some(Ok(Value::Tensor(Arc::clone(t))));
        }
        // Bytes read in place (a lent input, a Const when constants are not folded) are the
        // same bytes under the new shape; an op needing a tensor of them copies (once, into
        // this layer's `copy`).
        Some(Value::Mapped(m)) => {
            if m.shape == shape {
                return Some(Ok(Value::Mapped(m.clone())));
            }
            return m.holds(&shape).then(|| {
                Ok(Value::Mapped(Mapped {
                    shape,
                    copy,
                    ..m.clone()
                }))
            });
        }
        _ => {}
    }
    let readers = n
        .inputs
        .iter()
        .filter(|p| p.source.node == src.node && p.source.port == src.port)
        .count();
    if uses[src.node][src.port] != 1 || readers != 1 {
        return None;
    }
    let Some(Value::Tensor(t)) = values[src.node][src.port].take() else {
        return None;
    };
    let back = |t| Some(Value::Tensor(t));
    match Arc::try_unwrap(t) {
        Ok(t) => match t.into_shape(&shape) {
            Ok(v) => Some(Ok(Value::Tensor(Arc::new(v)))),
            Err(t) => {
                values[src.node][src.port] = back(Arc::new(t));
                None
            }
        },
        Err(t) => {
            values[src.node][src.port] = back(t);
            None
        }
    }
}

/// Where the one tensor copy of a lent value is kept ([`Mapped`]'s `copy`).
type Lent = std::sync::OnceLock<Option<Arc<Tensor>>>;

/// What [`Model::run_observed`] shows each layer output to.
type Observer<'o> = dyn FnMut(Produced<'_>) -> Result<(), Error> + 'o;

/// Checks that an output of `count` elements of `ty` fits the budget; the error is at `node`.
fn output_fits(
    budget: &Budget,
    g: &Graph,
    node: usize,
    ty: crate::ElementType,
    count: usize,
) -> Result<(), (usize, Error)> {
    // An overflowing size never fits, and `bytes_text` words `u64::MAX` as an overflow.
    let needed = ty.storage_bytes(count as u64).unwrap_or(u64::MAX);
    budget
        .check("output", needed)
        .map_err(|k| (node, Error::at(k.into(), g.locate(node, None))))
}

/// Computed values: per node, per output port.
type Values<'g> = Vec<Vec<Option<Value<'g>>>>;

fn internal(g: &Graph, node: usize, what: &str) -> Error {
    Error::at(
        ErrorKind::Eval {
            message: format!("internal error: {what}"),
        },
        g.locate(node, None),
    )
}

fn eval_error(g: &Graph, node: usize, e: crate::ops::EvalError) -> Error {
    Error::at(e.into_kind(), g.locate(node, None))
}

/// The inputs of `node`, as computed.
fn args<'g>(g: &Graph, node: usize, values: &Values<'g>) -> Result<Vec<Value<'g>>, Error> {
    g.nodes[node]
        .inputs
        .iter()
        .map(|p| {
            values[p.source.node][p.source.port]
                .clone()
                .ok_or_else(|| internal(g, node, "an input was not computed"))
        })
        .collect()
}

/// Computes one layer with its op. The outputs' sizes are checked against the budget by the
/// op before it allocates them.
fn eval_node<'g>(
    g: &Graph,
    node: usize,
    values: &Values<'g>,
    budget: &Budget,
    unread: u64,
    prepared: Option<&Prepared>,
) -> Result<Vec<Tensor>, Error> {
    eval_with(g, node, &args(g, node, values)?, budget, unread, prepared)
}

/// [`eval_node`] on the inputs given. The outputs of the bits of `unread` are read by
/// nothing ([`EvalCx::output_unread`]); `prepared` is what the op prepared for the layer
/// ([`Op::prepare`](crate::ops::Op::prepare)).
fn eval_with(
    g: &Graph,
    node: usize,
    inputs: &[Value<'_>],
    budget: &Budget,
    unread: u64,
    prepared: Option<&Prepared>,
) -> Result<Vec<Tensor>, Error> {
    let n = &g.nodes[node];
    let cx = EvalCx::new(inputs, *budget)
        .unread(unread)
        .with_prepared(prepared);
    let out = n.op.eval(&cx).map_err(|e| eval_error(g, node, e))?;
    if out.len() != n.outputs.len() {
        return Err(internal(g, node, "the op made another number of outputs"));
    }
    Ok(out)
}

/// A value as a tensor (a Const's bytes are copied, within the budget).
fn as_tensor(g: &Graph, node: usize, v: &Value<'_>, budget: &Budget) -> Result<Arc<Tensor>, Error> {
    crate::ops::context::tensor_of(v, budget).map_err(|e| eval_error(g, node, e))
}

fn execute(
    g: &Graph,
    inputs: Vec<Value<'_>>,
    limit: u64,
    folded: Option<&Folded>,
    mut observe: Option<&mut Observer<'_>>,
    mut profile: Option<&mut Profile>,
) -> Result<Vec<Output>, Error> {
    let mut dead = g.dead_mask();
    // Layers computed once per model: their values are taken as they are.
    if let Some(f) = folded {
        for (i, d) in dead.iter_mut().enumerate() {
            if f.covers(i) {
                *d = true;
            }
        }
    }
    let root = group::roots(g, &dead, observe.is_none());
    let members = group::members(g, &root);
    let mut pos = vec![0; g.nodes.len()];
    for (k, &n) in g.order.iter().enumerate() {
        pos[n] = k;
    }
    // Per layer, the copy of a lent input (or a view of one) that ops needing a tensor read,
    // made at the first such read: none when no input is lent and constants are folded.
    let lent = folded.is_none() || inputs.iter().any(|v| matches!(v, Value::Mapped(_)));
    let copies: Vec<Lent> = if lent {
        g.nodes.iter().map(|_| Lent::new()).collect()
    } else {
        Vec::new()
    };
    let mut values: Values = g
        .nodes
        .iter()
        .map(|n| vec![None; n.outputs.len()])
        .collect();
    if let Some(f) = folded {
        f.seed(&mut values);
    }
    // Uses left of each output, so a tensor is dropped after its last consumer.
    let mut uses: Vec<Vec<usize>> = g
        .nodes
        .iter()
        .map(|n| {
            n.outputs
                .iter()
                .map(|p| p.consumers.iter().filter(|(c, _)| !dead[*c]).count())
                .collect()
        })
        .collect();
    // Inputs and folded constants count against the budget; each tensor made is checked
    // before it is allocated.
    let mut budget = Budget {
        limit,
        in_use: inputs.iter().map(|t| t.bytes()).sum::<u64>() + folded.map_or(0, |f| f.bytes()),
    };
    let mut inputs: Vec<Option<Value<'_>>> = inputs
        .into_iter()
        .zip(&g.inputs)
        .map(|(v, &n)| {
            Some(match v {
                Value::Mapped(m) => Value::Mapped(Mapped {
                    copy: copies.get(n),
                    ..m
                }),
                v => v,
            })
        })
        .collect();
    let input_of: HashMap<usize, usize> =
        g.inputs.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    let mut results: HashMap<usize, Arc<Tensor>> = HashMap::new();
    // The outputs of a layer that nothing reads (no consumer, no observer): bit `port`.
    let watched = observe.is_some();
    let unread = |uses: &[usize]| -> u64 {
        if watched {
            return 0;
        }
        uses.iter()
            .take(64)
            .enumerate()
            .filter(|(_, u)| **u == 0)
            .fold(0, |m, (p, _)| m | 1 << p)
    };

    for &i in &g.order {
        if dead[i] || root[i] != i {
            // Dead, folded, or computed with its group's root.
            continue;
        }
        let group: &[usize] = members.get(&i).map_or(std::slice::from_ref(&i), |m| m);
        let node = &g.nodes[i];
        let timed = (profile.is_some() && matches!(node.op.role(), Role::Compute))
            .then(std::time::Instant::now);
        let prepared = folded.and_then(|f| f.prepared(i));
        let computed: Result<Outs<'_>, (usize, Error)> = match node.op.role() {
            Role::Input(_) => Ok(input_of
                .get(&i)
                .and_then(|&k| inputs[k].take())
                .map_or(Outs::None, Outs::One)),
            Role::Constant(c) => const_bytes(g, i, c)
                .map(|m| Outs::One(Value::Mapped(m)))
                .map_err(|e| (i, e)),
            Role::Output => {
                let src = node.inputs[0].source;
                values[src.node][src.port]
                    .as_ref()
                    .ok_or_else(|| internal(g, i, "an input was not computed"))
                    .and_then(|v| as_tensor(g, src.node, v, &budget))
                    .map(|t| {
                        results.insert(i, t);
                        Outs::None
                    })
                    .map_err(|e| (i, e))
            }
            Role::Opaque(_) => Err((i, internal(g, i, "an opaque layer reached execution"))),
            Role::Compute if group.len() > 1 || group::fusable_node(node) => {
                group::run(g, group, &mut values, &uses, &mut budget)
                    .map(|t| Outs::One(Value::Tensor(t)))
            }
            Role::Compute => match node
                .op
                .view_like()
                .then(|| view(g, i, &mut values, &uses, &budget, copies.get(i)))
                .flatten()
            {
                Some(v) => v.map(Outs::View).map_err(|e| (i, e)),
                None => eval_node(g, i, &values, &budget, unread(&uses[i]), prepared)
                    .map(|out| {
                        Outs::Many(
                            out.into_iter()
                                .map(|t| Value::Tensor(Arc::new(t)))
                                .collect(),
                        )
                    })
                    .map_err(|e| (i, e)),
            },
        };
        if let (Some(p), Some(t)) = (profile.as_mut(), timed) {
            p.add(i, group, t.elapsed());
        }
        let out = match computed {
            Ok(out) => out,
            Err((failed, e)) => {
                // Layers fused into a later group that come before the failed one in
                // execution order would have failed first when run one by one: report theirs.
                let before: Vec<usize> = g
                    .order
                    .iter()
                    .take_while(|&&n| n != failed)
                    .copied()
                    .filter(|&n| !dead[n] && root[n] != n && pos[root[n]] > pos[i])
                    .collect();
                if before.is_empty() {
                    return Err(e);
                }
                return Err(group::one_by_one(g, &before, &values, &budget)
                    .err()
                    .map_or(e, |(_, e)| e));
            }
        };
        // (A list of one would cost an allocation per layer and run.)
        // A view's bytes are its input's (shared, or handed on): counted once.
        let fresh = !matches!(out, Outs::View(_));
        let (first, rest) = match out {
            Outs::None => (None, Vec::new()),
            Outs::One(v) | Outs::View(v) => (Some(v), Vec::new()),
            Outs::Many(v) => (None, v),
        };
        for (port, v) in first.into_iter().chain(rest).enumerate() {
            if let Some(observe) = observe.as_mut()
                && crate::tensor::TypeSet::ANY.contains(v.element_type())
            {
                let t = as_tensor(g, i, &v, &budget)?;
                observe(Produced {
                    node,
                    port,
                    tensor: &t,
                })?;
            }
            if !watched && uses[i].get(port) == Some(&0) {
                // Read by nothing (an op may have left it empty): dropped now.
                continue;
            }
            // Inputs were counted from the start.
            if let Value::Tensor(t) = &v
                && fresh
                && !matches!(node.op.role(), Role::Input(_))
            {
                budget.add(t.bytes());
            }
            if port < values[i].len() {
                values[i][port] = Some(v);
            }
        }
        for p in group.iter().flat_map(|&m| &g.nodes[m].inputs) {
            let u = &mut uses[p.source.node][p.source.port];
            *u = u.saturating_sub(1);
            if *u == 0 {
                // Freed unless a Result, a folded constant or the caller still holds it.
                if let Some(Value::Tensor(t)) = values[p.source.node][p.source.port].take()
                    && Arc::strong_count(&t) == 1
                {
                    budget.remove(t.bytes());
                }
            }
        }
    }
    g.outputs
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let tensor = results.remove(n);
            tensor
                .map(|tensor| Output {
                    name: g.output_name(k).to_owned(),
                    tensor,
                })
                .ok_or_else(|| {
                    Error::new(ErrorKind::Eval {
                        message: "internal error: an output was not computed".into(),
                    })
                })
        })
        .collect()
}

/// A Const's bytes in the weights file, checked against its type and shape.
fn const_bytes<'g>(
    g: &'g Graph,
    node: usize,
    c: &crate::ops::constant::Const,
) -> Result<Mapped<'g>, Error> {
    let fail = |message: String| Error::at(ErrorKind::Eval { message }, g.locate(node, None));
    // Checked first: a string has no fixed size, which the byte count below would call too large.
    if c.element_type == crate::ElementType::String || c.element_type == crate::ElementType::Dynamic
    {
        return Err(fail(format!(
            "ovir does not compute with {} Consts",
            c.element_type
        )));
    }
    let shape: Vec<usize> = c
        .shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| fail("the Const is too large".into())))
        .collect::<Result<_, _>>()?;
    let needed = c
        .needed_bytes()
        .ok_or_else(|| fail("the Const is too large".into()))?;
    let bytes = match &g.weights {
        Some(w) => w.bytes(c.offset, needed),
        None if needed == 0 => Some(&[][..]),
        None => None,
    }
    .ok_or_else(|| fail("the Const data are not in the weights file".into()))?;
    Ok(Mapped::new(c.element_type, shape, bytes))
}
