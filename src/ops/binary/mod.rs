//! The binary elementwise arithmetic family: Subtract, Divide, Add, Multiply, … Each member is
//! one row of the table in [`arith`] (an [`Arith`] type: its name and version, its integer and
//! float rule); this module makes every row an op: [`Binary`] parses `auto_broadcast` (and the
//! row's own attributes), infers the output (types must match, shapes broadcast by the one
//! broadcast module, interval bounds of shape values), evaluates through the fused kernels, and
//! joins fused groups ([`Fusable`]).
//!
//! Types: the twelve numeric types ([`ArithElem`]): integers by the row's integer rule (which
//! may fail, as division does: the error names the first failing element), f32 and f64 by its
//! float rule in the type, f16 and bf16 by the float rule in f32, rounded once to nearest even.
//! `boolean` and `string` inputs are refused, as OpenVINO refuses them.

pub mod arith;
pub mod divide;

pub use arith::ArithOp;

use std::any::Any;
use std::fmt;

use super::kernel::{self, Out, RunResult, Src, StepKernel};
use super::{Arity, AttrError, Attrs, ElemError, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast::{AutoBroadcast, Plan};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Float, Int};
use crate::shape::TensorType;
use crate::shape::types::{Bounds, UNBOUNDED, VALUE_LIMIT};
use crate::tensor::{Element, Tensor};

/// One row of the arithmetic family: a binary op's own rules.
pub trait Arith: Copy + fmt::Debug + PartialEq + Send + Sync + Into<ArithOp> + 'static {
    /// The layer type (as OpenVINO spells it) and the op version.
    const NAME: &'static str;
    const VERSION: u32;

    /// Parses the op's own `<data>` attributes (besides `auto_broadcast`).
    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>>;

    /// The integer rule, checked: the reference every fast loop agrees with.
    fn int<T: Int>(self, a: T, b: T) -> Result<T, ElemError>;

    /// The loop over one run of integers (by default the integer rule, element by element, in
    /// a loop the compiler vectorises when the rule cannot fail).
    #[inline(always)]
    fn int_run<T: Int>(self, a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>) -> RunResult {
        kernel::try_map(a, b, out, |x, y| self.int(x, y))
    }

    /// The float rule, in the float type (f16 and bf16 call it on f32 and round once).
    fn float<F: Float>(self, a: F, b: F) -> F;

    /// Whether a chain of float steps may hold this op in registers ([`ArithOp::visit`]):
    /// not for rules that call a library function per element (Power, FloorMod, Mod), whose
    /// code in every chain loop made the chains of the other ops 1.3-1.6x slower. Such a step
    /// still fuses, tile by tile.
    const CHAINS: bool = true;

    /// The rule on two bounds of integer values (i128, where [`BIG`] stands for an unbounded
    /// upper bound), for interval bounds of shape values: the result's bounds are the extremes
    /// of the rule over the corners of the inputs' intervals. `None`: the op gives no bounds.
    fn corner(self, _a: i128, _b: i128) -> Option<i128> {
        None
    }

    /// Whether the corners bound the rule over B's interval `lo..=hi` (division: not when the
    /// interval holds 0).
    fn corners_bound(self, _b_lo: i128, _b_hi: i128) -> bool {
        true
    }
}

/// An unbounded upper bound in [`Arith::corner`]'s arithmetic: larger than any i64, small
/// enough that sums and products saturate rather than wrap.
pub const BIG: i128 = 1 << 100;

/// The family's table (invoked once, in [`arith`]): `rows` are members whose rules fit a row
/// (a struct, its [`Arith`] impl and its `OpDef` const are generated); `own` are members that
/// implement [`Arith`] in their own file. Generates [`ArithOp`], the enum of every member (what
/// fused chains of floats carry), and `FAMILY`, the registration of every member.
macro_rules! arith_table {
    (
        rows {$(
            $(#[$doc:meta])*
            $ty:ident $const:ident: $name:literal-$version:literal $(, chains: $chains:literal)?,
                int |$a:ident, $b:ident| $int:expr,
                float |$fa:ident, $fb:ident| $float:expr,
                bounds |$ba:ident, $bb:ident| $bounds:expr
                $(, runs |$ra:ident, $rb:ident, $ro:ident| $runs:expr)?;
        )*}
        own { $($own:ident),* $(,)? }
    ) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
            pub struct $ty;

            impl Arith for $ty {
                const NAME: &'static str = $name;
                const VERSION: u32 = $version;
                const CHAINS: bool = true $(&& $chains)?;

                fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
                    Ok($ty)
                }

                #[inline(always)]
                fn int<T: Int>(self, $a: T, $b: T) -> Result<T, ElemError> {
                    $int
                }

                #[inline(always)]
                fn float<F: Float>(self, $fa: F, $fb: F) -> F {
                    $float
                }

                fn corner(self, $ba: i128, $bb: i128) -> Option<i128> {
                    $bounds
                }

                $(
                    #[inline(always)]
                    fn int_run<T: Int>(
                        self,
                        $ra: $crate::ops::kernel::Src<'_, T>,
                        $rb: $crate::ops::kernel::Src<'_, T>,
                        $ro: $crate::ops::kernel::Out<'_, T>,
                    ) -> $crate::ops::kernel::RunResult {
                        $runs
                    }
                )?
            }

            pub const $const: OpDef = Binary::<$ty>::DEF;
        )*

        /// Any member of the family, as a fused chain of floats carries it.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum ArithOp {
            $($ty($ty),)*
            $($own($own),)*
        }

        impl ArithOp {
            /// Calls `v` with this op's float rule: the choice of op is made here, once, and
            /// `v`'s loop is compiled for each op.
            #[inline(always)]
            pub fn visit<F: Float, V: ArithVisitor<F>>(self, v: V) -> V::Out {
                match self {
                    // A row that does not chain never reaches a chain: its arm is a stub, so
                    // that its rule's code is not compiled into every chain loop.
                    $(ArithOp::$ty(k) => if <$ty as Arith>::CHAINS {
                        v.visit(
                            #[inline(always)]
                            move |a, b| Arith::float(k, a, b),
                        )
                    } else {
                        v.visit(
                            #[inline(always)]
                            |a, _| a,
                        )
                    },)*
                    $(ArithOp::$own(k) => v.visit(
                        #[inline(always)]
                        move |a, b| Arith::float(k, a, b),
                    ),)*
                }
            }

            /// The float rule on one pair.
            pub fn float<F: Float>(self, a: F, b: F) -> F {
                match self {
                    $(ArithOp::$ty(k) => k.float(a, b),)*
                    $(ArithOp::$own(k) => k.float(a, b),)*
                }
            }
        }

        $(impl From<$ty> for ArithOp {
            fn from(k: $ty) -> ArithOp {
                ArithOp::$ty(k)
            }
        })*
        $(impl From<$own> for ArithOp {
            fn from(k: $own) -> ArithOp {
                ArithOp::$own(k)
            }
        })*

        /// Every member's definition, for the registry.
        pub const FAMILY: &[&OpDef] = &[$(&$const,)* $(&Binary::<$own>::DEF,)*];
    };
}
pub(crate) use arith_table;

/// Code run with one member's float rule (see [`ArithOp::visit`]).
pub trait ArithVisitor<F> {
    type Out;
    fn visit<O: Fn(F, F) -> F + Copy>(self, op: O) -> Self::Out;
}

/// An element type the arithmetic family computes with: how a row's rules apply to it.
pub trait ArithElem: Element + kernel::Chain {
    /// The row's loop over one run.
    fn run<K: Arith>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult;
    /// The row's rule on one pair.
    fn scalar<K: Arith>(k: K, a: Self, b: Self) -> Result<Self, ElemError>;
}

macro_rules! int_elems {
    ($($t:ty)*) => {$(
        impl ArithElem for $t {
            #[inline(always)]
            fn run<K: Arith>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
                k.int_run(a, b, out)
            }
            fn scalar<K: Arith>(k: K, a: Self, b: Self) -> Result<Self, ElemError> {
                k.int(a, b)
            }
        }
    )*};
}
int_elems!(i8 i16 i32 i64 u8 u16 u32 u64);

macro_rules! float_elems {
    ($($t:ty)*) => {$(
        impl ArithElem for $t {
            #[inline(always)]
            fn run<K: Arith>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
                kernel::map(a, b, out, |x, y| k.float(x, y));
                Ok(())
            }
            fn scalar<K: Arith>(k: K, a: Self, b: Self) -> Result<Self, ElemError> {
                Ok(k.float(a, b))
            }
        }
    )*};
}
float_elems!(f32 f64);

macro_rules! narrow_elems {
    ($($t:ty)*) => {$(
        impl ArithElem for $t {
            #[inline(always)]
            fn run<K: Arith>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
                kernel::through_f32(a, b, out, |x, y| k.float(x, y));
                Ok(())
            }
            fn scalar<K: Arith>(k: K, a: Self, b: Self) -> Result<Self, ElemError> {
                Ok(<$t>::from_f32(k.float(a.to_f32(), b.to_f32())))
            }
        }
    )*};
}
narrow_elems!(half::f16 half::bf16);

/// A row's kernel for one element type, as fused groups call it.
#[derive(Clone, Copy, Debug)]
pub struct ArithKernel<K>(pub K);

impl<K: Arith, T: ArithElem> StepKernel<T> for ArithKernel<K> {
    #[inline(always)]
    fn run(&self, a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>) -> RunResult {
        T::run(self.0, a, b, out)
    }
}

/// How an elementwise layer joins a fused group.
pub trait Fusable: Send + Sync {
    fn auto_broadcast(&self) -> AutoBroadcast;

    /// The op's kernel for element type `ty`: a `Box<dyn StepKernel<T>>` (`T` the Rust type
    /// of `ty`) in a `Box<dyn Any>`, or `None` when the op does not compute `ty` (or is a
    /// Convert, a comparison or Select, which have none). Use [`step_kernel`].
    fn kernel_for(&self, _ty: ElementType) -> Option<Box<dyn Any>> {
        None
    }

    /// The op as a step of a register-held chain of floats: every member of the arithmetic
    /// family whose row chains, and the exact unary ops.
    fn chain_op(&self) -> Option<kernel::ChainOp> {
        None
    }

    /// How many inputs the op combines: 2 (binary), or 1 (unary: its step's two operands are
    /// the same value), or 3 (Select: `cond`, `then`, `else`). A layer with other inputs
    /// besides (a unary op's parameters) is not fused.
    fn data_inputs(&self) -> usize {
        2
    }

    /// The step operands of a member whose inputs (its first [`data_inputs`] of them) are
    /// `all`, and its `cond` if it chooses by one (Select: `cond`, `then`, `else`).
    ///
    /// [`data_inputs`]: Fusable::data_inputs
    fn operands(
        &self,
        all: [kernel::Operand; 3],
    ) -> ([kernel::Operand; 2], Option<kernel::Operand>) {
        match self.data_inputs() {
            1 => ([all[0], all[0]], None),
            _ => ([all[0], all[1]], None),
        }
    }

    /// Whether the op can only be the last member of a group (its output is made from tiles of
    /// its inputs, not by a step kernel): a comparison, Select.
    fn ends_group(&self) -> bool {
        self.compares().is_some() || self.selects().is_some()
    }

    /// For a Convert, the element type it converts to: a member of a fused group where the
    /// group's element type changes (it has no kernel: the parts on either side are computed
    /// in their own types and the tiles converted between them).
    fn converts_to(&self) -> Option<ElementType> {
        None
    }

    /// For a comparison (→ `boolean`), its rule: it may end a fused group, whose parts are
    /// computed in their type tile by tile and compared (it has no kernel).
    fn compares(&self) -> Option<crate::ops::logic::Rule> {
        None
    }

    /// For Select: it may end a fused group, reading parts of it as `then` and `else` (its
    /// `cond` is read first; a fused member's operands are its `then` and `else`).
    fn selects(&self) -> Option<&crate::ops::select::Select> {
        None
    }
}

/// A fusable op's kernel for `T`.
pub fn step_kernel<T: Element>(f: &dyn Fusable) -> Option<Box<dyn StepKernel<T>>> {
    f.kernel_for(T::TYPE)?
        .downcast::<Box<dyn StepKernel<T>>>()
        .ok()
        .map(|b| *b)
}

/// A binary arithmetic op: a row of the family with its `auto_broadcast`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binary<K> {
    pub auto_broadcast: AutoBroadcast,
    pub op: K,
}

impl<K: Arith> Binary<K> {
    pub const DEF: OpDef = OpDef {
        name: K::NAME,
        version: K::VERSION,
        inputs: Arity::exactly(2),
        outputs: Arity::exactly(1),
        parse: parse::<K>,
    };

    pub fn new(auto_broadcast: AutoBroadcast, op: K) -> Binary<K> {
        Binary { auto_broadcast, op }
    }

    /// `a op b` on tensors (what execution does for a layer that is not fused).
    pub fn eval_tensors(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
        let ty = a.element_type();
        if ty != b.element_type() {
            return Err(EvalError::Types(ty, b.element_type()));
        }
        crate::dispatch!(numeric: ty, T => {
            kernel::binary::<T>(self.auto_broadcast, a, b, &ArithKernel(self.op), None, None)
        }, _ => Err(EvalError::UnsupportedType { op: K::NAME.into(), ty }))
    }
}

fn parse<K: Arith>(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let spec = a.auto_broadcast();
    let own = K::parse(a);
    match (spec, own) {
        (Ok(auto_broadcast), Ok(op)) => Ok(Box::new(Binary { auto_broadcast, op })),
        (s, o) => Err(s
            .err()
            .into_iter()
            .chain(o.err().into_iter().flatten())
            .collect()),
    }
}

impl<K: Arith> Op for Binary<K> {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&Self::DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (a, b) = (cx.input(0), cx.input(1));
        let ty = infer_type(cx, K::NAME, a.element_type, b.element_type)?;
        let shape = infer_shape(cx, self.auto_broadcast, a, b)?;
        let mut out = TensorType::new(ty, shape);
        if !a.has_value() || !b.has_value() {
            out.bounds = self.bounds(a, b, &out).map(std::sync::Arc::new);
        }
        Some(vec![out])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (a, b) = (cx.tensor(0)?, cx.tensor(1)?);
        if let Some(plan) = Plan::new(self.auto_broadcast, a.shape(), b.shape()) {
            cx.reserve(a.element_type(), plan.len())?;
        }
        Ok(vec![self.eval_tensors(&a, &b)?])
    }

    fn fusable(&self) -> Option<&dyn Fusable> {
        Some(self)
    }
}

impl<K: Arith> Binary<K> {
    /// Interval bounds of an integer output whose inputs have bounds (shape arithmetic), by
    /// the row's [`corner`](Arith::corner) rule over the broadcast elements.
    fn bounds(&self, a: &TensorType, b: &TensorType, out: &TensorType) -> Option<Bounds> {
        if !crate::tensor::TypeSet::INT.contains(out.element_type) {
            return None;
        }
        let (ba, bb) = (a.int_bounds()?, b.int_bounds()?);
        let (sa, sb) = (a.shape.to_tensor_dims()?, b.shape.to_tensor_dims()?);
        let plan = Plan::new(self.auto_broadcast, &sa, &sb)?;
        if plan.len() > VALUE_LIMIT {
            return None;
        }
        let wide = |v: i64| if v == UNBOUNDED { BIG } else { v as i128 };
        let (mut lo, mut hi) = (
            Vec::with_capacity(plan.len()),
            Vec::with_capacity(plan.len()),
        );
        let mut ok = true;
        plan.runs(0, plan.len(), |r| {
            for i in 0..r.len {
                let x = if r.a_step { r.a + i } else { r.a };
                let y = if r.b_step { r.b + i } else { r.b };
                if !self.op.corners_bound(wide(bb.lo[y]), wide(bb.hi[y])) {
                    ok = false;
                    return false;
                }
                let corners = [
                    (ba.lo[x], bb.lo[y]),
                    (ba.lo[x], bb.hi[y]),
                    (ba.hi[x], bb.lo[y]),
                    (ba.hi[x], bb.hi[y]),
                ]
                .map(|(p, q)| self.op.corner(wide(p), wide(q)));
                let Some(vals) = corners.into_iter().collect::<Option<Vec<i128>>>() else {
                    ok = false;
                    return false;
                };
                let (min, max) = (vals.iter().min(), vals.iter().max());
                let (Some(&min), Some(&max)) = (min, max) else {
                    ok = false;
                    return false;
                };
                if min < i64::MIN as i128 || min >= BIG / 2 {
                    ok = false;
                    return false;
                }
                lo.push(min as i64);
                hi.push(if max > i64::MAX as i128 {
                    UNBOUNDED
                } else {
                    max as i64
                });
            }
            true
        });
        ok.then_some(Bounds { lo, hi })
    }
}

impl<K: Arith> Fusable for Binary<K> {
    fn auto_broadcast(&self) -> AutoBroadcast {
        self.auto_broadcast
    }

    fn kernel_for(&self, ty: ElementType) -> Option<Box<dyn Any>> {
        let k = ArithKernel(self.op);
        crate::dispatch!(numeric: ty, T => {
            let b: Box<dyn StepKernel<T>> = Box::new(k);
            Some(Box::new(b) as Box<dyn Any>)
        }, _ => None)
    }

    fn chain_op(&self) -> Option<kernel::ChainOp> {
        K::CHAINS.then(|| kernel::ChainOp::Arith(self.op.into()))
    }
}

/// The output element type of an elementwise op on inputs `a` and `b`: they must be equal
/// (`dynamic` merges with anything) and numeric. OpenVINO does not promote types.
pub fn infer_type(
    cx: &mut InferCx<'_>,
    op: &str,
    a: ElementType,
    b: ElementType,
) -> Option<ElementType> {
    let ty = match (a, b) {
        (x, y) if x == y => x,
        (ElementType::Dynamic, y) => y,
        (x, ElementType::Dynamic) => x,
        (x, y) => {
            cx.report(ErrorKind::ElementTypeMismatch { a: x, b: y });
            return None;
        }
    };
    match ty {
        ElementType::Boolean | ElementType::String => {
            cx.report(ErrorKind::UnsupportedElementType {
                op: op.to_owned(),
                ty,
            });
            return None;
        }
        ElementType::Dynamic => {}
        t if !crate::tensor::TypeSet::NUMERIC.contains(t) => cx.report(ErrorKind::CannotRunType {
            op: op.to_owned(),
            ty: t,
        }),
        _ => {}
    }
    Some(ty)
}

/// The output shape of an elementwise op under `spec`, with the pdpd warning when the axis is
/// not written (OpenVINO's loader reads 0 where the spec says −1).
pub fn infer_shape(
    cx: &mut InferCx<'_>,
    spec: AutoBroadcast,
    a: &TensorType,
    b: &TensorType,
) -> Option<crate::shape::PartialShape> {
    if let AutoBroadcast::Pdpd {
        axis_given: false, ..
    } = spec
    {
        let consequence = match (a.shape.rank(), b.shape.rank()) {
            (Some(ra), Some(rb)) if ra == rb => {
                "both readings give the same result here".to_owned()
            }
            (Some(ra), Some(rb)) => match crate::broadcast::pdpd(&a.shape, &b.shape, 0) {
                Ok(_) => format!(
                    "the readings differ here: OpenVINO aligns B at axis 0, ovir at axis {}",
                    ra.saturating_sub(rb)
                ),
                Err(_) => "OpenVINO would reject this model (B does not fit at axis 0)".to_owned(),
            },
            _ => "the readings may differ (a rank is dynamic)".to_owned(),
        };
        cx.report(ErrorKind::PdpdAxisMissing { consequence });
    }
    match spec.infer(&a.shape, &b.shape) {
        Ok(shape) => Some(shape),
        Err(e) => {
            let mode = match spec {
                AutoBroadcast::None => "none".to_owned(),
                AutoBroadcast::Numpy => "numpy".to_owned(),
                AutoBroadcast::Pdpd { axis, .. } => format!("pdpd (axis {axis})"),
            };
            let reason = match e.axis {
                Some(ax) => format!("at output axis {ax}, {}", e.reason),
                None => e.reason,
            };
            cx.report(ErrorKind::IncompatibleShapes {
                mode,
                a: a.shape.to_string(),
                b: b.shape.to_string(),
                axis: e.axis,
                reason,
            });
            None
        }
    }
}
