//! ScaledDotProductAttention-13: `Softmax(Q·Kᵀ·scale + bias)·V`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/sequence/scaled-dot-product-attention.html>
//!
//! Ports: `query` `[N…, L, E]`, `key` `[N…, S, E]`, `value` `[N…, S, Ev]` (rank ≥ 3, one float
//! type T), optional `attention_mask` (T or boolean) and optional `scale` (a T scalar or one
//! element). Attribute `causal` (required, as in the spec; a missing one is an attribute error).
//! Output `[N…, L, Ev]` of T. As in OpenVINO's shape inference
//! (`scaled_dot_product_attention_shape_inference.hpp`): the batch dims of key, value and the
//! mask broadcast (numpy) into the query's; E of query and key, S of key and value, and the
//! mask's last two dims with L and S broadcast-merge; a mask of rank 0 or ≥ 2 is taken (rank 1
//! is refused); `scale` must have one element. Mismatches are invalid inputs (E507) naming the
//! dims.
//!
//! Computation, by the spec's pseudo-code:
//! * `scores = MatMul(Q, Kᵀ)` (ovir's MatMul: its blocking and bits);
//! * `scores · scale`, rounded in T; scale is the input's, or `1 / sqrt(E)` computed in T;
//! * the bias: `causal` puts −∞ above the diagonal (`s > l`, numpy `triu(k=1)`) and ignores the
//!   mask; else a boolean mask puts −∞ where it is false, and a T mask is added (broadcast); a
//!   scalar mask counts the same way (the spec's scalar zero adds nothing);
//! * `Softmax` over S (ovir's Softmax-8: its accuracy and bits), then `MatMul(weights, V)`.
//!
//! f16 and bf16 are widened to f32 first (exact), the whole computation runs in f32, and the
//! output is rounded once: more accurate than rounding each step to the type, as the spec's
//! pseudo-code would. A row whose bias is all −∞ gives NaN (Softmax of −∞ only), as the
//! pseudo-code does. The sizes of the scores and the output are checked against the memory
//! budget before allocation (each step reserves its own output).
//!
//! Execution: in f32, when key, value and the mask broadcast into the query's batch without
//! enlarging it, the steps run in one pass per block of up to 128 query rows, in parallel over
//! the blocks (`fused`): the same operations element by element, so the same bits as the
//! composed steps (tested), without materialising the `[N…, L, S]` scores (per thread, two
//! blocks of rows × S). Otherwise (and for f64) the steps run one after the other over whole
//! tensors.

use std::sync::Arc;

use super::matmul::MatMul;
use super::softmax::Softmax;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::num::Float;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sdpa {
    pub causal: bool,
}

pub const DEF: OpDef = OpDef {
    name: "ScaledDotProductAttention",
    version: 13,
    inputs: Arity::range(3, 5),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    a.required("causal").map_err(|e| vec![e])?;
    let causal = a.bool_or(&["causal"], false).map_err(|e| vec![e])?;
    Ok(Box::new(Sdpa { causal }))
}

/// Broadcast-merges `other`'s batch dims into `batch` (numpy, right-aligned).
fn merge_batch(batch: &mut Vec<Dim>, other: &[Dim]) -> bool {
    match crate::broadcast::numpy(
        &PartialShape::new(batch.clone()),
        &PartialShape::new(other.to_vec()),
    ) {
        Ok(s) => {
            *batch = s.dims().map(<[Dim]>::to_vec).unwrap_or_default();
            true
        }
        Err(_) => false,
    }
}

impl Op for Sdpa {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        let ty = cx.input(0).element_type;
        for i in 1..cx.inputs().len() {
            let t = cx.input(i).element_type;
            if t != ty && !(i == 3 && t == ElementType::Boolean) {
                let allowed = if i == 3 { " or boolean" } else { "" };
                return cx.invalid(i, format!("input {i} is {t}: it must be {ty}{allowed}"));
            }
        }
        let dims = |i: usize| cx.input(i).shape.dims().map(<[Dim]>::to_vec);
        let Some(q) = dims(0) else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        if q.len() < 3 {
            return cx.invalid(0, format!("the query has rank {}: at least 3", q.len()));
        }
        let mut batch = q[..q.len() - 2].to_vec();
        let (mut l, e) = (q[q.len() - 2], q[q.len() - 1]);
        let mut s = Dim::DYNAMIC;
        let mut ev = Dim::DYNAMIC;
        if let Some(k) = dims(1) {
            if k.len() < 3 {
                return cx.invalid(1, format!("the key has rank {}: at least 3", k.len()));
            }
            let ke = k[k.len() - 1];
            if !merge_batch(&mut batch, &k[..k.len() - 2]) {
                return cx.invalid(1, "the key's batch dims do not broadcast with the query's");
            }
            if e.broadcast_merge(ke).is_none() {
                return cx.invalid(
                    1,
                    format!("the query's E ({e}) and the key's ({ke}) differ"),
                );
            }
            s = k[k.len() - 2];
        }
        if let Some(v) = dims(2) {
            if v.len() < 3 {
                return cx.invalid(2, format!("the value has rank {}: at least 3", v.len()));
            }
            if !merge_batch(&mut batch, &v[..v.len() - 2]) {
                return cx.invalid(
                    2,
                    "the value's batch dims do not broadcast with the query's",
                );
            }
            let vs = v[v.len() - 2];
            let Some(m) = s.broadcast_merge(vs) else {
                return cx.invalid(
                    2,
                    format!("the key's S ({s}) and the value's ({vs}) differ"),
                );
            };
            s = m;
            ev = v[v.len() - 1];
        }
        if cx.inputs().len() > 3
            && !self.causal
            && let Some(m) = dims(3)
            && !m.is_empty()
        {
            let r = m.len();
            if r < 2 {
                return cx.invalid(
                    3,
                    "the attention mask has rank 1: it must be a scalar or of rank 2 or more",
                );
            }
            let (ml, ms) = (m[r - 2], m[r - 1]);
            match (l.broadcast_merge(ml), s.broadcast_merge(ms)) {
                (Some(a), Some(_)) => l = a,
                _ => {
                    return cx.invalid(
                        3,
                        format!("the attention mask's last dims [{ml}, {ms}] do not broadcast to [L, S] = [{l}, {s}]"),
                    );
                }
            }
            if !merge_batch(&mut batch, &m[..r - 2]) {
                return cx.invalid(
                    3,
                    "the attention mask's batch dims do not broadcast with the query's",
                );
            }
        }
        if cx.inputs().len() > 4
            && let Some(sc) = cx.input(4).shape.dims()
            && !(sc.is_empty() || (sc.len() == 1 && sc[0].contains(1)))
        {
            return cx.invalid(
                4,
                format!(
                    "the scale has shape {}: it must have one element",
                    cx.input(4).shape
                ),
            );
        }
        batch.push(l);
        batch.push(ev);
        Some(vec![TensorType::new(ty, PartialShape::new(batch))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let ty = cx.value(0).element_type();
        let wide = match ty {
            ElementType::F16 | ElementType::Bf16 => ElementType::F32,
            ElementType::F32 | ElementType::F64 => ty,
            _ => {
                return Err(EvalError::UnsupportedType {
                    op: "ScaledDotProductAttention".into(),
                    ty,
                });
            }
        };
        // The inputs in the computing type (f16 and bf16 widened, within the budget).
        let input = |i: usize| -> Result<Arc<Tensor>, EvalError> {
            let t = cx.tensor(i)?;
            if t.element_type() == ty && ty != wide {
                cx.reserve(wide, t.len())?;
                let w = super::convert::convert(&t, wide)
                    .ok_or(EvalError::Internal("a widened input"))?;
                Ok(Arc::new(w))
            } else {
                Ok(t)
            }
        };
        let (q, k, v) = (input(0)?, input(1)?, input(2)?);
        let qs = q.shape();
        if qs.len() < 3 || k.shape().len() < 3 || v.shape().len() < 3 {
            return Err(EvalError::Invalid(
                "query, key and value need rank 3 or more".into(),
            ));
        }
        let mask = if self.causal || cx.len() < 4 {
            None
        } else {
            Some(input(3)?)
        };
        let scale = if cx.len() > 4 {
            let s = input(4)?;
            if s.len() != 1 {
                return Err(EvalError::Invalid(format!(
                    "the scale has {} elements: one",
                    s.len()
                )));
            }
            Some(s)
        } else {
            None
        };
        let fused = if wide == ElementType::F32 {
            fused(
                cx,
                [&q, &k, &v],
                mask.as_deref(),
                scale.as_deref(),
                self.causal,
            )
        } else {
            None
        };
        let out = match fused {
            Some(out) => out?,
            None => self.composed(cx, [q, k, v], mask, scale, wide)?,
        };
        if wide == ty {
            return Ok(vec![out]);
        }
        super::convert::convert(&out, ty)
            .map(|t| vec![t])
            .ok_or(EvalError::Internal("the narrowed output"))
    }
}

impl Sdpa {
    /// The spec's pseudo-code step by step over ovir's MatMul and Softmax, in `wide` (f32 or
    /// f64): f64, and the shapes [`fused`] does not take.
    fn composed(
        &self,
        cx: &EvalCx<'_>,
        [q, k, v]: [Arc<Tensor>; 3],
        mask: Option<Arc<Tensor>>,
        scale: Option<Arc<Tensor>>,
        wide: ElementType,
    ) -> Result<Tensor, EvalError> {
        let qs = q.shape();
        let e = qs[qs.len() - 1];
        let budget = || cx.budget;
        let run = |op: &dyn Op, inputs: Vec<Arc<Tensor>>| -> Result<Tensor, EvalError> {
            let values: Vec<Value<'_>> = inputs.into_iter().map(Value::Tensor).collect();
            op.eval(&EvalCx::new(&values, budget()))
                .map(|mut o| o.remove(0))
        };
        let scores = run(
            &MatMul {
                transpose_a: false,
                transpose_b: true,
            },
            vec![q, k],
        )?;
        let biased = if wide == ElementType::F64 {
            bias::<f64>(
                cx,
                scores,
                scale.as_deref(),
                e,
                self.causal,
                mask.as_deref(),
            )
        } else {
            bias::<f32>(
                cx,
                scores,
                scale.as_deref(),
                e,
                self.causal,
                mask.as_deref(),
            )
        }?;
        let weights = run(
            &Softmax {
                version: 8,
                axis: -1,
            },
            vec![Arc::new(biased)],
        )?;
        run(
            &MatMul {
                transpose_a: false,
                transpose_b: false,
            },
            vec![Arc::new(weights), v],
        )
    }
}

/// The f32 computation in one pass per block of query rows (the common case: key, value and
/// the mask broadcast into the query's batch without enlarging it, no dim zero): `Q·Kᵀ` of the
/// block by the GEMM (MatMul's call: the same bits), scaled and biased in place as [`bias`]
/// does, Softmax's row kernel (its bits), then the block's output rows by the GEMM. Each step
/// is the composed computation's, element by element, so the bits are the same; the scores
/// never leave the cache. `None`: the shapes need the composed path.
fn fused(
    cx: &EvalCx<'_>,
    [q, k, v]: [&Tensor; 3],
    mask: Option<&Tensor>,
    scale: Option<&Tensor>,
    causal: bool,
) -> Option<Result<Tensor, EvalError>> {
    use super::kernel::gemm::Panels;
    use super::matmul::Shared;
    use rayon::prelude::*;
    use std::mem::MaybeUninit;
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let r = qs.len();
    if ks.len() != r || vs.len() != r {
        return None;
    }
    let (l, e) = (qs[r - 2], qs[r - 1]);
    let (s, ev) = (ks[r - 2], vs[r - 1]);
    if ks[r - 1] != e || vs[r - 2] != s || [l, e, s, ev].contains(&0) {
        return None;
    }
    let batch = &qs[..r - 2];
    let kb = crate::broadcast::strides_into(&ks[..r - 2], batch)?;
    let vb = crate::broadcast::strides_into(&vs[..r - 2], batch)?;
    let scores_shape: Vec<usize> = batch.iter().copied().chain([l, s]).collect();
    let mask = match mask {
        Some(m) if !causal => {
            let strides = crate::broadcast::strides_into(m.shape(), &scores_shape)?;
            Some((m, strides))
        }
        _ => None,
    };
    let (qd, kd, vd) = (
        crate::ops::kernel::contiguous::<f32>(q)?,
        crate::ops::kernel::contiguous::<f32>(k)?,
        crate::ops::kernel::contiguous::<f32>(v)?,
    );
    let scale = match scale {
        Some(t) => *f32::view(t)?.iter().next()?,
        None => 1.0 / (e as f32).sqrt(),
    };
    let count: usize = batch.iter().product();
    let threads = rayon::current_num_threads();
    // Blocks of rows: at least 4 per thread where the rows allow (the bits do not depend on it).
    let mut rows = l.min(128);
    while rows > 8 && count * l.div_ceil(rows) < 4 * threads {
        rows /= 2;
    }
    // The GEMM packs Kᵀ (s × e, in whole panels) in each thread; V is read where it lies
    // when its rows are whole panels, else packed a block at a time.
    let panels = Panels::detect().blocked();
    let packed = panels.packed_len(e, s);
    let (v_panels, v_copied) = if ev.is_multiple_of(panels.width()) {
        (panels, 0)
    } else {
        (panels.copying(), panels.copied_len(s, ev))
    };
    let scratch = (rows as u64 * s as u64 * 8 + (packed + v_copied) as u64 * 4)
        .saturating_mul(threads as u64);
    let total = count * l * ev;
    if let Err(err) = cx
        .reserve_bytes("the attention scores of each thread", scratch)
        .and_then(|()| cx.reserve(ElementType::F32, total))
    {
        return Some(Err(err));
    }
    /// The mask's elements and their strides in the scores.
    enum Bias<'a> {
        None,
        Bool(std::borrow::Cow<'a, [bool]>, Vec<usize>),
        Add(std::borrow::Cow<'a, [f32]>, Vec<usize>),
    }
    let bias = match mask {
        Some((m, strides)) if m.element_type() == ElementType::Boolean => {
            Bias::Bool(crate::ops::kernel::contiguous::<bool>(m)?, strides)
        }
        Some((m, strides)) => Bias::Add(crate::ops::kernel::contiguous::<f32>(m)?, strides),
        None => Bias::None,
    };
    // The row offsets of each batch element in K, V and the mask.
    let offsets = |strides: &[usize]| -> Vec<usize> {
        let mut at = vec![0usize; count];
        let mut index = vec![0usize; batch.len()];
        for o in at.iter_mut() {
            *o = index.iter().zip(strides).map(|(i, st)| i * st).sum();
            for d in (0..batch.len()).rev() {
                index[d] += 1;
                if index[d] < batch[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        at
    };
    let (k_at, v_at) = (offsets(&kb), offsets(&vb));
    let mask_at = match &bias {
        Bias::Bool(_, st) | Bias::Add(_, st) => offsets(&st[..r - 2]),
        Bias::None => Vec::new(),
    };
    let blocks = l.div_ceil(rows);
    let mut out = vec![0f32; total];
    let c = Shared(out.as_mut_ptr());
    let minus_inf = f32::NEG_INFINITY;
    let v_offs: Vec<usize> = (0..s).map(|p| p * ev).collect();
    (0..count * blocks).into_par_iter().for_each_init(
        || {
            (
                Vec::<f32>::new(),
                Vec::<MaybeUninit<f32>>::new(),
                Vec::new(),
            )
        },
        |(scores, weights, keys), task| {
            let (b, r0) = (task / blocks, (task % blocks) * rows);
            let n = rows.min(l - r0);
            scores.clear();
            scores.resize(n * s, 0.0);
            weights.clear();
            weights.resize(n * s, MaybeUninit::uninit());
            // Kᵀ in panels (the GEMM crate's order of sums: MatMul's bits).
            keys.resize(packed, 0.0);
            panels.pack_transposed(&kd[k_at[b] * s * e..], (e, 1), (e, s), keys);
            // SAFETY: the query rows lie in their buffer (shapes checked above); `scores`
            // holds n × s elements; `keys` the panels.
            unsafe {
                let q = qd.as_ptr().add((b * l + r0) * e);
                panels.gemm(n, s, e, q, e, keys, scores.as_mut_ptr(), s)
            };
            for (i, row) in scores.chunks_exact_mut(s).enumerate() {
                let li = r0 + i;
                for x in row.iter_mut() {
                    *x *= scale;
                }
                match &bias {
                    Bias::None if causal => {
                        for x in row.iter_mut().skip(li + 1) {
                            *x += minus_inf;
                        }
                    }
                    Bias::None => {}
                    Bias::Bool(md, st) => {
                        let base = mask_at[b] + li * st[r - 2];
                        for (j, x) in row.iter_mut().enumerate() {
                            if !md[base + j * st[r - 1]] {
                                *x += minus_inf;
                            }
                        }
                    }
                    Bias::Add(md, st) => {
                        let base = mask_at[b] + li * st[r - 2];
                        for (j, x) in row.iter_mut().enumerate() {
                            *x += md[base + j * st[r - 1]];
                        }
                    }
                }
            }
            super::softmax::softmax_rows_f32(scores, weights, s);
            // SAFETY: the row kernel wrote every element of `weights`; V's matrix lies in its
            // buffer, its rows whole panels where read in place (else packed, reading only
            // its `ev` columns); the block's output rows are written by this task alone.
            unsafe {
                let (w, o) = (
                    weights.as_ptr().cast::<f32>(),
                    c.get().add((b * l + r0) * ev),
                );
                let vr = (vd.as_ptr().add(v_at[b] * s * ev), &v_offs[..]);
                v_panels.gemm_rows(n, ev, s, w, s, vr, o, ev)
            };
        },
    );
    let mut shape = scores_shape;
    shape[r - 1] = ev;
    Some(wrap(shape, out))
}

/// `scores · scale + bias`, in T (f32 or f64), broadcast to the mask's batch dims.
fn bias<T: Float + Element>(
    cx: &EvalCx<'_>,
    scores: Tensor,
    scale: Option<&Tensor>,
    e: usize,
    causal: bool,
    mask: Option<&Tensor>,
) -> Result<Tensor, EvalError> {
    let internal = EvalError::Internal("the scores' type");
    let scale: T = match scale {
        Some(s) => *T::view(s)
            .ok_or(EvalError::Internal("the scale's type"))?
            .iter()
            .next()
            .ok_or(EvalError::Internal("the scale's element"))?,
        None => T::ONE / T::of_f64(e as f64).sqrt(),
    };
    let shape = scores.shape().to_vec();
    let (l, s) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let mut data = T::unwrap(scores)
        .ok_or(internal)?
        .into_raw_vec_and_offset()
        .0;
    for x in data.iter_mut() {
        *x = *x * scale;
    }
    let minus_inf = T::of_f64(f64::NEG_INFINITY);
    if causal {
        if l > 0 && s > 0 {
            for (row, chunk) in data.chunks_exact_mut(s).enumerate() {
                let li = row % l;
                for x in chunk.iter_mut().skip(li + 1) {
                    *x = *x + minus_inf;
                }
            }
        }
        return wrap(shape, data);
    }
    let Some(mask) = mask else {
        return wrap(shape, data);
    };
    // The scores and the mask broadcast together (the mask may add batch dims or be a scalar).
    let out_shape = crate::broadcast::numpy_shapes(&[&shape, mask.shape()]).ok_or_else(|| {
        EvalError::Invalid(format!(
            "the attention mask {:?} does not broadcast to the scores {shape:?}",
            mask.shape()
        ))
    })?;
    let count: usize = out_shape.iter().product();
    cx.reserve(T::TYPE, count)?;
    let (Some(ss), Some(ms)) = (
        crate::broadcast::strides_into(&shape, &out_shape),
        crate::broadcast::strides_into(mask.shape(), &out_shape),
    ) else {
        return Err(EvalError::Internal("the mask's strides"));
    };
    let mut out = vec![T::ZERO; count];
    if mask.element_type() == ElementType::Boolean {
        let md = crate::ops::kernel::contiguous::<bool>(mask).ok_or(EvalError::Internal("mask"))?;
        crate::broadcast::walk(&out_shape, [&ss, &ms], |at, len, [a, b], [sa, sb]| {
            for i in 0..len {
                let x = data[a + i * sa];
                out[at + i] = if md[b + i * sb] { x } else { x + minus_inf };
            }
        });
    } else {
        let md = crate::ops::kernel::contiguous::<T>(mask).ok_or(EvalError::Internal("mask"))?;
        crate::broadcast::walk(&out_shape, [&ss, &ms], |at, len, [a, b], [sa, sb]| {
            for i in 0..len {
                out[at + i] = data[a + i * sa] + md[b + i * sb];
            }
        });
    }
    wrap(out_shape, out)
}

fn wrap<T: Element>(shape: Vec<usize>, data: Vec<T>) -> Result<Tensor, EvalError> {
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), data)
        .map(T::wrap)
        .map_err(|_| EvalError::Internal("the scores' shape"))
}

#[cfg(test)]
mod tests {
    use half::f16;

    use super::*;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};

    fn random(n: usize, seed: u64) -> Vec<f32> {
        crate::ops::context::uniform_for_test(n, seed, -2.0, 2.0)
    }

    /// The spec's pseudo-code in f64, for one batch of `[L, E]`, `[S, E]`, `[S, Ev]`, with an
    /// additive `[L, S]` bias.
    fn reference(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        (l, s, e, ev): (usize, usize, usize, usize),
        scale: f64,
        bias: impl Fn(usize, usize) -> f64,
    ) -> Vec<f64> {
        let mut out = vec![0.0; l * ev];
        for i in 0..l {
            let w: Vec<f64> = (0..s)
                .map(|j| {
                    let dot: f64 = (0..e)
                        .map(|p| q[i * e + p] as f64 * k[j * e + p] as f64)
                        .sum();
                    dot * scale + bias(i, j)
                })
                .collect();
            let m = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = w.iter().map(|x| (x - m).exp()).sum();
            for c in 0..ev {
                out[i * ev + c] = (0..s)
                    .map(|j| (w[j] - m).exp() / z * v[j * ev + c] as f64)
                    .sum();
            }
        }
        out
    }

    fn close(got: &Tensor, want: &[f64], tol: f64) {
        let got: Vec<f64> = match got {
            Tensor::F32(a) => a.iter().map(|&x| x as f64).collect(),
            Tensor::F16(a) => a.iter().map(|x| x.to_f64()).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "element {i}: {g} against {w}"
            );
        }
    }

    /// The one-pass f32 computation gives the composed one's bits: masks of each kind and
    /// broadcast, causal, a scale input, key and value broadcast over the batch, blocks of rows
    /// that do not divide L, at 1 and 3 threads.
    const UNLIMITED: crate::memory::Budget = crate::memory::Budget {
        limit: u64::MAX,
        in_use: 0,
    };

    fn values_of(inputs: &[Tensor]) -> Vec<Value<'static>> {
        inputs
            .iter()
            .map(|x| Value::Tensor(Arc::new(x.clone())))
            .collect()
    }

    #[test]
    fn fused_has_the_composed_bits() {
        // V's rows partial panels (packed a block at a time), then whole panels of 16 or 32
        // read in place, with more than one block of 256 keys.
        fused_and_composed(70, 37, 24, 9);
        fused_and_composed(20, 300, 24, 64);
    }

    fn fused_and_composed(l: usize, s: usize, e: usize, ev: usize) {
        let t = |shape: &[usize], seed: u64| {
            tensor_for_test(shape, random(shape.iter().product(), seed))
        };
        let q = t(&[2, 3, l, e], 1);
        let bool_mask = tensor_for_test(
            &[3, 1, s],
            (0..3 * s).map(|i| i % 5 != 2).collect::<Vec<bool>>(),
        );
        let cases: Vec<(bool, Vec<Tensor>)> = vec![
            (
                false,
                vec![q.clone(), t(&[2, 3, s, e], 2), t(&[2, 3, s, ev], 3)],
            ),
            (
                true,
                vec![q.clone(), t(&[1, 3, s, e], 4), t(&[2, 1, s, ev], 5)],
            ),
            (
                false,
                vec![
                    q.clone(),
                    t(&[2, 3, s, e], 6),
                    t(&[2, 3, s, ev], 7),
                    bool_mask,
                ],
            ),
            (
                false,
                vec![
                    q.clone(),
                    t(&[2, 3, s, e], 8),
                    t(&[2, 3, s, ev], 9),
                    t(&[l, s], 10),
                    tensor_for_test(&[1], vec![0.3f32]),
                ],
            ),
        ];
        for (causal, inputs) in cases {
            let op = Sdpa { causal };
            let values = values_of(&inputs);
            let cx = EvalCx::new(&values, UNLIMITED);
            let arc = |i: usize| inputs.get(i).map(|x| Arc::new(x.clone()));
            let composed = op
                .composed(
                    &cx,
                    [arc(0).unwrap(), arc(1).unwrap(), arc(2).unwrap()],
                    if causal { None } else { arc(3) },
                    arc(4),
                    ElementType::F32,
                )
                .unwrap();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let fused = pool.install(|| {
                    fused(
                        &cx,
                        [&inputs[0], &inputs[1], &inputs[2]],
                        inputs.get(3).filter(|_| !causal),
                        inputs.get(4),
                        causal,
                    )
                });
                let fused = fused
                    .expect("the one-pass path takes these shapes")
                    .unwrap();
                assert_eq!(fused.shape(), composed.shape());
                let bits = |x: &Tensor| -> Vec<u32> {
                    f32::view(x).unwrap().iter().map(|v| v.to_bits()).collect()
                };
                assert_eq!(
                    bits(&fused),
                    bits(&composed),
                    "causal {causal}, {threads} threads"
                );
            }
        }
        // A mask that enlarges the batch takes the composed path.
        let k = t(&[1, s, e], 11);
        let v = t(&[1, s, ev], 12);
        let q1 = t(&[1, l, e], 13);
        let mask = t(&[4, l, s], 14);
        let values = values_of(&[q1.clone(), k.clone(), v.clone()]);
        let cx = EvalCx::new(&values, UNLIMITED);
        assert!(fused(&cx, [&q1, &k, &v], Some(&mask), None, false).is_none());
        let got = eval_for_test(&Sdpa { causal: false }, &[q1, k, v, mask], u64::MAX).unwrap();
        assert_eq!(got.shape(), &[4, l, ev]);
    }

    #[test]
    fn matches_the_pseudo_code() {
        let (b, l, s, e, ev) = (2, 5, 7, 4, 3);
        let q = random(b * l * e, 1);
        let k = random(b * s * e, 2);
        let v = random(b * s * ev, 3);
        let t = |shape: &[usize], d: &Vec<f32>| tensor_for_test(shape, d.clone());
        let (qt, kt, vt) = (t(&[b, l, e], &q), t(&[b, s, e], &k), t(&[b, s, ev], &v));
        let per = |i: usize, n: usize, d: &[f32]| d[i * n..(i + 1) * n].to_vec();
        let scale = 1.0 / (e as f64).sqrt();
        let dims = (l, s, e, ev);
        let want = |bias: &dyn Fn(usize, usize, usize) -> f64, scale: f64| -> Vec<f64> {
            (0..b)
                .flat_map(|i| {
                    reference(
                        &per(i, l * e, &q),
                        &per(i, s * e, &k),
                        &per(i, s * ev, &v),
                        dims,
                        scale,
                        |x, y| bias(i, x, y),
                    )
                })
                .collect()
        };
        // No mask, default scale.
        let got = eval_for_test(
            &Sdpa { causal: false },
            &[qt.clone(), kt.clone(), vt.clone()],
            u64::MAX,
        )
        .unwrap();
        assert_eq!(got.shape(), &[b, l, ev]);
        close(&got, &want(&|_, _, _| 0.0, scale), 1e-5);
        // Causal (the mask is ignored).
        let mask = tensor_for_test(&[l, s], vec![false; l * s]);
        let got = eval_for_test(
            &Sdpa { causal: true },
            &[qt.clone(), kt.clone(), vt.clone(), mask],
            u64::MAX,
        )
        .unwrap();
        close(
            &got,
            &want(
                &|_, x, y| if y > x { f64::NEG_INFINITY } else { 0.0 },
                scale,
            ),
            1e-5,
        );
        // A boolean mask broadcast over the batch and L, and a scale input.
        let keep: Vec<bool> = (0..s).map(|j| j % 3 != 1).collect();
        let mask = tensor_for_test(&[1, 1, s], keep.clone());
        let sc = tensor_for_test(&[], vec![0.25f32]);
        let got = eval_for_test(
            &Sdpa { causal: false },
            &[qt.clone(), kt.clone(), vt.clone(), mask, sc],
            u64::MAX,
        )
        .unwrap();
        close(
            &got,
            &want(
                &|_, _, y| if keep[y] { 0.0 } else { f64::NEG_INFINITY },
                0.25,
            ),
            1e-5,
        );
        // An additive mask per batch.
        let add = random(b * l * s, 9);
        let mask = tensor_for_test(&[b, l, s], add.clone());
        let got = eval_for_test(&Sdpa { causal: false }, &[qt, kt, vt, mask], u64::MAX).unwrap();
        close(
            &got,
            &want(&|i, x, y| add[(i * l + x) * s + y] as f64, scale),
            1e-5,
        );
        // f16, computed in f32 and rounded once.
        let h = |shape: &[usize], d: &Vec<f32>| {
            tensor_for_test(shape, d.iter().map(|&x| f16::from_f32(x)).collect())
        };
        let r = |d: &Vec<f32>| {
            d.iter()
                .map(|&x| f16::from_f32(x).to_f32())
                .collect::<Vec<_>>()
        };
        let (q16, k16, v16) = (r(&q), r(&k), r(&v));
        let got = eval_for_test(
            &Sdpa { causal: false },
            &[h(&[b, l, e], &q), h(&[b, s, e], &k), h(&[b, s, ev], &v)],
            u64::MAX,
        )
        .unwrap();
        let want16: Vec<f64> = (0..b)
            .flat_map(|i| {
                reference(
                    &per(i, l * e, &q16),
                    &per(i, s * e, &k16),
                    &per(i, s * ev, &v16),
                    dims,
                    scale,
                    |_, _| 0.0,
                )
            })
            .collect();
        close(&got, &want16, 1e-3);
    }

    #[test]
    fn infer_table() {
        let ty = |t: ElementType, s: &str| TensorType::new(t, PartialShape::parse(s).unwrap());
        let f = |s: &str| ty(ElementType::F32, s);
        let op = Sdpa { causal: false };
        let infer = |inputs: &[TensorType]| {
            let refs: Vec<&TensorType> = inputs.iter().collect();
            inferred_shape_for_test(&op, &refs)
        };
        assert_eq!(
            infer(&[f("[1,8,?,64]"), f("[1,8,?,64]"), f("[1,8,?,32]")]).as_deref(),
            Ok("[1,8,?,32]")
        );
        assert_eq!(
            infer(&[f("[1,1,5,4]"), f("[3,2,7,4]"), f("[1,2,7,6]")]).as_deref(),
            Ok("[3,2,5,6]")
        );
        assert_eq!(
            infer(&[
                f("[2,?,4]"),
                f("[2,7,4]"),
                f("[2,7,3]"),
                ty(ElementType::Boolean, "[1,5,7]")
            ])
            .as_deref(),
            Ok("[2,5,3]")
        );
        assert_eq!(
            infer(&[f("[2,5,4]"), f("[2,7,4]"), f("[2,7,3]"), f("[]"), f("[1]")]).as_deref(),
            Ok("[2,5,3]")
        );
        assert_eq!(
            infer(&[f("..."), f("[2,7,4]"), f("[2,7,3]")]).as_deref(),
            Ok("[...]")
        );
        for (inputs, why) in [
            (vec![f("[5,4]"), f("[2,7,4]"), f("[2,7,3]")], "at least 3"),
            (
                vec![f("[2,5,4]"), f("[2,7,5]"), f("[2,7,3]")],
                "E (4) and the key's (5)",
            ),
            (
                vec![f("[2,5,4]"), f("[2,7,4]"), f("[2,6,3]")],
                "S (7) and the value's (6)",
            ),
            (vec![f("[2,5,4]"), f("[3,7,4]"), f("[2,7,3]")], "batch dims"),
            (
                vec![f("[2,5,4]"), f("[2,7,4]"), f("[2,7,3]"), f("[7]")],
                "rank 1",
            ),
            (
                vec![f("[2,5,4]"), f("[2,7,4]"), f("[2,7,3]"), f("[4,7]")],
                "do not broadcast",
            ),
            (
                vec![f("[2,5,4]"), f("[2,7,4]"), f("[2,7,3]"), f("[]"), f("[2]")],
                "one element",
            ),
            (
                vec![f("[2,5,4]"), f("[2,7,4]"), ty(ElementType::F16, "[2,7,3]")],
                "must be f32",
            ),
        ] {
            let err = infer(&inputs).unwrap_err();
            assert!(err.contains(why), "{inputs:?}: {err}");
        }
    }
}
