//! Stage 4: execution. Runs a validated graph on input tensors in topological order: dead
//! layers are skipped, chains of elementwise layers run fused and in place when they can
//! (`group.rs`), a tensor is freed after its last use, Results share their producer's tensor.

mod group;

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use crate::graph::{Graph, Node};
use crate::memory::Budget;
use crate::model::Model;
use crate::ops::{EvalError, Op};
use crate::shape::PartialShape;
use crate::tensor::Tensor;

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
        let g = self.graph();
        let bound = bind(g, inputs.into_iter().map(|(k, t)| (k, Arc::new(t))))?;
        execute(g, bound, self.memory_limit(), None)
    }

    /// Runs the model on shared input tensors, which are not copied (for repeated runs on the
    /// same inputs, as `ovir bench` does).
    pub fn run_shared<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Arc<Tensor>)>,
    ) -> Result<Vec<Output>, Error> {
        let g = self.graph();
        let bound = bind(g, inputs)?;
        execute(g, bound, self.memory_limit(), None)
    }

    /// Runs the model like [`Model::run`], showing `observe` every layer output (Parameters,
    /// Consts and computed layers; not Results) as soon as it is computed, in execution order.
    /// An error from `observe` stops the run. Layers are not fused, so that each output is seen.
    pub fn run_observed<K: Into<InputKey>>(
        &self,
        inputs: impl IntoIterator<Item = (K, Tensor)>,
        mut observe: impl FnMut(Produced<'_>) -> Result<(), Error>,
    ) -> Result<Vec<Output>, Error> {
        let g = self.graph();
        let bound = bind(g, inputs.into_iter().map(|(k, t)| (k, Arc::new(t))))?;
        execute(g, bound, self.memory_limit(), Some(&mut observe))
    }
}

/// Binds inputs to Parameters and checks their types and shapes (every problem at once).
fn bind<K: Into<InputKey>>(
    g: &Graph,
    inputs: impl IntoIterator<Item = (K, Arc<Tensor>)>,
) -> Result<Vec<Arc<Tensor>>, Error> {
    let n = g.inputs.len();
    let display = |i: usize| {
        g.input_names(i)
            .first()
            .map_or_else(|| format!("#{i}"), |s| s.to_string())
    };
    let mut slots: Vec<Option<Arc<Tensor>>> = vec![None; n];
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
        if let Op::Parameter(p) = &g.nodes[g.inputs[i]].op {
            let at = g.locate(g.inputs[i], None);
            if p.element_type != crate::ElementType::Dynamic
                && tensor.element_type() != p.element_type
            {
                errors.push(Error::at(
                    ErrorKind::InputType {
                        name: display(i),
                        expected: p.element_type,
                        got: tensor.element_type(),
                    },
                    at,
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
                    at,
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

/// What [`Model::run_observed`] shows each layer output to.
type Observer<'o> = dyn FnMut(Produced<'_>) -> Result<(), Error> + 'o;

/// A computed value: a tensor, or a Const's bytes in the memory-mapped weights file, which
/// elementwise layers read in place (a tensor is made only for other consumers).
#[derive(Clone, Debug)]
enum Value<'g> {
    Tensor(Arc<Tensor>),
    Mapped(Mapped<'g>),
}

#[derive(Clone, Debug)]
struct Mapped<'g> {
    node: usize,
    ty: crate::ElementType,
    shape: Vec<usize>,
    bytes: &'g [u8],
}

impl Value<'_> {
    fn element_type(&self) -> crate::ElementType {
        match self {
            Value::Tensor(t) => t.element_type(),
            Value::Mapped(m) => m.ty,
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Value::Tensor(t) => t.shape(),
            Value::Mapped(m) => &m.shape,
        }
    }

    /// The value as a tensor (a Const's bytes are copied, within the budget).
    fn tensor(&self, g: &Graph, budget: &Budget) -> Result<Arc<Tensor>, Error> {
        match self {
            Value::Tensor(t) => Ok(t.clone()),
            Value::Mapped(m) => {
                budget
                    .check("copy of the Const", m.bytes.len() as u64)
                    .map_err(|k| Error::at(k, g.locate(m.node, None)))?;
                Tensor::from_le_bytes(m.ty, &m.shape, m.bytes)
                    .map(Arc::new)
                    .ok_or_else(|| internal(g, m.node, "a Const's bytes do not match its shape"))
            }
        }
    }
}

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
        .map_err(|k| (node, Error::at(k, g.locate(node, None))))
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

fn eval_error(g: &Graph, node: usize, e: EvalError) -> Error {
    let kind = match e {
        EvalError::DivisionByZero { index } => ErrorKind::DivisionByZero {
            index: format!("{index:?}"),
        },
        EvalError::DivisionOverflow { index } => ErrorKind::DivisionOverflow {
            index: format!("{index:?}"),
        },
        other => ErrorKind::Eval {
            message: other.to_string(),
        },
    };
    Error::at(kind, g.locate(node, None))
}

fn execute(
    g: &Graph,
    inputs: Vec<Arc<Tensor>>,
    limit: u64,
    mut observe: Option<&mut Observer<'_>>,
) -> Result<Vec<Output>, Error> {
    let mut dead = vec![false; g.nodes.len()];
    for &i in &g.dead {
        dead[i] = true;
    }
    let root = group::roots(g, &dead, observe.is_none());
    let members = group::members(g, &root);
    let mut pos = vec![0; g.nodes.len()];
    for (k, &n) in g.order.iter().enumerate() {
        pos[n] = k;
    }
    let mut values: Values = g
        .nodes
        .iter()
        .map(|n| vec![None; n.outputs.len()])
        .collect();
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
    // Inputs count against the budget; each tensor made is checked before it is allocated.
    let mut budget = Budget {
        limit,
        in_use: inputs.iter().map(|t| t.bytes()).sum(),
    };
    let mut inputs: Vec<Option<Arc<Tensor>>> = inputs.into_iter().map(Some).collect();
    let input_of: HashMap<usize, usize> =
        g.inputs.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    let mut results: HashMap<usize, Arc<Tensor>> = HashMap::new();

    for &i in &g.order {
        if dead[i] || root[i] != i {
            // Dead, or computed with its group's root.
            continue;
        }
        let group: &[usize] = members.get(&i).map_or(std::slice::from_ref(&i), |m| m);
        let node = &g.nodes[i];
        let arg =
            |values: &Values, budget: &Budget, j: usize| -> Result<Arc<Tensor>, (usize, Error)> {
                let src = node.inputs[j].source;
                values[src.node][src.port]
                    .as_ref()
                    .ok_or_else(|| internal(g, i, "an input was not computed"))
                    .and_then(|v| v.tensor(g, budget))
                    .map_err(|e| (i, e))
            };
        let computed: Result<Option<Value<'_>>, (usize, Error)> = match &node.op {
            Op::Parameter(_) => Ok(input_of
                .get(&i)
                .and_then(|&k| inputs[k].take())
                .map(Value::Tensor)),
            Op::Const(c) => const_bytes(g, i, c)
                .map(|m| Some(Value::Mapped(m)))
                .map_err(|e| (i, e)),
            Op::Convert(c) => arg(&values, &budget, 0).and_then(|x| {
                output_fits(&budget, g, i, c.destination_type, x.len())?;
                c.eval(&x)
                    .map(|t| Some(Value::Tensor(Arc::new(t))))
                    .map_err(|e| (i, eval_error(g, i, e)))
            }),
            Op::Subtract(_) | Op::Divide(_) => {
                group::run(g, group, &mut values, &uses, &mut budget)
                    .map(|t| Some(Value::Tensor(t)))
            }
            Op::Result(_) => arg(&values, &budget, 0).map(|t| {
                results.insert(i, t);
                None
            }),
        };
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
        if let Some(v) = out {
            if let Some(observe) = observe.as_mut() {
                observe(Produced {
                    node,
                    port: 0,
                    tensor: &*v.tensor(g, &budget)?,
                })?;
            }
            // Inputs were counted from the start.
            if let Value::Tensor(t) = &v
                && !matches!(node.op, Op::Parameter(_))
            {
                budget.add(t.bytes());
            }
            values[i][0] = Some(v);
        }
        for p in group.iter().flat_map(|&m| &g.nodes[m].inputs) {
            let u = &mut uses[p.source.node][p.source.port];
            *u = u.saturating_sub(1);
            if *u == 0 {
                // Freed unless a Result or the caller still holds it.
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
    let shape: Vec<usize> = c
        .shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| fail("the Const is too large".into())))
        .collect::<Result<_, _>>()?;
    let needed = c
        .elements()
        .and_then(|e| c.element_type.storage_bytes(e))
        .ok_or_else(|| fail("the Const is too large".into()))?;
    let bytes = match &g.weights {
        Some(w) => w.bytes(c.offset, needed),
        None if needed == 0 => Some(&[][..]),
        None => None,
    }
    .ok_or_else(|| fail("the Const data are not in the weights file".into()))?;
    if !crate::dispatch!(c.element_type, T => <T as crate::tensor::Element>::SIZE > 0, _ => false) {
        return Err(fail(format!(
            "ovir does not compute with {} Consts",
            c.element_type
        )));
    }
    Ok(Mapped {
        node,
        ty: c.element_type,
        shape,
        bytes,
    })
}
