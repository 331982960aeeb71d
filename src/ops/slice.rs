//! Slice-8: Python's `data[start:stop:step]` on chosen axes.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/slice-8.html>
//!
//! Ports: `data` (any type, rank at least 1), `start`, `stop`, `step` and optionally `axes`
//! (1-D tensors of any integer types, all of one length, at most the data's rank); one output
//! of the data's type and rank. No attributes. Element `i` of `start`, `stop` and `step`
//! slices axis `axes[i]` (negative counts from the end; by default axis `i`); the other axes
//! are kept whole.
//!
//! Slicing is Python's, as the spec says and OpenVINO's shape inference
//! (`slice_shape_inference_utils.hpp`) computes it: a negative `start` or `stop` counts from
//! the end, then both clamp silently to `0..=dim` for a positive step and `-1..=dim - 1` for a
//! negative one (so `INT64_MAX` and `INT64_MIN` mean "to the end" either way); the output dim
//! is `ceil((stop - start) / step)`, at least 0. StridedSlice shares the computation
//! ([`super::strided_slice::range`]).
//!
//! Errors: a `step` of 0; an axis out of range or given twice; lengths that differ or exceed
//! the data's rank; a scalar `data`; a u64 value above `INT64_MAX` (OpenVINO reads the inputs
//! as int64).
//!
//! Inference: with `start`, `stop`, `step` and `axes` known, the exact dims (for an interval
//! data dim, the interval of sizes the slice takes on it); otherwise each sliced axis is
//! `0..=d` for data dim `d` (every axis when `axes` is unknown), the others the data's. Bounds
//! of shape values pass through the data input. Execution copies the innermost contiguous run
//! (every axis after the last sliced one, and that one's too when its step is 1) as one slice.

use super::strided_slice::range as python_range;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::dim::MAX_DIM;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Slice;

pub const DEF: OpDef = OpDef {
    name: "Slice",
    version: 8,
    inputs: Arity::range(4, 5),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Slice))
}

/// The inputs' names, by port.
const PORTS: [&str; 5] = ["data", "start", "stop", "step", "axes"];

/// An invalid input: its port and why.
type Fault = (usize, String);

/// One axis's `start:stop:step`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cut {
    pub(crate) start: i64,
    pub(crate) stop: i64,
    pub(crate) step: i64,
}

impl Cut {
    /// The first index and the count of the slice on a dim of `n`.
    fn on(self, n: u64) -> (i64, u64) {
        python_range(n, Some(self.start), Some(self.stop), self.step)
    }
}

/// The data axes `axes` name (negative from the end), for data of rank `rank`.
fn normalize_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, Fault> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let axis = super::normalize_axis(a, rank).ok_or_else(|| {
            (
                4,
                format!("axis {a} is out of range for data of rank {rank}"),
            )
        })?;
        if std::mem::replace(&mut seen[axis], true) {
            return Err((4, format!("axis {a} (data axis {axis}) is given twice")));
        }
        out.push(axis);
    }
    Ok(out)
}

/// The index of a zero step, as a fault.
fn check_steps(step: &[i64]) -> Result<(), Fault> {
    match step.iter().position(|&s| s == 0) {
        Some(k) => Err((3, format!("`step` element {k} is 0"))),
        None => Ok(()),
    }
}

/// Every data axis's cut (`None`: kept whole), from the values of `start`, `stop`, `step` and
/// `axes` (`None`: the default `0..len`).
fn plan(
    rank: usize,
    start: &[i64],
    stop: &[i64],
    step: &[i64],
    axes: Option<&[i64]>,
) -> Result<Vec<Option<Cut>>, Fault> {
    let m = start.len();
    for (port, len) in [
        (2, stop.len()),
        (3, step.len()),
        (4, axes.map_or(m, <[_]>::len)),
    ] {
        if len != m {
            return Err((
                port,
                format!("`{}` has {len} elements but `start` has {m}", PORTS[port]),
            ));
        }
    }
    if m > rank {
        return Err((
            1,
            format!("`start` has {m} elements, more than the data's rank {rank}"),
        ));
    }
    check_steps(step)?;
    let axes = match axes {
        Some(a) => normalize_axes(a, rank)?,
        None => (0..m).collect(),
    };
    let mut cuts = vec![None; rank];
    for (i, &axis) in axes.iter().enumerate() {
        cuts[axis] = Some(Cut {
            start: start[i],
            stop: stop[i],
            step: step[i],
        });
    }
    Ok(cuts)
}

/// The output dim of `cut` on data dim `d`: for an interval, the least and greatest counts on
/// it. The count is piecewise linear in the dim (then divided by the step and rounded up),
/// with breaks where `start` or `stop` cross 0 or the dim's ends: its extremes lie at the
/// interval's ends or at those breaks (`±start`, `±stop`, give or take one).
pub(crate) fn sliced(d: Dim, cut: Cut) -> Dim {
    if let Some(n) = d.get_static() {
        return Dim::fixed(cut.on(n).1);
    }
    let (lo, far) = (d.min(), d.max().unwrap_or(MAX_DIM));
    let mut breaks = vec![lo];
    for v in [cut.start, cut.stop] {
        for w in [i128::from(v), -i128::from(v)] {
            for n in [w - 1, w, w + 1] {
                if let Ok(n) = u64::try_from(n)
                    && (lo..far).contains(&n)
                {
                    breaks.push(n);
                }
            }
        }
    }
    let count = |n: u64| cut.on(n).1;
    let inner = breaks.iter().map(|&n| count(n));
    let (least, most) = (
        inner.clone().min().unwrap_or(0).min(count(far)),
        inner.max().unwrap_or(0),
    );
    let hi = match d.max() {
        Some(_) => Some(most.max(count(far))),
        // The count still grows at the largest dim: it grows without bound.
        None => (count(far) <= most).then_some(most),
    };
    Dim::interval(least, hi).unwrap_or(Dim::DYNAMIC)
}

/// Where one axis's slice starts, how many indices it takes, and its step.
#[derive(Clone, Copy, Debug)]
struct Run {
    first: usize,
    count: usize,
    step: i64,
}

/// The `total` elements of row-major `data` of `shape` that `runs` select, in row-major order.
fn copy<T: Copy>(data: &[T], shape: &[usize], runs: &[Run], total: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let whole = |k: usize| runs[k].first == 0 && runs[k].count == shape[k] && runs[k].step == 1;
    // Every axis after `last` is whole: one index of `last` reads a block of `inner` elements.
    let Some(last) = (0..runs.len()).rev().find(|&k| !whole(k)) else {
        out.extend_from_slice(data);
        return out;
    };
    let inner: usize = shape[last + 1..].iter().product();
    let mut strides = vec![0usize; last];
    let mut s = inner * shape[last];
    for k in (0..last).rev() {
        strides[k] = s;
        s *= shape[k];
    }
    // The index of `first + i·step` along a run (in range: the runs come from `python_range`).
    let at = |r: &Run, i: usize| (r.first as i64 + i as i64 * r.step) as usize;
    let r = runs[last];
    let mut idx = vec![0usize; last];
    loop {
        let base: usize = (0..last).map(|k| at(&runs[k], idx[k]) * strides[k]).sum();
        if r.step == 1 {
            let from = base + r.first * inner;
            out.extend_from_slice(&data[from..from + r.count * inner]);
        } else if inner == 1 {
            out.extend((0..r.count).map(|i| data[base + at(&r, i)]));
        } else {
            for i in 0..r.count {
                let from = base + at(&r, i) * inner;
                out.extend_from_slice(&data[from..from + inner]);
            }
        }
        // The next index of the outer axes, the last fastest.
        let mut k = last;
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < runs[k].count {
                break;
            }
            idx[k] = 0;
        }
    }
}

impl Op for Slice {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..5, TypeSet::INT)?;
        let n_inputs = cx.inputs().len();
        let data = cx.input(0);
        let ty = data.element_type;
        // The lengths of the 1-D inputs, where static.
        let mut lens: Vec<Option<u64>> = Vec::new();
        for (i, name) in PORTS.iter().enumerate().take(n_inputs).skip(1) {
            match cx.input(i).shape.dims() {
                Some([d]) => lens.push(d.get_static()),
                Some(dims) => {
                    let reason = format!("`{name}` must be 1-D, not rank {}", dims.len());
                    return cx.invalid(i, reason);
                }
                None => lens.push(None),
            }
        }
        let known_len = lens.iter().flatten().next().copied();
        if let Some(m) = known_len
            && let Some(k) = lens.iter().position(|l| l.is_some_and(|l| l != m))
        {
            let first = lens.iter().position(|l| l.is_some()).unwrap_or(0);
            return cx.invalid(
                k + 1,
                format!(
                    "`{}` has {} elements but `{}` has {m}: they must have one length",
                    PORTS[k + 1],
                    lens[k].unwrap_or(0),
                    PORTS[first + 1]
                ),
            );
        }
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let rank = dims.len();
        if rank == 0 {
            return cx.invalid(0, "Slice needs `data` of rank 1 or more, not a scalar");
        }
        if let Some(m) = known_len
            && m > rank as u64
        {
            return cx.invalid(
                1,
                format!("the inputs have {m} elements, more than the data's rank {rank}"),
            );
        }
        // The known values (a known u64 beyond i64 is an error).
        let mut values: Vec<Option<Vec<i64>>> = Vec::new();
        for (i, name) in PORTS.iter().enumerate().take(n_inputs).skip(1) {
            let v = cx.ints(i);
            if v.is_none() && cx.input(i).value().is_some() {
                return cx.invalid(i, format!("`{name}` holds a value above 2^63 - 1"));
            }
            values.push(v);
        }
        // `Some(None)`: no `axes` input (the default); `None`: unknown.
        let axes: Option<Option<&[i64]>> = if n_inputs > 4 {
            values[3].as_deref().map(Some)
        } else {
            Some(None)
        };
        if let (Some(start), Some(stop), Some(step), Some(axes)) =
            (&values[0], &values[1], &values[2], axes)
        {
            return match plan(rank, start, stop, step, axes) {
                Ok(cuts) => {
                    let out = dims
                        .iter()
                        .zip(&cuts)
                        .map(|(&d, c)| c.map_or(d, |c| sliced(d, c)))
                        .collect();
                    Some(vec![TensorType::new(ty, PartialShape::new(out))])
                }
                Err((port, reason)) => cx.invalid(port, reason),
            };
        }
        // Partly known: check what is, and slice the axes that may be sliced to `0..=d`.
        if let Some(step) = &values[2]
            && let Err((port, reason)) = check_steps(step)
        {
            return cx.invalid(port, reason);
        }
        let sliced_axes: Option<Vec<usize>> = match axes {
            Some(Some(a)) => match normalize_axes(a, rank) {
                Ok(a) => Some(a),
                Err((port, reason)) => return cx.invalid(port, reason),
            },
            Some(None) => known_len.map(|m| (0..m as usize).collect()),
            None => None,
        };
        let out = dims
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                if sliced_axes.as_ref().is_some_and(|a| !a.contains(&k)) {
                    d
                } else {
                    Dim::interval(0, d.max()).unwrap_or(Dim::DYNAMIC)
                }
            })
            .collect();
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let shape = data.shape().to_vec();
        if shape.is_empty() {
            return Err(EvalError::Invalid(
                "Slice needs `data` of rank 1 or more, not a scalar".into(),
            ));
        }
        for (i, name) in PORTS.iter().enumerate().take(cx.len()).skip(1) {
            let s = cx.value(i).shape();
            if s.len() != 1 {
                return Err(EvalError::Invalid(format!(
                    "`{name}` must be 1-D, not of shape {s:?}"
                )));
            }
        }
        let (start, stop, step) = (cx.ints(1)?, cx.ints(2)?, cx.ints(3)?);
        let axes = if cx.len() > 4 {
            Some(cx.ints(4)?)
        } else {
            None
        };
        let cuts = plan(shape.len(), &start, &stop, &step, axes.as_deref())
            .map_err(|(_, reason)| EvalError::Invalid(reason))?;
        let runs: Vec<Run> = shape
            .iter()
            .zip(&cuts)
            .map(|(&n, c)| match c {
                None => Run {
                    first: 0,
                    count: n,
                    step: 1,
                },
                Some(c) => {
                    // A count is at most the dim, and the first index is in range when the
                    // count is not 0.
                    let (first, count) = c.on(n as u64);
                    Run {
                        first: usize::try_from(first).unwrap_or(0),
                        count: usize::try_from(count).unwrap_or(0).min(n),
                        step: c.step,
                    }
                }
            })
            .collect();
        let out_shape: Vec<usize> = runs.iter().map(|r| r.count).collect();
        // At most the data's element count.
        let total: usize = out_shape.iter().product();
        cx.reserve(data.element_type(), total)?;
        fn go<T: Element>(
            t: &Tensor,
            shape: &[usize],
            runs: &[Run],
            out_shape: &[usize],
            total: usize,
        ) -> Option<Tensor> {
            let data = super::kernel::contiguous::<T>(t)?;
            super::kernel::tensor_from(out_shape, copy(&data, shape, runs, total)).ok()
        }
        crate::dispatch!(any: data.element_type(), T => go::<T>(&data, &shape, &runs, &out_shape, total), _ => None)
            .map(|t| vec![t])
            .ok_or(EvalError::Internal("Slice's copy"))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::dtype::ElementType;
    use crate::memory::Budget;
    use crate::tensor::Value;

    const ROOMY: Budget = Budget {
        limit: 1 << 30,
        in_use: 0,
    };

    fn tensor<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        T::wrap(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v).unwrap())
    }

    fn ints(v: &[i64]) -> Value<'static> {
        Value::Tensor(Arc::new(tensor(&[v.len()], v.to_vec())))
    }

    /// Slice of `data` with `start`, `stop`, `step` and optionally `axes`.
    fn slice(data: Tensor, args: [&[i64]; 3], axes: Option<&[i64]>) -> Result<Tensor, EvalError> {
        let mut inputs = vec![Value::Tensor(Arc::new(data))];
        inputs.extend(args.map(ints));
        inputs.extend(axes.map(ints));
        Slice
            .eval(&EvalCx::new(&inputs, ROOMY))
            .map(|mut v| v.remove(0))
    }

    fn values<T: Element>(t: &Tensor) -> Vec<T> {
        t.view::<T>().unwrap().iter().copied().collect()
    }

    const MAX: i64 = i64::MAX;
    const MIN: i64 = i64::MIN;

    /// One axis of 10: Python's `list(range(10))[start:stop:step]` (the spec's examples among
    /// them).
    #[test]
    fn one_axis_is_python_slicing() {
        let data = || tensor(&[10], (0..10i64).collect());
        for (start, stop, step, want) in [
            (1, 8, 1, vec![1, 2, 3, 4, 5, 6, 7]),
            (1, 8, 2, vec![1, 3, 5, 7]),
            (-100, 100, 1, (0..10).collect()),
            (9, -11, -1, (0..10).rev().collect()),
            (9, 0, -1, vec![9, 8, 7, 6, 5, 4, 3, 2, 1]),
            (9, -10, -1, vec![9, 8, 7, 6, 5, 4, 3, 2, 1]),
            (9, -11, -2, vec![9, 7, 5, 3, 1]),
            (100, -100, -1, (0..10).rev().collect()),
            (-3, -1, 1, vec![7, 8]),
            (-1, -4, -1, vec![9, 8, 7]),
            (0, MAX, 3, vec![0, 3, 6, 9]),
            (MAX, MIN, -1, (0..10).rev().collect()),
            (MIN, MAX, 1, (0..10).collect()),
            (-1, MIN, -4, vec![9, 5, 1]),
            (0, MAX, MAX, vec![0]),
            (9, MIN, MIN, vec![9]),
            (5, 5, 1, vec![]),
            (5, 2, 1, vec![]),
            (2, 5, -1, vec![]),
            (10, MAX, 1, vec![]),
            (MIN, -11, -1, vec![]),
        ] {
            let t = slice(data(), [&[start], &[stop], &[step]], None).unwrap();
            assert_eq!(t.shape(), &[want.len()], "[{start}:{stop}:{step}]");
            assert_eq!(values::<i64>(&t), want, "[{start}:{stop}:{step}]");
        }
    }

    /// Several axes: numpy's `a[...]` on `np.arange(24).reshape(2, 3, 4)`.
    #[test]
    fn axes() {
        let data = || tensor(&[2, 3, 4], (0..24).map(|x| x as f32).collect());
        let f = |v: &[i32]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
        type Case<'a> = ([&'a [i64]; 3], Option<&'a [i64]>, Vec<usize>, Vec<i32>);
        let cases: Vec<Case> = vec![
            // a[:, :, 1:3]
            (
                [&[1], &[3], &[1]],
                Some(&[2]),
                vec![2, 3, 2],
                vec![1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22],
            ),
            // a[:, :, ::-2] (axis -1)
            (
                [&[-1], &[MIN], &[-2]],
                Some(&[-1]),
                vec![2, 3, 2],
                vec![3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21],
            ),
            // a[1:, ::-1, 2] written with unordered, negative axes: a[1:2, ::-1, 2:3]
            (
                [&[2, MAX, 1], &[3, MIN, 2], &[1, -1, 1]],
                Some(&[2, -2, 0]),
                vec![1, 3, 1],
                vec![22, 18, 14],
            ),
            // default axes 0, 1: a[::-1, 1:]
            (
                [&[-1, 1], &[MIN, MAX], &[-1, 1]],
                None,
                vec![2, 2, 4],
                vec![16, 17, 18, 19, 20, 21, 22, 23, 4, 5, 6, 7, 8, 9, 10, 11],
            ),
            // a[:, 1:2, :] : a contiguous block
            (
                [&[1], &[2], &[1]],
                Some(&[1]),
                vec![2, 1, 4],
                vec![4, 5, 6, 7, 16, 17, 18, 19],
            ),
            // the whole tensor
            ([&[0], &[MAX], &[1]], None, vec![2, 3, 4], (0..24).collect()),
            // an empty axis
            ([&[3], &[1], &[1]], Some(&[2]), vec![2, 3, 0], vec![]),
            // a[::-1, ::2, ::-3]
            (
                [&[MAX, 0, -1], &[MIN, MAX, MIN], &[-1, 2, -3]],
                None,
                vec![2, 2, 2],
                vec![15, 12, 23, 20, 3, 0, 11, 8],
            ),
        ];
        for (args, axes, shape, want) in cases {
            let t = slice(data(), args, axes).unwrap();
            assert_eq!(t.shape(), shape.as_slice(), "{args:?} {axes:?}");
            assert_eq!(values::<f32>(&t), f(&want), "{args:?} {axes:?}");
        }
    }

    #[test]
    fn element_types_are_copied_exactly() {
        let args: [&[i64]; 3] = [&[3, 0], &[MIN, 3], &[-2, 2]];
        let want_index = [9usize, 11, 3, 5];
        let idx = |n: usize| (0..n).collect::<Vec<_>>();
        // a.reshape(4, 3)[::-2, 0:3:2]
        let t = slice(
            tensor(&[4, 3], idx(12).iter().map(|&i| i as u8).collect()),
            args,
            None,
        )
        .unwrap();
        assert_eq!(values::<u8>(&t), want_index.map(|i| i as u8));
        let b: Vec<bool> = idx(12).iter().map(|&i| i % 3 == 0 || i == 11).collect();
        let t = slice(tensor(&[4, 3], b.clone()), args, None).unwrap();
        assert_eq!(values::<bool>(&t), want_index.map(|i| b[i]));
        let x: Vec<i64> = idx(12).iter().map(|&i| i64::MIN + i as i64).collect();
        let t = slice(tensor(&[4, 3], x.clone()), args, None).unwrap();
        assert_eq!(values::<i64>(&t), want_index.map(|i| x[i]));
        let y: Vec<f32> = vec![
            f32::NAN,
            -0.0,
            f32::INFINITY,
            1e-45,
            1.5,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            -1.0,
        ];
        let t = slice(tensor(&[4, 3], y.clone()), args, None).unwrap();
        let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(values::<f32>(&t)),
            bits(want_index.map(|i| y[i]).to_vec())
        );
        assert_eq!(t.element_type(), ElementType::F32);
        // Other integer types for the indices.
        let inputs = [
            Value::Tensor(Arc::new(tensor(&[5], vec![1.0f64, 2.0, 3.0, 4.0, 5.0]))),
            Value::Tensor(Arc::new(tensor(&[1], vec![-1i8]))),
            Value::Tensor(Arc::new(tensor(&[1], vec![0u16]))),
            Value::Tensor(Arc::new(tensor(&[1], vec![-2i32]))),
            Value::Tensor(Arc::new(tensor(&[1], vec![0u8]))),
        ];
        let t = Slice.eval(&EvalCx::new(&inputs, ROOMY)).unwrap().remove(0);
        assert_eq!(values::<f64>(&t), vec![5.0, 3.0]);
    }

    #[test]
    fn errors() {
        let data = || tensor(&[2, 3], vec![0i32; 6]);
        for (args, axes, want) in [
            ([&[0][..], &[1], &[0]], None, "`step` element 0 is 0"),
            (
                [&[0, 0], &[1, 1], &[1, 1]],
                Some(&[1, -1][..]),
                "given twice",
            ),
            ([&[0], &[1], &[1]], Some(&[2][..]), "axis 2 is out of range"),
            (
                [&[0], &[1], &[1]],
                Some(&[-3][..]),
                "axis -3 is out of range",
            ),
            (
                [&[0], &[1, 2], &[1]],
                None,
                "`stop` has 2 elements but `start` has 1",
            ),
            (
                [&[0], &[1], &[1]],
                Some(&[0, 1][..]),
                "`axes` has 2 elements",
            ),
            (
                [&[0; 3], &[1; 3], &[1; 3]],
                None,
                "more than the data's rank 2",
            ),
        ] {
            let err = slice(data(), args, axes).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} lacks {want:?}");
        }
        let scalar = T0::wrap(ndarray::arr0(1i32).into_dyn());
        type T0 = i32;
        let err = slice(scalar, [&[0], &[1], &[1]], None).unwrap_err();
        assert!(err.to_string().contains("not a scalar"), "{err}");
        // The output is checked against the budget.
        let inputs = [
            Value::Tensor(Arc::new(tensor(&[100], vec![0u64; 100]))),
            ints(&[0]),
            ints(&[MAX]),
            ints(&[1]),
        ];
        let small = Budget {
            limit: 100,
            in_use: 0,
        };
        let err = Slice.eval(&EvalCx::new(&inputs, small)).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err:?}");
    }

    /// The interval of counts on an interval dim is the least and greatest over its sizes.
    #[test]
    fn interval_dims_give_every_count() {
        let cut = |start, stop, step| Cut { start, stop, step };
        for (lo, hi, c) in [
            (0u64, 40u64, cut(-3, 2, 1)),
            (0, 40, cut(1, MAX, 1)),
            (3, 20, cut(-5, -1, 2)),
            (0, 30, cut(4, -2, 1)),
            (0, 30, cut(MAX, 4, -1)),
            (0, 30, cut(-2, 3, -1)),
            (5, 9, cut(2, 7, 3)),
            (0, 12, cut(10, -10, -3)),
            (0, 25, cut(MIN, -7, 1)),
        ] {
            let got = sliced(Dim::interval(lo, Some(hi)).unwrap(), c);
            let counts: Vec<u64> = (lo..=hi).map(|n| c.on(n).1).collect();
            let want = Dim::interval(
                *counts.iter().min().unwrap(),
                Some(*counts.iter().max().unwrap()),
            )
            .unwrap();
            assert_eq!(got, want, "{lo}..{hi} {c:?}");
        }
        // Unbounded: bounded when the count stops growing.
        assert_eq!(
            sliced(Dim::interval(2, None).unwrap(), cut(-3, 2, 1)),
            Dim::interval(0, Some(2)).unwrap()
        );
        assert_eq!(
            sliced(Dim::interval(2, None).unwrap(), cut(0, 5, 1)),
            Dim::interval(2, Some(5)).unwrap()
        );
        assert_eq!(
            sliced(Dim::interval(2, None).unwrap(), cut(1, MAX, 1)),
            Dim::interval(1, None).unwrap()
        );
    }

    fn infer(inputs: &[&TensorType]) -> (Option<Vec<TensorType>>, Vec<String>) {
        let (out, findings) = crate::ops::context::infer_for_test(&Slice, inputs);
        (out, findings.iter().map(|(k, _)| k.to_string()).collect())
    }

    #[test]
    fn inference() {
        let known = |v: &[i64]| TensorType::of_value(tensor(&[v.len()], v.to_vec()));
        let unknown = |n: u64| TensorType::new(ElementType::I64, PartialShape::fixed(&[n]));
        let data = TensorType::new(
            ElementType::F32,
            PartialShape::new(vec![
                Dim::fixed(10),
                Dim::DYNAMIC,
                Dim::interval(2, Some(8)).unwrap(),
            ]),
        );
        let shape = |out: Option<Vec<TensorType>>| out.unwrap()[0].shape.clone();
        // Known values: exact dims, intervals on interval dims (axis 2 is `1::2` on 2..=8
        // elements, axis 1 reversed whole).
        let (a, b, c, d) = (
            known(&[1, 0, -1]),
            known(&[MAX, 2, MIN]),
            known(&[2, 1, -1]),
            known(&[2, 0, 1]),
        );
        let (out, _) = infer(&[&data, &a, &b, &c, &d]);
        assert_eq!(
            shape(out),
            PartialShape::new(vec![
                Dim::fixed(2),
                Dim::DYNAMIC,
                Dim::interval(1, Some(4)).unwrap(),
            ])
        );
        // Unknown stop: the sliced axes are 0..=d, the others kept.
        let (e, f) = (known(&[0]), unknown(1));
        let axis = known(&[2]);
        let one = known(&[1]);
        let (out, _) = infer(&[&data, &e, &f, &one, &axis]);
        assert_eq!(
            shape(out),
            PartialShape::new(vec![
                Dim::fixed(10),
                Dim::DYNAMIC,
                Dim::interval(0, Some(8)).unwrap(),
            ])
        );
        // Default axes of a known length.
        let (out, _) = infer(&[&data, &e, &f, &one]);
        assert_eq!(
            shape(out),
            PartialShape::new(vec![
                Dim::interval(0, Some(10)).unwrap(),
                Dim::DYNAMIC,
                Dim::interval(2, Some(8)).unwrap(),
            ])
        );
        // Unknown axes: every axis may be sliced.
        let g = unknown(1);
        let (out, _) = infer(&[&data, &e, &e, &one, &g]);
        assert_eq!(
            shape(out),
            PartialShape::new(vec![
                Dim::interval(0, Some(10)).unwrap(),
                Dim::DYNAMIC,
                Dim::interval(0, Some(8)).unwrap(),
            ])
        );
        // Errors found from what is known.
        let zero = known(&[0]);
        let (out, found) = infer(&[&data, &e, &f, &zero]);
        assert!(
            out.is_none() && found[0].contains("`step` element 0 is 0"),
            "{found:?}"
        );
        let twice = known(&[1, -2]);
        let (out, found) = infer(&[&data, &unknown(2), &unknown(2), &unknown(2), &twice]);
        assert!(
            out.is_none() && found[0].contains("given twice"),
            "{found:?}"
        );
        let (out, found) = infer(&[&data, &e, &unknown(2), &one]);
        assert!(
            out.is_none() && found[0].contains("one length"),
            "{found:?}"
        );
        let scalar = TensorType::new(ElementType::F32, PartialShape::fixed(&[]));
        let (out, found) = infer(&[&scalar, &e, &e, &one]);
        assert!(
            out.is_none() && found[0].contains("not a scalar"),
            "{found:?}"
        );
        let floats = TensorType::new(ElementType::F32, PartialShape::fixed(&[1]));
        let (out, _) = infer(&[&data, &floats, &e, &one]);
        assert!(out.is_none());
        // A dynamic rank stays one.
        let any = TensorType::new(ElementType::F32, PartialShape::dynamic_rank());
        let (out, _) = infer(&[&any, &e, &e, &one]);
        assert_eq!(out.unwrap()[0].shape, PartialShape::dynamic_rank());
    }
}
