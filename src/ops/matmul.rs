//! MatMul-1: matrix products over the last two dims, with numpy broadcasting of the others.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/matrix/matmul-1.html>
//!
//! Ports: `A` and `B` of one numeric type (boolean is refused, E502); one output of that type.
//! Attributes `transpose_a` and `transpose_b` (default false) swap the last two dims of their
//! input before the product. As in the spec and OpenVINO's shape inference
//! (`matmul_shape_inference.hpp`):
//! * a 1-D `A` of `[K]` is read as `[1, K]` and a 1-D `B` as `[K, 1]` (their transpose flag is
//!   ignored), and the added dim is dropped from the output; two 1-D inputs give a scalar;
//! * the input of lower rank gets leading 1s; the batch dims (all but the last two) broadcast
//!   numpy-style, so the output is `batch × [M, N]`;
//! * a scalar input, `A`'s K and `B`'s K differing, and batch dims that do not broadcast are
//!   invalid inputs (E507) naming the dims. Interval dims are merged (K) and broadcast-merged
//!   (batch) as OpenVINO does.
//!
//! Execution, by type:
//! * **f32 and f64** go through [`matrixmultiply`] (`sgemm`, `dgemm`), which reads both inputs
//!   in place under any strides (a transpose flag only swaps two strides) and packs them
//!   itself. Its K blocking is a compile-time constant (256), and every output element is
//!   one fused multiply-add per K step, in order, within a block, then the blocks' partial sums
//!   added in order: so the element's bits depend on K only, not on the vector unit's kernel
//!   (AVX-512, AVX2 with FMA) nor on how the output is split between threads. ovir splits the
//!   output itself with rayon (batches, then rows or columns), each part one single-threaded
//!   call; the tests check the same bits for every split. CPUs without FMA take the crate's
//!   multiply-then-add kernel, whose bits differ. A product with one row (a fully connected
//!   layer, a decoder step) does not go through the crate, which would pack all of B first,
//!   but through [`gemv`]: B read once where it lies, in the crate's order of sums (K blocks
//!   of 256, a fused chain within each), so the bits are the crate's (tested against it).
//!   f32 products whose `B` is transposed, or with both inputs untransposed and at least one
//!   whole panel of columns, go through ovir's packed GEMM ([`Panels::blocked`], the
//!   crate's order of sums, so the crate's bits: tested) with one input read where it lies,
//!   rather than through the crate, which packs the constant weights again at every call:
//!   [`rows_of_b`] and [`b_in_place`]. A constant untransposed `B` is packed once per model
//!   ([`Op::prepare`], [`PackedB`]) and read so at every run ([`b_packed`]): the same bits.
//! * **f16 and bf16** are widened to f32 (exact), multiplied as f32 and rounded once to the
//!   type.
//! * **integers** are exact with two's complement wrap-around: the product and sum modulo
//!   2^bits, which is independent of the order, by a loop of our own.
//!
//! Accuracy of f32 (and f64): blocked summation, bound `(256 + ⌈K/256⌉)·u·Σ|a·b|` per element
//! (u the unit roundoff); the tests measure it against a float64 reference. Pairwise summation
//! would bound it by `⌈log2 K⌉·u·Σ|a·b|`: MatMul does not meet that bound for K above 256,
//! which is the price of the crate's GEMM (every BLAS sums a K block in order).
//!
//! `K = 0` gives zeros (an empty sum). The output's size is checked against the memory budget
//! (and the f32 copies of f16/bf16 inputs), with overflow-checked products, before any
//! allocation.

use std::borrow::Cow;

use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef, Prepared};
use crate::num::{Float, Int};
use crate::ops::kernel::gemm::Panels;
use crate::ops::kernel::{self, gemv, value_data};
use crate::shape::{DimRule, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatMul {
    pub transpose_a: bool,
    pub transpose_b: bool,
}

pub const DEF: OpDef = OpDef {
    name: "MatMul",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (ta, tb) = crate::attrs_all!(
        a.bool_or(&["transpose_a"], false),
        a.bool_or(&["transpose_b"], false),
    )?;
    Ok(Box::new(MatMul {
        transpose_a: ta.unwrap_or(false),
        transpose_b: tb.unwrap_or(false),
    }))
}

/// The product's geometry: each input as a stack of matrices, and the output's shape.
struct Geometry<D> {
    /// `A` as `[batch…, M, K]` and `B` as `[batch…, K, N]` (after 1-D promotion and the
    /// transposes; padded with leading 1s to one rank).
    a: Vec<D>,
    b: Vec<D>,
    /// The broadcast batch dims.
    batch: Vec<D>,
    m: D,
    k: D,
    n: D,
    /// The output's shape (the promoted dims dropped).
    out: Vec<D>,
    /// Whether A (B) was 1-D and promoted to a matrix.
    a_vec: bool,
    b_vec: bool,
}

impl MatMul {
    /// The shapes' geometry, or why they do not multiply.
    fn geometry<D: DimRule>(&self, a: &[D], b: &[D]) -> Result<Geometry<D>, String> {
        if a.is_empty() || b.is_empty() {
            return Err(format!(
                "MatMul needs inputs of rank 1 or more, not a scalar (A has rank {}, B rank {})",
                a.len(),
                b.len()
            ));
        }
        let (a_vec, b_vec) = (a.len() == 1, b.len() == 1);
        let mut a: Vec<D> = if a_vec {
            vec![D::ONE, a[0]]
        } else {
            a.to_vec()
        };
        let mut b: Vec<D> = if b_vec {
            vec![b[0], D::ONE]
        } else {
            b.to_vec()
        };
        let (ra, rb) = (a.len(), b.len());
        if self.transpose_a && !a_vec {
            a.swap(ra - 2, ra - 1);
        }
        if self.transpose_b && !b_vec {
            b.swap(rb - 2, rb - 1);
        }
        let rank = ra.max(rb);
        a.splice(0..0, std::iter::repeat_n(D::ONE, rank - ra));
        b.splice(0..0, std::iter::repeat_n(D::ONE, rank - rb));
        let (ka, kb) = (a[rank - 1], b[rank - 2]);
        let k = ka.same(kb).ok_or_else(|| {
            format!(
                "A's K ({ka}{}) and B's K ({kb}{}) differ",
                if self.transpose_a && !a_vec {
                    ", A transposed"
                } else {
                    ""
                },
                if self.transpose_b && !b_vec {
                    ", B transposed"
                } else {
                    ""
                },
            )
        })?;
        let batch = (0..rank - 2)
            .map(|i| {
                a[i].broadcast(b[i]).ok_or_else(|| {
                    format!(
                        "the batch dims {} of A and {} of B (axis {i} of rank {rank}) do not broadcast",
                        a[i], b[i]
                    )
                })
            })
            .collect::<Result<Vec<D>, String>>()?;
        let (m, n) = (a[rank - 2], b[rank - 1]);
        let mut out = batch.clone();
        if !a_vec {
            out.push(m);
        }
        if !b_vec {
            out.push(n);
        }
        Ok(Geometry {
            a,
            b,
            batch,
            m,
            k,
            n,
            out,
            a_vec,
            b_vec,
        })
    }
}

impl Op for MatMul {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..2, TypeSet::NUMERIC)?;
        let (a, b) = (cx.input(0), cx.input(1));
        if a.element_type != b.element_type {
            return cx.invalid(
                1,
                format!(
                    "A is {} and B is {}: MatMul's inputs have one type",
                    a.element_type, b.element_type
                ),
            );
        }
        let ty = a.element_type;
        let (Some(da), Some(db)) = (a.shape.dims(), b.shape.dims()) else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        match self.geometry(da, db) {
            Ok(g) => Some(vec![TensorType::new(ty, PartialShape::new(g.out))]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    /// A constant untransposed f32 `B` with at least one whole panel of columns: packed once
    /// in the GEMM's panels ([`PackedB`]), which [`b_packed`] reads.
    fn prepare(
        &self,
        inputs: &[Option<crate::tensor::Value<'_>>],
        budget: &crate::memory::Budget,
    ) -> Option<Prepared> {
        let b = inputs.get(1)?.as_ref()?;
        if self.transpose_b || b.element_type() != crate::ElementType::F32 {
            return None;
        }
        let packed = PackedB::new(b.shape(), &value_data::<f32>(b)?, budget)?;
        let bytes = packed.panels.len() as u64 * 4;
        Some(Prepared::new(packed, bytes))
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (va, vb) = (cx.value(0), cx.value(1));
        let ty = va.element_type();
        if vb.element_type() != ty {
            return Err(EvalError::Types(ty, vb.element_type()));
        }
        let g = self
            .geometry(va.shape(), vb.shape())
            .map_err(EvalError::Invalid)?;
        let batches = g.batch.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let count = batches
            .and_then(|n| n.checked_mul(g.m))
            .and_then(|n| n.checked_mul(g.n))
            .ok_or_else(|| EvalError::Invalid(format!("the output {:?} is too large", g.out)))?;
        cx.reserve(ty, count)?;
        let plan = Plan::new(&g, self);
        let unsupported = || EvalError::UnsupportedType {
            op: "MatMul".into(),
            ty,
        };
        crate::dispatch!(numeric: ty, T => {
            let a = value_data::<T>(va).ok_or_else(unsupported)?;
            let b = value_data::<T>(vb).ok_or_else(unsupported)?;
            let out = plan.run(cx, &a, &b)?;
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&g.out), out)
                .map(|a| vec![T::wrap(a)])
                .map_err(|_| EvalError::Internal("MatMul's output shape"))
        }, _ => Err(unsupported()))
    }
}

/// Where each output matrix's operands lie, and how the inputs are laid out.
struct Plan {
    m: usize,
    k: usize,
    n: usize,
    /// Element offsets of A's and B's matrix for each output matrix, in output order.
    offsets: Vec<(usize, usize)>,
    /// Row and column strides of A (`M × K`) and B (`K × N`) as stored.
    a_strides: (usize, usize),
    b_strides: (usize, usize),
    /// The element counts the inputs must have.
    a_len: usize,
    b_len: usize,
}

impl Plan {
    fn new(g: &Geometry<usize>, op: &MatMul) -> Plan {
        let (m, k, n) = (g.m, g.k, g.n);
        // A 1-D input is one row (column) and is never transposed.
        let a_strides = if op.transpose_a && !g.a_vec {
            (1, m)
        } else {
            (k, 1)
        };
        let b_strides = if op.transpose_b && !g.b_vec {
            (1, k)
        } else {
            (n, 1)
        };
        let rank = g.a.len();
        let offsets = batch_offsets(&g.batch, &g.a[..rank - 2], &g.b[..rank - 2])
            .into_iter()
            .map(|(a, b)| (a * m * k, b * k * n))
            .collect();
        Plan {
            m,
            k,
            n,
            offsets,
            a_strides,
            b_strides,
            a_len: g.a.iter().product(),
            b_len: g.b.iter().product(),
        }
    }

    /// The output's elements, row-major.
    fn run<T: Multiply>(&self, cx: &EvalCx<'_>, a: &[T], b: &[T]) -> Result<Vec<T>, EvalError> {
        // The kernels index the inputs by the plan: they must hold what the shapes say.
        if a.len() != self.a_len || b.len() != self.b_len {
            return Err(EvalError::Internal(
                "MatMul's inputs do not hold their shapes",
            ));
        }
        let count = self.offsets.len() * self.m * self.n;
        if count == 0 {
            return Ok(Vec::new());
        }
        T::product(cx, self, a, b)
    }

    /// The parts the output is computed in (in parallel): whole matrices when there are enough
    /// for the threads, else each matrix split along its longer side.
    fn parts(&self) -> Vec<Part> {
        let threads = rayon::current_num_threads().max(1);
        let (m, n) = (self.m, self.n);
        let batches = self.offsets.len();
        let work = m.saturating_mul(n).saturating_mul(self.k.max(1));
        let split = if batches >= threads || work < 1 << 18 {
            1
        } else {
            threads.div_ceil(batches)
        };
        let (along_n, side) = if n >= m { (true, n) } else { (false, m) };
        // Parts of a multiple of 16 (the wider kernels' tile), at least one.
        let step = side.div_ceil(split).div_ceil(16) * 16;
        let mut parts = Vec::new();
        for batch in 0..batches {
            let mut at = 0;
            while at < side {
                let end = (at + step.max(1)).min(side);
                let (rows, cols) = if along_n {
                    (0..m, at..end)
                } else {
                    (at..end, 0..n)
                };
                parts.push(Part { batch, rows, cols });
                at = end;
            }
        }
        parts
    }
}

/// One piece of the output: some rows and columns of one output matrix.
#[derive(Clone, Debug)]
struct Part {
    batch: usize,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
}

/// For each output batch index (row-major over `batch`), the matrix index in A and in B.
fn batch_offsets(batch: &[usize], a: &[usize], b: &[usize]) -> Vec<(usize, usize)> {
    // Strides in matrices, 0 where a dim of 1 is broadcast.
    let strides = |dims: &[usize]| {
        let mut s = vec![0; dims.len()];
        let mut step = 1;
        for i in (0..dims.len()).rev() {
            s[i] = if dims[i] == 1 { 0 } else { step };
            step *= dims[i];
        }
        s
    };
    let (sa, sb) = (strides(a), strides(b));
    let total: usize = batch.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0; batch.len()];
    for _ in 0..total {
        let dot = |s: &[usize]| index.iter().zip(s).map(|(i, s)| i * s).sum::<usize>();
        out.push((dot(&sa), dot(&sb)));
        for d in (0..batch.len()).rev() {
            index[d] += 1;
            if index[d] < batch[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// A pointer to the output that parts write through, each to its own elements.
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: the parts write disjoint elements of one buffer that outlives them.
unsafe impl<T: Send> Send for Shared<T> {}
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so that closures capture the `Send` wrapper, not its field).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

/// An element type MatMul computes on.
trait Multiply: Element {
    fn product(
        cx: &EvalCx<'_>,
        plan: &Plan,
        a: &[Self],
        b: &[Self],
    ) -> Result<Vec<Self>, EvalError>;
}

/// The two float types of the GEMM crate: one single-threaded call, `C = A·B` (C overwritten).
/// Other ops that reduce to matrix products (convolution) call it too, so that their bits
/// follow the same fixed K blocking.
pub(crate) trait Gemm: Element + Float + gemv::Fused {
    /// # Safety
    /// As [`matrixmultiply::sgemm`]: every element addressed by the dims and strides lies in
    /// its buffer, and `c`'s are written by no one else.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: *const Self,
        a_strides: (usize, usize),
        b: *const Self,
        b_strides: (usize, usize),
        c: *mut Self,
        rsc: usize,
    );
}

macro_rules! gemm_impl {
    ($t:ty, $f:path, $product:path) => {
        impl Gemm for $t {
            unsafe fn gemm(
                m: usize,
                k: usize,
                n: usize,
                a: *const $t,
                (rsa, csa): (usize, usize),
                b: *const $t,
                (rsb, csb): (usize, usize),
                c: *mut $t,
                rsc: usize,
            ) {
                // SAFETY: the caller's. Strides fit isize: they are at most an input's length.
                unsafe {
                    $f(
                        m,
                        k,
                        n,
                        1.0,
                        a,
                        rsa as isize,
                        csa as isize,
                        b,
                        rsb as isize,
                        csb as isize,
                        0.0,
                        c,
                        rsc as isize,
                        1,
                    )
                }
            }
        }

        impl Multiply for $t {
            fn product(
                cx: &EvalCx<'_>,
                plan: &Plan,
                a: &[$t],
                b: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                $product(cx, plan, a, b)
            }
        }
    };
}
gemm_impl!(f32, matrixmultiply::sgemm, f32_product);
gemm_impl!(f64, matrixmultiply::dgemm, crate_product);

/// [`float_product`] as a [`Multiply::product`].
fn crate_product<T: Gemm>(
    _cx: &EvalCx<'_>,
    plan: &Plan,
    a: &[T],
    b: &[T],
) -> Result<Vec<T>, EvalError> {
    Ok(float_product(plan, a, b))
}

/// The f32 product: [`b_packed`] where `B` was packed once for the model, [`b_in_place`] or
/// [`rows_of_b`] where one input can be read in place (each with its packed copy reserved in
/// the budget first), else [`float_product`].
fn f32_product(cx: &EvalCx<'_>, plan: &Plan, a: &[f32], b: &[f32]) -> Result<Vec<f32>, EvalError> {
    if in_place_b(plan)
        && let Some(packed) = cx.prepared::<PackedB>()
        && packed.holds(plan)
    {
        return Ok(b_packed(plan, a, packed));
    }
    if in_place_b(plan) {
        // Each thread's packed blocks of B.
        let len = Panels::detect().copied_len(plan.k, plan.n) as u64;
        let bytes = len.saturating_mul(4 * rayon::current_num_threads() as u64);
        cx.reserve_bytes("MatMul's packed blocks of B", bytes)?;
        return Ok(b_in_place(plan, a, b));
    }
    if transposed_b(plan) {
        let packed = Panels::detect().packed_len(plan.k, packed_rows(plan));
        let bytes = (packed as u64).saturating_mul(plan.offsets.len() as u64 * 4);
        // And each thread's block of Cᵀ, when it computes Cᵀ.
        let threads = rayon::current_num_threads() as u64;
        let block = (ROWS_PART.min(plan.n) * COLS_PART.min(plan.m)) as u64 * 4;
        let block = if flipped(plan) { block } else { 0 };
        let bytes = bytes.saturating_add(threads.saturating_mul(block));
        cx.reserve_bytes("MatMul's packed copy of an input", bytes)?;
        return Ok(rows_of_b(plan, a, b));
    }
    Ok(float_product(plan, a, b))
}

/// Whether [`rows_of_b`] takes the product: `B` transposed (`[N, K]` as stored, a fully
/// connected layer's weights as OpenVINO writes them), more than one row (one row goes to
/// [`gemv`]), `K > 0`.
fn transposed_b(plan: &Plan) -> bool {
    plan.b_strides == (1, plan.k) && plan.m > 1 && plan.k > 0 && plan.n > 0
}

/// Whether [`b_in_place`] takes the product: `A` and `B` as stored (`K` contiguous in `A`'s
/// rows, `N` in `B`'s), more than one row (one row goes to [`gemv`]), at least one whole
/// panel of columns, `K > 0`.
fn in_place_b(plan: &Plan) -> bool {
    let w = Panels::detect().width();
    plan.b_strides == (plan.n, 1)
        && plan.a_strides == (plan.k, 1)
        && plan.m > 1
        && plan.k > 0
        && plan.n >= w
}

/// The f32 product of an untransposed `B` (`[K, N]`, the weights of a fully connected layer
/// stored that way) on the packed GEMM, `A`'s rows read where they lie and `B`'s packed a
/// block at a time as the parts reach them ([`Panels::copying`]), rather than through the
/// crate, which packs all of `B` again at every call. The parts split the columns first, so
/// that few of them pack the same block of `B` (a linear layer's weights once). Sums in the
/// crate's order ([`Panels::blocked`]): the bits of [`float_product`] (tested).
fn b_in_place(plan: &Plan, a: &[f32], b: &[f32]) -> Vec<f32> {
    let (k, n) = (plan.k, plan.n);
    let panels = Panels::detect().blocked().copying();
    let offs: Vec<usize> = (0..k).map(|p| p * n).collect();
    by_column_parts(plan, panels.width(), a, |(ap, bo, c0), (nr, nc), cp| {
        // SAFETY: the part's rows of A and block of C (`by_column_parts`); `run` checked that
        // B holds every matrix the offsets address: B's rows from column `c0` hold the part's
        // `nc` columns (all that copying reads).
        unsafe {
            let bp = (b.as_ptr().add(bo + c0), &offs[..]);
            panels.gemm_rows(nr, nc, k, ap, k, bp, cp, n)
        }
    })
}

/// The output of [`b_in_place`] and [`b_packed`], computed in parts by `part((a, bo, c0),
/// (nr, nc), c)`: `nr` rows of `A` from `a` (row stride `K`) times the `nc` columns of `B`'s
/// matrix at element offset `bo` from column `c0` (a multiple of `w`) into the block of `C` at
/// `c` (row stride `N`). The parts split the columns first, in whole panels of `w`, so that
/// few of them read the same columns of `B` (a linear layer's weights once).
fn by_column_parts(
    plan: &Plan,
    w: usize,
    a: &[f32],
    part: impl Fn((*const f32, usize, usize), (usize, usize), *mut f32) + Sync,
) -> Vec<f32> {
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let batches = plan.offsets.len();
    // Some four parts a thread from the columns alone where they allow: each part of rows
    // reads its columns of `B` again.
    let want = (4 * rayon::current_num_threads()).div_ceil(batches);
    let cols = (n.div_ceil(w).div_ceil(want) * w).min(COLS_PART);
    let col_parts = n.div_ceil(cols);
    let (rows, row_parts) = row_split(m, batches * col_parts);
    let mut out = vec![0f32; batches * m * n];
    let c = Shared(out.as_mut_ptr());
    (0..batches * row_parts * col_parts)
        .into_par_iter()
        .for_each(|i| {
            let (batch, r) = (i / (row_parts * col_parts), i % (row_parts * col_parts));
            let (r0, c0) = ((r / col_parts) * rows, (r % col_parts) * cols);
            let (nr, nc) = (rows.min(m - r0), cols.min(n - c0));
            let (ao, bo) = plan.offsets[batch];
            // SAFETY: `run` checked that A holds every matrix the offsets address (rows
            // `r0..r0 + nr` of this one); `C`'s rows `r0..r0 + nr`, columns `c0..c0 + nc`,
            // of this batch, which no other part writes.
            let (ap, cp) = unsafe {
                (
                    a.as_ptr().add(ao + r0 * k),
                    c.get().add(batch * m * n + r0 * n + c0),
                )
            };
            part((ap, bo, c0), (nr, nc), cp);
        });
    out
}

/// A constant untransposed f32 `B` (`[…, K, N]`) packed once per model
/// ([`Op::prepare`]): each of its matrices in the GEMM's panels, `per` elements apart, the
/// columns past `N` of the last panel 0.
#[derive(Debug)]
struct PackedB {
    k: usize,
    n: usize,
    width: usize,
    per: usize,
    panels: Vec<f32>,
}

impl PackedB {
    /// `B` of `shape` with elements `b`, packed for this CPU's panels; `None` where
    /// [`b_in_place`] would not read it (fewer columns than a panel, `K = 0`, rank below 2), or
    /// where the copy does not fit `budget`.
    fn new(shape: &[usize], b: &[f32], budget: &crate::memory::Budget) -> Option<PackedB> {
        let panels = Panels::detect();
        let &[.., k, n] = shape else {
            return None;
        };
        let width = panels.width();
        let matrices = b.len().checked_div(k.checked_mul(n)?)?;
        if k == 0 || n < width || matrices.checked_mul(k * n)? != b.len() {
            return None;
        }
        let per = panels.packed_len(k, n);
        let len = per.checked_mul(matrices)?;
        let bytes = u64::try_from(len).ok()?.checked_mul(4)?;
        budget.check("MatMul's packed weights", bytes).ok()?;
        let mut out = vec![0f32; len];
        for (matrix, dst) in b.chunks_exact(k * n).zip(out.chunks_exact_mut(per)) {
            for (p, row) in matrix.chunks_exact(n).enumerate() {
                panels.pack_row(dst, k, p, row);
            }
        }
        Some(PackedB {
            k,
            n,
            width,
            per,
            panels: out,
        })
    }

    /// Whether these are the panels of `plan`'s `B` on this CPU: the same `K`, `N` and panel
    /// width, and every matrix the plan reads.
    fn holds(&self, plan: &Plan) -> bool {
        let matrices = self.panels.len() / self.per.max(1);
        self.k == plan.k
            && self.n == plan.n
            && self.width == Panels::detect().width()
            && plan.b_len == matrices * self.k * self.n
    }
}

/// [`b_in_place`] with `B` packed once for the model ([`PackedB`]): each part multiplies its
/// columns' panels as they lie, with no packing at each run. The same parts and the same bits.
fn b_packed(plan: &Plan, a: &[f32], b: &PackedB) -> Vec<f32> {
    let panels = Panels::detect().blocked();
    let (k, n, w) = (plan.k, plan.n, b.width);
    by_column_parts(plan, w, a, |(ap, bo, c0), (nr, nc), cp| {
        let at = (bo / (k * n)) * b.per + (c0 / w) * k * w;
        // SAFETY: the part's rows of A and block of C (`by_column_parts`); `holds` checked
        // that the panels hold every matrix the offsets address, whole panels of `K` rows,
        // `c0` a multiple of the width.
        unsafe { panels.gemm(nr, nc, k, ap, k, &b.panels[at..], cp, n) }
    })
}

/// Rows per part (a multiple of 8, at most [`ROWS_PART`]) and the number of parts, for
/// `rows_n` rows beside `others` parts (batches × columns): some four parts per thread.
fn row_split(rows_n: usize, others: usize) -> (usize, usize) {
    let threads = rayon::current_num_threads().max(1);
    let want = (4 * threads).div_ceil(others.max(1));
    let rows = rows_n
        .div_ceil(want)
        .next_multiple_of(8)
        .clamp(8, ROWS_PART);
    (rows, rows_n.div_ceil(rows))
}

/// Whether [`rows_of_b`] computes `Cᵀ` (packing `A`) rather than `C` (packing `B`).
fn flipped(plan: &Plan) -> bool {
    plan.n > plan.m || plan.a_strides.1 != 1
}

/// The rows (of `K` elements) of the input [`rows_of_b`] packs, per output matrix.
fn packed_rows(plan: &Plan) -> usize {
    if flipped(plan) { plan.m } else { plan.n }
}

/// Rows and columns of the GEMM's output per part of [`rows_of_b`] (at most): a part's rows of
/// the operand read in place stay in the L2 cache, its scratch within 1 MiB.
const ROWS_PART: usize = 256;
const COLS_PART: usize = 1024;

/// The f32 product of a transposed `B` (`[N, K]` as stored) on the packed GEMM, one operand's
/// rows read where they lie and the other's packed in panels (transposed: its `K` steps down
/// the panel). With more columns than rows (`N > M`: a fully connected layer, whose weights
/// the crate would pack again at every call), or `A` transposed, as `Cᵀ = B·Aᵀ`: `B`'s rows in
/// place, `Aᵀ` packed, each part's block of `Cᵀ` computed in the thread's scratch and written
/// transposed to `C`. Else as `C = A·Bᵀ`: `A`'s rows in place, `Bᵀ` packed, `C` written
/// directly. Sums in the crate's order ([`Panels::blocked`]): the bits of
/// [`float_product`] (tested).
fn rows_of_b(plan: &Plan, a: &[f32], b: &[f32]) -> Vec<f32> {
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let panels = Panels::detect().blocked();
    let w = panels.width();
    let batches = plan.offsets.len();
    let flip = flipped(plan);
    // The GEMM's output is `rows × cols`; `packed` the panels of its `cols` (strides of
    // their elements, row then step), `rows_at` where its rows lie (batch → offset).
    let (rows_n, cols_n) = if flip { (n, m) } else { (m, n) };
    let (src, (rs, cs)) = if flip {
        (a, plan.a_strides)
    } else {
        (b, (k, 1))
    };
    let of = |batch: usize| {
        let (ao, bo) = plan.offsets[batch];
        if flip { (bo, ao) } else { (ao, bo) }
    };
    let in_place = if flip { b } else { a };
    let per = panels.packed_len(k, cols_n);
    let panels_n = cols_n.div_ceil(w);
    let mut packed = vec![0f32; batches * per];
    packed
        .par_chunks_mut(k * w)
        .enumerate()
        .for_each(|(i, panel)| {
            let (batch, j) = (i / panels_n, i % panels_n);
            let rows = &src[of(batch).1 + j * w * rs..];
            panels.pack_transposed(rows, (rs, cs), (k, w.min(cols_n - j * w)), panel);
        });
    // Parts: rows × whole panels of columns, enough for the threads.
    let cols = cols_n.min(COLS_PART);
    let col_parts = cols_n.div_ceil(cols);
    let (rows, row_parts) = row_split(rows_n, batches * col_parts);
    let mut out = vec![0f32; batches * m * n];
    let c = Shared(out.as_mut_ptr());
    (0..batches * row_parts * col_parts)
        .into_par_iter()
        .for_each(|i| {
            let (batch, r) = (i / (row_parts * col_parts), i % (row_parts * col_parts));
            let (r0, c0) = ((r / col_parts) * rows, (r % col_parts) * cols);
            let (nr, nc) = (rows.min(rows_n - r0), cols.min(cols_n - c0));
            let block = &packed[batch * per + (c0 / w) * k * w..][..panels.packed_len(k, nc)];
            // SAFETY: `run` checked that A and B hold every matrix the offsets address: rows
            // `r0..r0 + nr` of the operand read in place (`K` contiguous steps each) lie in
            // it; `block` holds the panels of columns `c0..c0 + nc`.
            let rows_in = unsafe { in_place.as_ptr().add(of(batch).0 + r0 * k) };
            let at = batch * m * n;
            if !flip {
                // SAFETY: rows `r0..r0 + nr`, columns `c0..c0 + nc` of this batch's `C`,
                // which no other part writes.
                unsafe {
                    let cp = c.get().add(at + r0 * n + c0);
                    panels.gemm(nr, nc, k, rows_in, k, block, cp, n)
                };
                return;
            }
            kernel::with_scratch(nr * nc, |t| {
                // SAFETY: as above; `t` holds `nr × nc`.
                unsafe { panels.gemm(nr, nc, k, rows_in, k, block, t.as_mut_ptr(), nc) };
                for i in 0..nc {
                    // SAFETY: row `c0 + i`, columns `r0..r0 + nr` of this batch's `C`, which
                    // no other part writes.
                    let row = unsafe {
                        let p = c.get().add(at + (c0 + i) * n + r0);
                        std::slice::from_raw_parts_mut(p, nr)
                    };
                    for (j, o) in row.iter_mut().enumerate() {
                        *o = t[j * nc + i];
                    }
                }
            });
        });
    out
}

/// The product through the GEMM crate, its parts in parallel.
fn float_product<T: Gemm>(plan: &Plan, a: &[T], b: &[T]) -> Vec<T> {
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let mut out = vec![<T as Float>::ZERO; plan.offsets.len() * m * n];
    if k == 0 {
        // An empty sum.
        return out;
    }
    if m == 1 && gemv::available() {
        return one_row(plan, a, b, out);
    }
    let c = Shared(out.as_mut_ptr());
    let (rsa, csa) = plan.a_strides;
    let (rsb, csb) = plan.b_strides;
    plan.parts().into_par_iter().for_each(|p| {
        let (ao, bo) = plan.offsets[p.batch];
        // SAFETY: `run` checked that A and B hold every matrix the offsets address; the part's
        // rows and columns lie in their matrices, and no two parts share an output element.
        unsafe {
            T::gemm(
                p.rows.len(),
                k,
                p.cols.len(),
                a.as_ptr().add(ao + p.rows.start * rsa),
                (rsa, csa),
                b.as_ptr().add(bo + p.cols.start * csb),
                (rsb, csb),
                c.get()
                    .add(p.batch * m * n + p.rows.start * n + p.cols.start),
                n,
            )
        }
    });
    out
}

/// The product of one-row matrices ([`gemv`]: `B` read once, where it lies, in the crate's
/// order of sums), each output row in parts of whole vectors when the work is large enough
/// for threads.
fn one_row<T: Gemm>(plan: &Plan, a: &[T], b: &[T], mut out: Vec<T>) -> Vec<T> {
    let (k, n) = (plan.k, plan.n);
    let threads = rayon::current_num_threads().max(1);
    let part = if k.saturating_mul(n) < kernel::PARALLEL_MIN || threads == 1 {
        n
    } else {
        n.div_ceil(threads).div_ceil(16) * 16
    };
    for (row, &(ao, bo)) in out.chunks_mut(n).zip(&plan.offsets) {
        let a = &a[ao..ao + k];
        let b = &b[bo..bo + k * n];
        row.par_chunks_mut(part.max(1))
            .enumerate()
            .for_each(|(i, c)| gemv::row_times(a, b, plan.b_strides, i * part, c));
    }
    out
}

/// An f16 or bf16 slice widened to f32 (exact).
pub(crate) fn widen<H>(x: &[H]) -> Vec<f32>
where
    [H]: HalfFloatSliceExt,
{
    let mut w = vec![0f32; x.len()];
    x.convert_to_f32_slice(&mut w);
    w
}

/// f32 values rounded once to f16 or bf16.
pub(crate) fn narrow<H: Copy + Default>(wide: &[f32]) -> Vec<H>
where
    [H]: HalfFloatSliceExt,
{
    let mut out = vec![H::default(); wide.len()];
    out.convert_from_f32_slice(wide);
    out
}

/// For the tests: `f`'s f32 results as bits, run in a pool of each of `threads` threads.
#[cfg(test)]
pub(crate) fn bits_at_thread_counts(
    threads: &[usize],
    f: impl Fn() -> Vec<f32> + Sync,
) -> Vec<Vec<u32>> {
    threads
        .iter()
        .map(|&t| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap();
            pool.install(&f).iter().map(|x| x.to_bits()).collect()
        })
        .collect()
}

macro_rules! widened {
    ($($t:ty)*) => {$(
        impl Multiply for $t {
            fn product(
                cx: &EvalCx<'_>,
                plan: &Plan,
                a: &[$t],
                b: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                let count = plan.offsets.len() * plan.m * plan.n;
                let copies = (a.len() as u64 + b.len() as u64 + count as u64) * 4;
                cx.reserve_bytes("f32 copies of the inputs", copies)?;
                Ok(narrow(&f32_product(cx, plan, &widen(a), &widen(b))?))
            }
        }
    )*};
}
widened!(half::f16 half::bf16);

macro_rules! exact {
    ($($t:ty)*) => {$(
        impl Multiply for $t {
            fn product(
                cx: &EvalCx<'_>,
                plan: &Plan,
                a: &[$t],
                b: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                int_product(cx, plan, a, b)
            }
        }
    )*};
}
exact!(i8 i16 i32 i64 u8 u16 u32 u64);

/// The exact product modulo 2^bits: each output row is the sum of B's rows scaled by A's
/// elements (B's rows read contiguously; a transposed B is copied untransposed first).
fn int_product<T: Int + Element>(
    cx: &EvalCx<'_>,
    plan: &Plan,
    a: &[T],
    b: &[T],
) -> Result<Vec<T>, EvalError> {
    let (m, k, n) = (plan.m, plan.k, plan.n);
    let b: Cow<'_, [T]> = if plan.b_strides == (n, 1) {
        Cow::Borrowed(b)
    } else {
        cx.reserve_bytes("an untransposed copy of B", (b.len() * T::SIZE) as u64)?;
        let mut rows = vec![T::ZERO; b.len()];
        for (mat, dst) in b.chunks_exact(k * n).zip(rows.chunks_exact_mut(k * n)) {
            for p in 0..k {
                for j in 0..n {
                    dst[p * n + j] = mat[j * k + p];
                }
            }
        }
        Cow::Owned(rows)
    };
    let mut out = vec![T::ZERO; plan.offsets.len() * m * n];
    let (rsa, csa) = plan.a_strides;
    out.par_chunks_mut(n).enumerate().for_each(|(row, c)| {
        let (batch, i) = (row / m, row % m);
        let (ao, bo) = plan.offsets[batch];
        for p in 0..k {
            let x = a[ao + i * rsa + p * csa];
            let brow = &b[bo + p * n..bo + (p + 1) * n];
            for (c, &y) in c.iter_mut().zip(brow) {
                *c = c.wrapping_add(x.wrapping_mul(y));
            }
        }
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::dtype::ElementType;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};

    fn op(ta: bool, tb: bool) -> MatMul {
        MatMul {
            transpose_a: ta,
            transpose_b: tb,
        }
    }

    fn infer(ta: bool, tb: bool, a: &str, b: &str) -> Result<String, String> {
        let ty = |s: &str| TensorType::new(ElementType::F32, PartialShape::parse(s).unwrap());
        inferred_shape_for_test(&op(ta, tb), &[&ty(a), &ty(b)])
    }

    #[test]
    fn infer_table() {
        let ok = [
            (false, false, "[2,3]", "[3,4]", "[2,4]"),
            (false, false, "[3]", "[3]", "[]"),
            (false, false, "[3]", "[3,4]", "[4]"),
            (false, false, "[2,3]", "[3]", "[2]"),
            (true, true, "[3]", "[3]", "[]"),
            (true, false, "[3]", "[5,3,4]", "[5,4]"),
            (false, true, "[5,2,3]", "[3]", "[5,2]"),
            (false, false, "[5,2,3]", "[3,4]", "[5,2,4]"),
            (false, false, "[1,2,3]", "[5,3,4]", "[5,2,4]"),
            (false, false, "[2,1,2,3]", "[5,3,4]", "[2,5,2,4]"),
            (true, false, "[3,2]", "[3,4]", "[2,4]"),
            (false, true, "[2,3]", "[4,3]", "[2,4]"),
            (true, true, "[7,3,2]", "[7,4,3]", "[7,2,4]"),
            (false, false, "[?,3]", "[3,1..5]", "[?,1..5]"),
            (false, false, "[2,?]", "[3,4]", "[2,4]"),
            (false, false, "[2,2..6]", "[4..9,4]", "[2,4]"),
            (false, false, "[?,2,3]", "[4,3,4]", "[4,2,4]"),
            (false, false, "...", "[3,4]", "[...]"),
            (false, false, "[2,0]", "[0,4]", "[2,4]"),
        ];
        for (ta, tb, a, b, out) in ok {
            assert_eq!(
                infer(ta, tb, a, b).as_deref(),
                Ok(out),
                "{a} × {b} ({ta}, {tb})"
            );
        }
        let bad = [
            (false, false, "[]", "[3,4]", "not a scalar"),
            (
                false,
                false,
                "[2,3]",
                "[4,5]",
                "A's K (3) and B's K (4) differ",
            ),
            (true, false, "[2,3]", "[3,5]", "A's K (2, A transposed)"),
            (false, false, "[2,2..3]", "[4..9,4]", "differ"),
            (
                false,
                false,
                "[2,2,3]",
                "[3,3,4]",
                "the batch dims 2 of A and 3 of B",
            ),
        ];
        for (ta, tb, a, b, why) in bad {
            let err = infer(ta, tb, a, b).unwrap_err();
            assert!(err.contains(why), "{a} × {b}: {err}");
        }
    }

    /// A float64 reference product of `a` (`[batch…, M, K]` or transposed) and `b`, by the
    /// definition.
    fn reference(g: &Geometry<usize>, plan: &Plan, a: &[f64], b: &[f64]) -> Vec<f64> {
        let (m, k, n) = (g.m, g.k, g.n);
        let mut out = Vec::new();
        for &(ao, bo) in &plan.offsets {
            for i in 0..m {
                for j in 0..n {
                    let mut s = 0.0;
                    for p in 0..k {
                        s += a[ao + i * plan.a_strides.0 + p * plan.a_strides.1]
                            * b[bo + p * plan.b_strides.0 + j * plan.b_strides.1];
                    }
                    out.push(s);
                }
            }
        }
        out
    }

    /// Small pseudo-random integers in -8..8 (exact in every type's product sums here).
    fn values(n: usize, seed: u64) -> Vec<i64> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 16) as i64 - 8
            })
            .collect()
    }

    const CASES: &[(&[usize], &[usize], bool, bool)] = &[
        (&[2, 3], &[3, 4], false, false),
        (&[3], &[3], false, false),
        (&[3], &[2, 3, 4], true, false),
        (&[2, 3, 5], &[5], false, true),
        (&[3, 2], &[3, 4], true, false),
        (&[2, 3], &[4, 3], false, true),
        (&[2, 1, 3, 5], &[4, 3, 7], true, false),
        (&[1, 5, 3], &[2, 7, 5], true, true),
        (&[33, 17], &[17, 40], false, false),
        (&[2, 0], &[0, 3], false, false),
        (&[0, 2, 3], &[3, 4], false, false),
    ];

    #[test]
    fn every_type_matches_the_definition() {
        for &(sa, sb, ta, tb) in CASES {
            let o = op(ta, tb);
            let g = o.geometry(sa, sb).unwrap();
            let plan = Plan::new(&g, &o);
            let (na, nb) = (sa.iter().product(), sb.iter().product());
            let (a, b) = (values(na, 1), values(nb, 2));
            let f = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
            let want = reference(&g, &plan, &f(&a), &f(&b));
            macro_rules! check {
                ($($t:ty),*) => {$(
                    let conv = |v: &[i64]| v.iter().map(|&x| <$t as crate::num::Cast>::from_num(crate::num::Num::Int(x as i128))).collect::<Vec<$t>>();
                    let got = eval_for_test(
                        &o,
                        &[tensor_for_test(sa, conv(&a)), tensor_for_test(sb, conv(&b))],
                        u64::MAX,
                    )
                    .unwrap();
                    assert_eq!(got.shape(), &g.out[..], "{sa:?} × {sb:?}");
                    let got: Vec<f64> = <$t>::view(&got)
                        .unwrap()
                        .iter()
                        .map(|x| match crate::num::Cast::to_num(*x) {
                            crate::num::Num::Float(f) => f,
                            crate::num::Num::Int(i) => i as f64,
                        })
                        .collect();
                    // The exact sum, rounded once to a float type or wrapped to an integer.
                    let expect: Vec<f64> = want
                        .iter()
                        .map(|&x| {
                            let v = if <$t as Element>::TYPE.is_float() {
                                <$t as crate::num::Cast>::from_num(crate::num::Num::Float(x))
                            } else {
                                <$t as crate::num::Cast>::from_num(crate::num::Num::Int(x as i128))
                            };
                            match crate::num::Cast::to_num(v) {
                                crate::num::Num::Float(f) => f,
                                crate::num::Num::Int(i) => i as f64,
                            }
                        })
                        .collect();
                    assert_eq!(got, expect, "{} {sa:?} × {sb:?} ({ta}, {tb})", stringify!($t));
                )*};
            }
            check!(f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64);
        }
    }

    #[test]
    fn integers_wrap() {
        let a = tensor_for_test(&[1, 2], vec![100i8, 100]);
        let b = tensor_for_test(&[2, 1], vec![2i8, 1]);
        let got = eval_for_test(&op(false, false), &[a, b], u64::MAX).unwrap();
        assert_eq!(
            i8::view(&got).unwrap().iter().copied().collect::<Vec<_>>(),
            [44]
        );
        let a = tensor_for_test(&[1, 1], vec![i64::MAX]);
        let b = tensor_for_test(&[1, 1], vec![2i64]);
        let got = eval_for_test(&op(false, false), &[a, b], u64::MAX).unwrap();
        assert_eq!(
            i64::view(&got).unwrap().iter().copied().collect::<Vec<_>>(),
            [-2]
        );
    }

    fn random_f32(n: usize, seed: u64) -> Vec<f32> {
        crate::ops::context::uniform_for_test(n, seed, -1.0, 1.0)
    }

    fn run_f32(o: &MatMul, sa: &[usize], sb: &[usize], a: &[f32], b: &[f32]) -> Vec<f32> {
        let got = eval_for_test(
            o,
            &[
                tensor_for_test(sa, a.to_vec()),
                tensor_for_test(sb, b.to_vec()),
            ],
            u64::MAX,
        )
        .unwrap();
        f32::view(&got).unwrap().iter().copied().collect()
    }

    #[test]
    fn the_same_bits_at_any_thread_count() {
        // One matrix (split along N or M by the thread count) and a batch.
        for (sa, sb, ta, tb) in [
            (vec![70, 300], vec![300, 650], false, false),
            (vec![650, 300], vec![70, 300], false, true),
            (vec![3, 300, 90], vec![300, 100], true, false),
        ] {
            let o = op(ta, tb);
            let a = random_f32(sa.iter().product(), 3);
            let b = random_f32(sb.iter().product(), 4);
            let runs = bits_at_thread_counts(&[1, 2, 3, 4], || run_f32(&o, &sa, &sb, &a, &b));
            for (t, r) in runs.iter().enumerate().skip(1) {
                assert!(
                    r == &runs[0],
                    "{sa:?} × {sb:?}: {} threads differ from 1",
                    t + 1
                );
            }
        }
    }

    /// A transposed B goes through [`rows_of_b`] (B's rows in place, Cᵀ computed and written
    /// transposed): the bits of the crate's path ([`float_product`]) for partial panels and
    /// parts, several K blocks, a transposed A, broadcast batches, at 1 to 3 threads.
    #[test]
    fn transposed_b_gives_the_crates_bits() {
        for (sa, sb, ta) in [
            (vec![2, 3], vec![5, 3], false),
            (vec![70, 300], vec![650, 300], false),
            (vec![33, 1030], vec![17, 1030], false),
            (vec![300, 40], vec![9, 300], true),
            (vec![2, 1, 45, 64], vec![3, 130, 64], false),
            (vec![1100, 8], vec![20, 8], false),
            (vec![4, 128, 64], vec![4, 128, 64], false),
        ] {
            let o = op(ta, true);
            let g = o.geometry(&sa, &sb).unwrap();
            let plan = Plan::new(&g, &o);
            assert!(transposed_b(&plan), "{sa:?} × {sb:?} takes the rows of B");
            crates_bits(&o, &plan, (&sa, &sb), rows_of_b);
        }
    }

    /// `path`'s product of random inputs of shapes `sa`, `sb` has the bits of the crate's path
    /// ([`float_product`]) at 1 to 3 threads, and MatMul's eval gives them too.
    fn crates_bits(o: &MatMul, plan: &Plan, (sa, sb): (&[usize], &[usize]), path: PathFn) {
        let a = random_f32(sa.iter().product(), 5);
        let b = random_f32(sb.iter().product(), 6);
        let want: Vec<u32> = float_product(plan, &a, &b)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let runs = bits_at_thread_counts(&[1, 2, 3], || path(plan, &a, &b));
        for (t, r) in runs.iter().enumerate() {
            assert!(r == &want, "{sa:?} × {sb:?} at {} threads", t + 1);
        }
        let through_eval = run_f32(o, sa, sb, &a, &b);
        assert!(through_eval.iter().map(|x| x.to_bits()).eq(want));
    }

    type PathFn = fn(&Plan, &[f32], &[f32]) -> Vec<f32>;

    /// Shapes of `A` and an untransposed `B` for [`b_in_place`] and [`b_packed`]: whole and
    /// partial panels, several column parts, K blocks, broadcast batches, and `B`s narrower
    /// than a panel (the last only on AVX-512).
    fn untransposed_shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
        vec![
            (vec![2, 3], vec![3, 32]),
            (vec![70, 300], vec![300, 650]),
            (vec![9, 1030], vec![1030, 40]),
            (vec![33, 20], vec![20, 2010]),
            (vec![2, 1, 45, 64], vec![3, 64, 130]),
            (vec![300, 8], vec![8, 16]),
        ]
    }

    /// An untransposed B is read in place ([`b_in_place`], its last partial panel packed):
    /// the bits of the crate's path for whole and partial panels, several column parts, K
    /// blocks, broadcast batches, at 1 to 3 threads.
    #[test]
    fn b_in_place_gives_the_crates_bits() {
        for (sa, sb) in untransposed_shapes() {
            let o = op(false, false);
            let g = o.geometry(&sa, &sb).unwrap();
            let plan = Plan::new(&g, &o);
            // (The last, 16 columns wide, only where the panels are 16 wide: AVX2.)
            if !in_place_b(&plan) {
                assert!(
                    Panels::detect().width() > sb[sb.len() - 1],
                    "{sa:?} × {sb:?}"
                );
                continue;
            }
            crates_bits(&o, &plan, (&sa, &sb), b_in_place);
        }
    }

    /// A constant B packed once ([`PackedB`], [`b_packed`]): the bits of the crate's path for
    /// [`untransposed_shapes`], at 1 to 3 threads; no packing where
    /// B is narrower than a panel, has no K, or does not fit the budget.
    #[test]
    fn b_packed_gives_the_crates_bits() {
        let roomy = crate::memory::Budget {
            limit: u64::MAX,
            in_use: 0,
        };
        for (sa, sb) in untransposed_shapes() {
            let o = op(false, false);
            let plan = Plan::new(&o.geometry(&sa, &sb).unwrap(), &o);
            let a = random_f32(sa.iter().product(), 5);
            let b = random_f32(sb.iter().product(), 6);
            let Some(packed) = PackedB::new(&sb, &b, &roomy) else {
                assert!(!in_place_b(&plan), "{sa:?} × {sb:?}");
                continue;
            };
            assert!(packed.holds(&plan));
            let want: Vec<u32> = float_product(&plan, &a, &b)
                .iter()
                .map(|x| x.to_bits())
                .collect();
            let runs = bits_at_thread_counts(&[1, 2, 3], || b_packed(&plan, &a, &packed));
            for (t, r) in runs.iter().enumerate() {
                assert!(r == &want, "{sa:?} × {sb:?} at {} threads", t + 1);
            }
        }
        let b = random_f32(64 * 40, 7);
        let tight = crate::memory::Budget {
            limit: 64 * 40 * 4,
            in_use: 0,
        };
        assert!(PackedB::new(&[64, 40], &b, &roomy).is_some());
        assert!(PackedB::new(&[64, 40], &b, &tight).is_none());
        assert!(PackedB::new(&[0, 40], &[], &roomy).is_none());
        assert!(PackedB::new(&[40], &b[..40], &roomy).is_none());
        assert!(PackedB::new(&[64, 8], &b[..64 * 8], &roomy).is_none());
    }

    #[test]
    fn f32_error_within_the_blocked_bound() {
        // Each element against a float64 reference, relative to Σ|a·b|: the bound of blocked
        // summation is (256 + ⌈K/256⌉)·2^-24 (plus the final rounding).
        for k in [1, 7, 256, 257, 768, 3000] {
            let (m, n) = (9, 11);
            let o = op(false, false);
            let a = random_f32(m * k, k as u64);
            let b = random_f32(k * n, k as u64 + 1);
            let got = run_f32(&o, &[m, k], &[k, n], &a, &b);
            let bound = (256 + k.div_ceil(256) + 1) as f64 * 2f64.powi(-24);
            let mut worst = 0f64;
            for i in 0..m {
                for j in 0..n {
                    let (mut s, mut abs) = (0f64, 0f64);
                    for p in 0..k {
                        let t = a[i * k + p] as f64 * b[p * n + j] as f64;
                        s += t;
                        abs += t.abs();
                    }
                    let err = (got[i * n + j] as f64 - s).abs() / abs;
                    worst = worst.max(err / bound);
                }
            }
            assert!(worst <= 1.0, "K = {k}: error {worst} of the bound");
            // Far below the worst case in practice: a few units of roundoff.
            assert!(worst * bound < 64.0 * 2f64.powi(-24), "K = {k}");
        }
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let a = tensor_for_test(&[1000, 1], vec![1f32; 1000]);
        let b = tensor_for_test(&[1, 1000], vec![1f32; 1000]);
        let err = eval_for_test(&op(false, false), &[a, b], 1 << 20).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
    }

    #[test]
    fn mixed_types_are_refused() {
        let a = tensor_for_test(&[1, 1], vec![1f32]);
        let b = tensor_for_test(&[1, 1], vec![1f64]);
        assert!(eval_for_test(&op(false, false), &[a, b], u64::MAX).is_err());
        let ty = |t| TensorType::new(t, PartialShape::parse("[2,2]").unwrap());
        let (a, b) = (ty(ElementType::F32), ty(ElementType::F16));
        assert!(inferred_shape_for_test(&op(false, false), &[&a, &b]).is_err());
        let c = ty(ElementType::Boolean);
        assert!(inferred_shape_for_test(&op(false, false), &[&c, &c]).is_err());
    }
}
