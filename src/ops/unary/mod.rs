//! The unary elementwise family: Abs, Floor, Sqrt, Exp, Sigmoid, Gelu, Clamp, … Each member is
//! one row of the table in [`table`] (a [`Unary`] type: its name and version, the element types
//! it takes, its integer and float rule); this module makes every row an op: [`UnaryOp`] checks
//! the input type, keeps the shape, evaluates through the fused kernels (a unary step is a
//! step whose two operands are the same value) and joins fused groups ([`Fusable`]).
//!
//! Types: integers by the row's integer rule (which may fail: the error names the first
//! failing element); f64 by the float rule in f64 (for the composed activations, a
//! double-double form: [`Unary::double`]); f32 by the float rule in f32 when the rule is exact
//! in the type (`exact`: Abs, Floor, Relu, Clamp…), by the row's single-precision form where it
//! has one ([`Unary::single`]: Exp, Sigmoid, Swish, Tanh, Erf, both Gelu forms, SoftPlus, Mish,
//! Elu, Selu, within 1 ulp of the exact result, vectorised; Erf, Gelu's erf form, Tanh and Mish as
//! [`LaneForm`]s over [`lanes::Lanes`], whose tables are looked up per lane by permutes), else
//! computed in f64 and rounded once (Log, the trigonometric functions…: within 1 ulp of the
//! correctly rounded result, the same bits on every machine, since the elementary functions
//! come from the `libm` crate); f16 and bf16 by the f32 rule, rounded once. Elu and Selu with
//! parameters that do not split into f32 pairs compute f32 through their vector form
//! ([`Unary::vector`]), vectorised, and give the same bits as the scalar rule
//! ([`vector_map`]).
//!
//! Some rows take scalar parameters as further inputs (Swish's beta, Selu's alpha and lambda,
//! HardSigmoid's alpha and beta): [`Unary::PARAMS`] says how many, and
//! [`Unary::with_params`] binds their values at evaluation. Such a layer is fused only when it
//! has no parameter inputs.

pub mod double;
pub mod lanes;
pub mod own;
mod piecewise;
pub mod single;
pub mod table;
pub mod vector;

use std::any::Any;
use std::fmt;
use std::mem::MaybeUninit;

use super::binary::Fusable;
use super::kernel::ChainOp;
use super::kernel::chain::Aligned;
use super::kernel::{self, Out, RunResult, Src, StepKernel};
use super::{Arity, AttrError, Attrs, ElemError, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast::AutoBroadcast;
use crate::dtype::ElementType;
use crate::num::{Cast, Float, Int, Num};
use crate::shape::TensorType;
use crate::tensor::{Element, Tensor, TypeSet};
pub use table::UnaryLink;

/// One row of the unary family: an op's own rules.
pub trait Unary: Copy + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The layer type (as OpenVINO spells it) and the op version.
    const NAME: &'static str;
    const VERSION: u32;
    /// The element types the op takes (its spec's).
    const TYPES: TypeSet;
    /// Whether the float rule is exact in f32 (then f32 is computed in f32; otherwise in f64,
    /// rounded once).
    const EXACT: bool;
    /// How many scalar parameter inputs may follow the data input.
    const PARAMS: Arity = Arity::exactly(0);

    /// Parses the op's `<data>` attributes.
    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>>;

    /// The op with the values of its parameter inputs bound (as f64, in input order).
    fn with_params(self, _params: &[f64]) -> Self {
        self
    }

    /// The integer rule (never called for a type outside [`TYPES`](Unary::TYPES)).
    fn int<T: Int>(self, x: T) -> Result<T, ElemError>;

    /// The op as a step of a register-held chain of floats: the [`EXACT`](Unary::EXACT) ops,
    /// whose float rule is a few IEEE operations in the type itself (as their kernel computes
    /// it), and the table's `typed` rows (HSigmoid, HSwish), whose step is [`typed_rule`].
    fn link(self) -> Option<UnaryLink> {
        None
    }

    /// The float rule, in the float type.
    fn float<F: Float>(self, x: F) -> F;

    /// Whether the row's f32 rule is a single-precision form of its own
    /// ([`single`](Unary::single)) rather than the float rule in f64 rounded once.
    const SINGLE: bool = false;

    /// The f32 rule of a row with [`SINGLE`](Unary::SINGLE) set: straight-line f32 arithmetic
    /// the compiler vectorises, within 1 ulp of the exact result (see [`single`]).
    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        self.float(x as f64) as f32
    }

    /// A row's single-precision form for one lane of the vectorised loop, and whether it
    /// applies to `x`: a form for the common range, without the steps the ends of the range
    /// need (Sigmoid for |x| ≤ 87). Where it does not apply, [`single`](Unary::single) is the
    /// rule's result; where it does, `single` gives the same value. Rows without one take
    /// `single` itself.
    #[inline(always)]
    fn single_lane(self, x: f32) -> (f32, bool) {
        (self.single(x), true)
    }

    /// f32 data through [`single_lane`](Unary::single_lane) and [`single`](Unary::single)
    /// ([`single_map`]). A row with a shorter lane form for some attribute value overrides it
    /// to choose once per run (Swish with β = 1).
    #[inline(always)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        single_map(
            a,
            out,
            #[inline(always)]
            move |x| self.single_lane(x),
            move |x| self.single(x),
        );
    }

    /// The f64 rule: the float rule in f64, but for rows whose formula composes several
    /// roundings, a double-double form within 1 ulp of the exact result (see [`double`]).
    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        self.float(x)
    }

    /// f64 data through [`double`](Unary::double), compiled for the widest vector unit: the
    /// double-double forms' fused multiply-adds are then instructions, not library calls, and
    /// their loops are vectorised (Sigmoid: 49 ms per million elements as a plain loop, 4.9 ms
    /// so). A row whose form depends on an attribute overrides it to choose the form once per
    /// run (a choice per element keeps the loop scalar: Gelu-7's tanh form 46 ms, 8 ms so).
    #[inline(always)]
    fn double_run(self, a: Src<'_, f64>, out: Out<'_, f64>) {
        double_map(
            a,
            out,
            #[inline(always)]
            move |x| self.double(x),
        );
    }

    /// The float rule as straight-line f64 arithmetic the compiler vectorises, within
    /// [`vector::BOUND`] of the exact value (relatively) for every f32 input (see [`vector`]):
    /// the f32 rule of Elu and Selu where their parameters do not split into f32 pairs (their
    /// [`single_run`](Unary::single_run) calls [`vector_run`](Unary::vector_run) then).
    #[inline(always)]
    fn vector(self, x: f64) -> f64 {
        self.float(x)
    }

    /// f32 data through the vector form ([`vector_map`]), the rare element whose rounding the
    /// form does not settle computed by the row's f32 rule.
    #[inline(always)]
    fn vector_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        vector_map(
            a,
            out,
            #[inline(always)]
            move |x| self.vector(x),
            move |x| f32_rule(self, x),
        );
    }
}

/// The integer rule of a row that takes no integers (`check` refuses them first).
#[inline(always)]
pub fn no_int<T>() -> Result<T, ElemError> {
    Err(ElemError::Undefined("not defined on integers"))
}

/// The family's table (invoked once, in [`table`]): `rows` are members whose rules fit a row
/// (a unit struct, its [`Unary`] impl and its `OpDef` const are generated); `own` are members
/// with attributes or parameters that implement [`Unary`] themselves. Generates `FAMILY`, the
/// registration of every member.
macro_rules! unary_table {
    (
        rows {$(
            $(#[$doc:meta])*
            $ty:ident $const:ident: $name:literal-$version:literal, $types:ident, exact: $exact:tt,
                int |$x:ident| $int:expr,
                float |$fx:ident| $float:expr
                $(, single |$sx:ident| $single:expr)?
                $(, lane |$lx:ident| $lane:expr)?
                $(, lanes $lanes:expr)?
                $(, double |$dx:ident| $double:expr)?;
        )*}
        own { $($own:ident),* $(,)? }
        own_links { $($own_link:ident),* $(,)? }
    ) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
            pub struct $ty;

            impl Unary for $ty {
                const NAME: &'static str = $name;
                const VERSION: u32 = $version;
                const TYPES: TypeSet = TypeSet::$types;
                const EXACT: bool = $crate::ops::unary::exact_flag!($exact);

                fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
                    Ok($ty)
                }

                #[inline(always)]
                #[allow(unused_variables)]
                fn int<T: Int>(self, $x: T) -> Result<T, ElemError> {
                    $int
                }

                fn link(self) -> Option<$crate::ops::unary::UnaryLink> {
                    $crate::ops::unary::row_link!($exact, $ty, self)
                }

                #[inline(always)]
                fn float<F: Float>(self, $fx: F) -> F {
                    $float
                }

                $(
                    const SINGLE: bool = true;

                    #[inline(always)]
                    fn single(self, $sx: f32) -> f32 {
                        $single
                    }
                )?

                $(
                    #[inline(always)]
                    fn single_lane(self, $lx: f32) -> (f32, bool) {
                        $lane
                    }
                )?

                $(
                    #[inline(always)]
                    fn single_run(
                        self,
                        a: $crate::ops::kernel::Src<'_, f32>,
                        out: $crate::ops::kernel::Out<'_, f32>,
                    ) {
                        $crate::ops::unary::lanes_map(a, out, $lanes, move |x| self.single(x));
                    }
                )?

                $(
                    #[inline(always)]
                    fn double(self, $dx: f64) -> f64 {
                        $double
                    }
                )?
            }

            pub const $const: OpDef = UnaryOp::<$ty>::DEF;
        )*

        /// Every member's definition, for the registry.
        pub const FAMILY: &[&OpDef] = &[$(&$const,)* $(&UnaryOp::<$own>::DEF,)*];

        $crate::ops::unary::links! { @acc [] [] $(($ty $exact))* $(($own_link true))* }
    };
}
pub(crate) use unary_table;

/// A row's `exact` as [`Unary::EXACT`]: `typed` rows are not exact.
macro_rules! exact_flag {
    (true) => {
        true
    };
    (false) => {
        false
    };
    (typed) => {
        false
    };
}
pub(crate) use exact_flag;

/// The `Some(link)` of an exact or `typed` row, `None` for the others ([`Unary::link`]).
macro_rules! row_link {
    (false, $ty:ident, $k:expr) => {
        None
    };
    (true, $ty:ident, $k:expr) => {
        Some(UnaryLink::$ty($k))
    };
    (typed, $ty:ident, $k:expr) => {
        Some(UnaryLink::$ty($k))
    };
}
pub(crate) use row_link;

/// [`UnaryLink`], the enum of the exact and `typed` members (`(Row exact)` pairs, the others
/// dropped).
macro_rules! links {
    (@acc [$($done:ident)*] [$($typed:ident)*]) => {
        /// A member of the family as a register-held chain of floats carries it: an exact one
        /// (its float rule in the chain's type) or a `typed` one (the rule its kernel computes
        /// for the chain's type, [`typed_rule`](crate::ops::unary::typed_rule)).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum UnaryLink {
            $($done($done),)*
            $($typed($typed),)*
        }

        impl UnaryLink {
            /// Calls `v` with this op's rule in `F`, as a rule of two operands that ignores
            /// its second.
            #[inline(always)]
            pub fn visit<F: Float, V: ArithVisitor<F>>(self, v: V) -> V::Out {
                match self {
                    $(UnaryLink::$done(k) => v.visit(
                        #[inline(always)]
                        move |a, _| k.float(a),
                    ),)*
                    $(UnaryLink::$typed(k) => v.visit(
                        #[inline(always)]
                        move |a, _| $crate::ops::unary::typed_rule(k, a),
                    ),)*
                }
            }
        }
    };
    (@acc [$($done:ident)*] [$($typed:ident)*] ($ty:ident true) $($rest:tt)*) => {
        $crate::ops::unary::links! { @acc [$($done)* $ty] [$($typed)*] $($rest)* }
    };
    (@acc [$($done:ident)*] [$($typed:ident)*] ($ty:ident typed) $($rest:tt)*) => {
        $crate::ops::unary::links! { @acc [$($done)*] [$($typed)* $ty] $($rest)* }
    };
    (@acc [$($done:ident)*] [$($typed:ident)*] ($ty:ident false) $($rest:tt)*) => {
        $crate::ops::unary::links! { @acc [$($done)*] [$($typed)*] $($rest)* }
    };
}
pub(crate) use links;

/// An element type the unary family computes with: how a row's rules apply to it.
pub trait UnaryElem: Element {
    /// The row's loop over one run (`b` is the same run as `a`, and unused).
    fn run<K: Unary>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult;
}

macro_rules! int_elems {
    ($($t:ty)*) => {$(
        impl UnaryElem for $t {
            #[inline(always)]
            fn run<K: Unary>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
                kernel::try_map(a, b, out, |x, _| k.int(x))
            }
        }
    )*};
}
int_elems!(i8 i16 i32 i64 u8 u16 u32 u64);

impl UnaryElem for f64 {
    #[inline(always)]
    fn run<K: Unary>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
        if K::EXACT {
            kernel::map(a, b, out, |x, _| k.float(x));
        } else {
            k.double_run(a, out);
        }
        Ok(())
    }
}

impl UnaryElem for f32 {
    #[inline(always)]
    fn run<K: Unary>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
        if K::EXACT {
            kernel::map(a, b, out, |x, _| k.float(x));
        } else if K::SINGLE {
            k.single_run(a, out);
        } else {
            // Compiled for the widest vector unit: a rule of plain arithmetic (HSwish,
            // HSigmoid, SoftSign…) is then vectorised, its fused steps instructions rather than
            // library calls (the same correctly rounded values either way).
            kernel::simd::vectorised(
                #[inline(always)]
                || scalar_map(a, out, |x| f32_rule(k, x)),
            );
        }
        Ok(())
    }
}

macro_rules! narrow_elems {
    ($($t:ty)*) => {$(
        impl UnaryElem for $t {
            #[inline(always)]
            fn run<K: Unary>(k: K, a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) -> RunResult {
                match a {
                    Src::Slice(s) if K::SINGLE && !K::EXACT => narrow_single(k, s, out),
                    _ => kernel::through_f32(a, b, out, |x, _| f32_rule(k, x)),
                }
                Ok(())
            }
        }
    )*};
}
narrow_elems!(half::f16 half::bf16);

/// f16 or bf16 data through a row's single-precision form, block by block: widened into an f32
/// block, through the row's vectorised f32 loop ([`Unary::single_run`]: its lane form, whose
/// table lookups are permutes), and rounded back once. The same values as the form one element
/// at a time ([`f32_rule`]), which the compiler turns into a gather per lookup where the form
/// has a table: f16 Tanh over 1M elements took 3.5 ms so, 0.6 ms by blocks.
fn narrow_single<K: Unary, T: kernel::Narrow>(k: K, s: &[T], out: Out<'_, T>) {
    let Out { data, stream } = out;
    let mut wide = Aligned([MaybeUninit::<f32>::uninit(); kernel::BLOCK]);
    let mut res = Aligned([MaybeUninit::<f32>::uninit(); kernel::BLOCK]);
    let mut narrowed = [MaybeUninit::<T>::uninit(); kernel::BLOCK];
    for (xs, part) in s.chunks(kernel::BLOCK).zip(data.chunks_mut(kernel::BLOCK)) {
        let n = xs.len();
        T::widen(xs, &mut wide.0[..n]);
        // SAFETY (the `filled` calls): `widen`, the row's loop and `narrow` write all `n`.
        let x = Src::Slice(unsafe { kernel::filled(&wide.0, n) });
        k.single_run(x, Out::new(&mut res.0[..n]));
        let y = unsafe { kernel::filled(&res.0, n) };
        if stream {
            T::narrow(y, &mut narrowed[..n]);
            kernel::simd::stream_copy(unsafe { kernel::filled(&narrowed, n) }, part);
        } else {
            T::narrow(y, part);
        }
    }
}

/// A row's rule in a chain of `F` (f32 or f64), as its kernel computes each element: the f32
/// rule ([`f32_rule`]) or the f64 rule ([`Unary::double`]). (The conversions are exact.)
#[inline(always)]
pub fn typed_rule<K: Unary, F: Float>(k: K, x: F) -> F {
    if F::DOUBLE {
        F::of_f64(k.double(x.as_f64()))
    } else {
        F::of_f64(f64::from(f32_rule(k, x.as_f64() as f32)))
    }
}

/// A row's f32 rule: in f32 when exact, the row's single-precision form where it has one,
/// else in f64 rounded once.
#[inline(always)]
fn f32_rule<K: Unary>(k: K, x: f32) -> f32 {
    if K::EXACT {
        k.float(x)
    } else if K::SINGLE {
        k.single(x)
    } else {
        k.float(x as f64) as f32
    }
}

/// Elements per block of the f32 block loops ([`vector_map`], [`single_map`]). Small: with
/// blocks of 1024 f32 (4 KiB) the block buffer and the input kept the same offset modulo 4 KiB,
/// so every load of the input looked like it depended on a recent store to the buffer (4K
/// aliasing) and waited: Exp over 16.7M f32 at one thread took 9.3-11.5 ms in blocks of
/// 1024, 6.1 in blocks of 256, 5.6-5.9 in blocks of 128 (AMD EPYC Zen 4).
///
/// The buffers are on cache lines of their own ([`Aligned`]): at the offset the caller's
/// frames left them, each vector stored into one could straddle two lines, and Tanh over the
/// same data took 16.1-17.0 ms at one thread where another build's frames gave 11.8 (the
/// loop's instructions the same).
const BLOCK: usize = 128;

/// How many blocks ahead the block loops ask for their input (2 KiB at [`BLOCK`] = 128: one
/// block ahead is too late for the memory's latency, 32 blocks ahead evicts what is in use).
const AHEAD: usize = 4;

/// f32 data through a row's [`Unary::vector`] form, in blocks: each block in one vectorised
/// pass into a buffer, rounded to f32. Where the form's error bound does not settle the
/// rounding of an element (its value lies within 2^-40 of a point halfway between two f32
/// values: about two elements in 100,000 for exp), the block is scanned again and such
/// elements are computed by the scalar rule ([`f32_rule`]), so that the results are the scalar
/// rule's exactly. Then the block is copied out (streamed when `out` says so).
#[inline(always)]
pub fn vector_map(
    a: Src<'_, f32>,
    out: Out<'_, f32>,
    form: impl Fn(f64) -> f64 + Copy,
    scalar: impl Fn(f32) -> f32,
) {
    let Out { data, stream } = out;
    let Some(s) = slice_or_fill(a, data, &scalar) else {
        return;
    };
    kernel::simd::vectorised_for(
        #[inline(always)]
        |unit| {
            if unit == kernel::simd::Simd::None {
                // Without FMA instructions each fused step is a library call: the scalar rule
                // (whose results the form reproduces) is faster there.
                for (o, &x) in data.iter_mut().zip(s) {
                    o.write(scalar(x));
                }
                return;
            }
            // A copy local to the unit's function: a parameter the form captures (Swish's beta)
            // is then a register, not a load the loop cannot be vectorised around.
            let form_here = form;
            let mut wide = Aligned([0f64; BLOCK]);
            let mut buf = Aligned([0f32; BLOCK]);
            let mut next = s.chunks(BLOCK).skip(AHEAD);
            for (part, xs) in data.chunks_mut(BLOCK).zip(s.chunks(BLOCK)) {
                kernel::simd::prefetch(next.next().unwrap_or_default());
                let (wide, buf) = (&mut wide.0[..part.len()], &mut buf.0[..part.len()]);
                // Two simple loops (the form, then the rounding) vectorise where one did not.
                for (w, &x) in wide.iter_mut().zip(xs) {
                    let v = x as f64;
                    *w = if x.is_nan() { v } else { form_here(v) };
                }
                let mut any = false;
                for (y, &w) in buf.iter_mut().zip(wide.iter()) {
                    let (v, open) = vector::settle(w);
                    *y = v;
                    any |= open;
                }
                if any {
                    for ((y, &w), &x) in buf.iter_mut().zip(wide.iter()).zip(xs) {
                        if vector::settle(w).1 {
                            *y = scalar(x);
                        }
                    }
                }
                put(buf, part, stream);
            }
        },
    );
}

/// f32 data through a row's single-precision form, in blocks of [`BLOCK`]: each block through
/// the lane form ([`Unary::single_lane`]) in one vectorised loop, then, where the lane form
/// did not apply to some element, those elements again through the rule ([`Unary::single`]);
/// a streamed output is filled through a buffer and streamed out.
#[inline(always)]
pub(super) fn single_map(
    a: Src<'_, f32>,
    out: Out<'_, f32>,
    lane: impl Fn(f32) -> (f32, bool) + Copy,
    rule: impl Fn(f32) -> f32 + Copy,
) {
    let Out { data, stream } = out;
    let Some(s) = slice_or_fill(a, data, &rule) else {
        return;
    };
    kernel::simd::vectorised_for(
        #[inline(always)]
        |_| {
            // A copy local to the unit's function, so that a parameter the form captures
            // (Swish's beta) is a register in the loop (see [`vector_map`]).
            let lane_here = lane;
            let mut buf = Aligned([0f32; BLOCK]);
            let mut next = s.chunks(BLOCK).skip(AHEAD);
            for (part, xs) in data.chunks_mut(BLOCK).zip(s.chunks(BLOCK)) {
                kernel::simd::prefetch(next.next().unwrap_or_default());
                let buf = &mut buf.0[..part.len()];
                let mut all = true;
                for (y, &x) in buf.iter_mut().zip(xs) {
                    let (v, applies) = lane_here(x);
                    *y = v;
                    all &= applies;
                }
                if !all {
                    for (y, &x) in buf.iter_mut().zip(xs) {
                        if !lane_here(x).1 {
                            *y = rule(x);
                        }
                    }
                }
                put(buf, part, stream);
            }
        },
    );
}

/// A single-precision form written over [`lanes::Lanes`] (one that looks coefficients up in a
/// table per lane: Erf, Gelu, Tanh, Mish).
pub trait LaneForm: Copy {
    /// The results, and which lanes they are final for (elsewhere the row's rule gives the
    /// result); on one value with `V = f32`.
    fn lanes<V: lanes::Lanes>(self, x: V) -> (V, V::Mask);
}

/// f32 data through a [`LaneForm`] on the widest vector unit's type, in blocks of [`BLOCK`] as
/// [`single_map`]: the last elements of a block, and the elements the form does not apply to,
/// one at a time (the form on `f32` lanes, then `rule`).
#[inline(always)]
pub(crate) fn lanes_map(
    a: Src<'_, f32>,
    out: Out<'_, f32>,
    form: impl LaneForm,
    rule: impl Fn(f32) -> f32 + Copy,
) {
    let Out { data, stream } = out;
    let Some(s) = slice_or_fill(a, data, &rule) else {
        return;
    };
    kernel::simd::vectorised_for(
        #[inline(always)]
        |unit| {
            #[cfg(target_arch = "x86_64")]
            match unit {
                kernel::simd::Simd::Avx512 => {
                    return lane_blocks::<lanes::x86::V512, _>(s, data, stream, form, rule);
                }
                kernel::simd::Simd::Avx2 => {
                    return lane_blocks::<lanes::x86::V256, _>(s, data, stream, form, rule);
                }
                kernel::simd::Simd::None => {}
            }
            let _ = unit;
            lane_blocks::<f32, _>(s, data, stream, form, rule)
        },
    );
}

/// [`lanes_map`]'s loop on lanes of type `V`.
#[inline(always)]
fn lane_blocks<V: lanes::Lanes, F: LaneForm>(
    s: &[f32],
    data: &mut [MaybeUninit<f32>],
    stream: bool,
    form: F,
    rule: impl Fn(f32) -> f32,
) {
    let mut buf = Aligned([0f32; BLOCK]);
    let mut next = s.chunks(BLOCK).skip(AHEAD);
    for (part, xs) in data.chunks_mut(BLOCK).zip(s.chunks(BLOCK)) {
        kernel::simd::prefetch(next.next().unwrap_or_default());
        let buf = &mut buf.0[..part.len()];
        let mut all = true;
        let whole = xs.len() / V::N * V::N;
        for i in (0..whole).step_by(V::N) {
            // SAFETY: `i + N ≤ whole ≤ len` for both slices.
            let x = unsafe { V::load(xs.as_ptr().add(i)) };
            let (y, done) = form.lanes(x);
            all &= V::all(done);
            unsafe { y.store(buf.as_mut_ptr().add(i)) };
        }
        for (y, &x) in buf[whole..].iter_mut().zip(&xs[whole..]) {
            let (v, ok) = form.lanes(x);
            *y = v;
            all &= ok;
        }
        if !all {
            for (y, &x) in buf.iter_mut().zip(xs) {
                if !form.lanes(x).1 {
                    *y = rule(x);
                }
            }
        }
        put(buf, part, stream);
    }
}

/// The slice of a run, or `None` once a repeated value's result (`f` of it) has filled `data`.
#[inline(always)]
fn slice_or_fill<'a>(
    a: Src<'a, f32>,
    data: &mut [MaybeUninit<f32>],
    f: &impl Fn(f32) -> f32,
) -> Option<&'a [f32]> {
    match a {
        Src::Slice(s) => Some(s),
        Src::Repeat(x) => {
            let y = f(x);
            data.iter_mut().for_each(|o| {
                o.write(y);
            });
            None
        }
    }
}

/// A block of results copied to its place in the output, streamed when `stream` says so.
///
/// The block loops that call it ([`vector_map`], [`single_map`]) ask for a later block's
/// input ahead ([`kernel::simd::prefetch`]): they read too slowly for the hardware prefetcher
/// to run far enough ahead (Exp: 15% slower without). They are written out in each rather than
/// shared through a closure, which the compiler left as a call outside the vector unit's
/// function (fused steps then became library calls: Tanh 50 times slower).
#[inline(always)]
fn put(buf: &[f32], part: &mut [MaybeUninit<f32>], stream: bool) {
    if stream {
        kernel::simd::stream_copy(buf, part);
    } else {
        for (o, &y) in part.iter_mut().zip(buf.iter()) {
            o.write(y);
        }
    }
}

/// f64 data through a form, one loop compiled for the widest vector unit.
#[inline(always)]
pub fn double_map(a: Src<'_, f64>, out: Out<'_, f64>, form: impl Fn(f64) -> f64 + Copy) {
    kernel::simd::vectorised(
        #[inline(always)]
        || scalar_map(a, out, form),
    );
}

/// f64 data through a form that computes `N` lanes at once (Gelu's erf form, whose steps
/// loop: [`double::gelu_erf_lanes`]), compiled for the widest vector unit; the last elements
/// go through the same form padded with zeros, so every element gets the same bits.
#[inline(always)]
pub fn double_lanes_map<const N: usize>(
    a: Src<'_, f64>,
    out: Out<'_, f64>,
    form: impl Fn([f64; N]) -> [f64; N] + Copy,
) {
    let Out { data, .. } = out;
    kernel::simd::vectorised(
        #[inline(always)]
        || match a {
            Src::Slice(s) => {
                for (o, x) in data.chunks_mut(N).zip(s.chunks(N)) {
                    let mut lanes = [0.0; N];
                    lanes[..x.len()].copy_from_slice(x);
                    for (o, &y) in o.iter_mut().zip(form(lanes).iter()) {
                        o.write(y);
                    }
                }
            }
            Src::Repeat(x) => {
                let y = form([x; N])[0];
                for o in data.iter_mut() {
                    o.write(y);
                }
            }
        },
    );
}

/// A plain loop for rules that call elementary functions (nothing to vectorise).
#[inline(always)]
fn scalar_map<T: Copy>(a: Src<'_, T>, out: Out<'_, T>, f: impl Fn(T) -> T) {
    let Out { data, .. } = out;
    match a {
        Src::Slice(s) => {
            for (o, &x) in data.iter_mut().zip(s) {
                o.write(f(x));
            }
        }
        Src::Repeat(x) => {
            let v = f(x);
            for o in data.iter_mut() {
                o.write(v);
            }
        }
    }
}

/// A row's kernel for one element type, as fused groups call it.
#[derive(Clone, Copy, Debug)]
pub struct UnaryKernel<K>(pub K);

impl<K: Unary, T: UnaryElem> StepKernel<T> for UnaryKernel<K> {
    #[inline(always)]
    fn run(&self, a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>) -> RunResult {
        T::run(self.0, a, b, out)
    }
}

/// A unary op: a row of the family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnaryOp<K> {
    pub op: K,
}

impl<K: Unary> UnaryOp<K> {
    pub const DEF: OpDef = OpDef {
        name: K::NAME,
        version: K::VERSION,
        inputs: Arity::range(1 + K::PARAMS.min, 1 + K::PARAMS.max),
        outputs: Arity::exactly(1),
        parse: parse::<K>,
    };

    pub fn new(op: K) -> UnaryOp<K> {
        UnaryOp { op }
    }

    /// The op on a tensor (what execution does for a layer that is not fused).
    pub fn eval_tensor(&self, x: &Tensor) -> Result<Tensor, EvalError> {
        eval_with(self.op, x)
    }
}

/// `k` on every element of `x`.
pub fn eval_with<K: Unary>(k: K, x: &Tensor) -> Result<Tensor, EvalError> {
    let ty = x.element_type();
    if !K::TYPES.contains(ty) {
        return Err(EvalError::UnsupportedType {
            op: K::NAME.into(),
            ty,
        });
    }
    crate::dispatch!(numeric: ty, T => kernel::fused::unary::<T>(x, &UnaryKernel(k)),
        _ => Err(EvalError::UnsupportedType { op: K::NAME.into(), ty }))
}

fn parse<K: Unary>(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(UnaryOp { op: K::parse(a)? }))
}

/// The value of a one-element tensor as f64 (parameter inputs).
pub fn scalar(t: &Tensor) -> Option<f64> {
    if t.shape().iter().product::<usize>() != 1 {
        return None;
    }
    crate::dispatch!(numeric: t.element_type(), T => {
        let v = *T::view(t)?.iter().next()?;
        Some(match v.to_num() {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        })
    }, _ => None)
}

impl<K: Unary> Op for UnaryOp<K> {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&Self::DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, K::TYPES)?;
        let x = cx.input(0);
        for i in 1..cx.inputs().len() {
            let p = cx.input(i);
            if p.element_type != x.element_type
                && p.element_type != ElementType::Dynamic
                && x.element_type != ElementType::Dynamic
            {
                return cx.invalid(
                    i,
                    format!(
                        "the parameter is {}, the data input {}: they must be the same type",
                        p.element_type, x.element_type
                    ),
                );
            }
            if let Some(n) = p.shape.elements().and_then(|d| d.get_static())
                && n != 1
            {
                return cx.invalid(
                    i,
                    format!(
                        "the parameter must hold one element, it has shape {}",
                        p.shape
                    ),
                );
            }
        }
        Some(vec![TensorType::new(x.element_type, x.shape.clone())])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let x = cx.tensor(0)?;
        let mut params = Vec::with_capacity(cx.len().saturating_sub(1));
        for i in 1..cx.len() {
            let p = cx.tensor(i)?;
            params.push(scalar(&p).ok_or_else(|| {
                EvalError::Invalid(format!(
                    "parameter input {i} must hold one element, it has shape {:?}",
                    p.shape()
                ))
            })?);
        }
        cx.reserve(x.element_type(), x.shape().iter().product())?;
        let k = if params.is_empty() {
            self.op
        } else {
            self.op.with_params(&params)
        };
        Ok(vec![eval_with(k, &x)?])
    }

    fn fusable(&self) -> Option<&dyn Fusable> {
        Some(self)
    }
}

impl<K: Unary> Fusable for UnaryOp<K> {
    fn auto_broadcast(&self) -> AutoBroadcast {
        AutoBroadcast::Numpy
    }

    fn kernel_for(&self, ty: ElementType) -> Option<Box<dyn Any>> {
        if !K::TYPES.contains(ty) {
            return None;
        }
        let k = UnaryKernel(self.op);
        crate::dispatch!(numeric: ty, T => {
            let b: Box<dyn StepKernel<T>> = Box::new(k);
            Some(Box::new(b) as Box<dyn Any>)
        }, _ => None)
    }

    fn chain_op(&self) -> Option<ChainOp> {
        self.op.link().map(ChainOp::Unary)
    }

    fn data_inputs(&self) -> usize {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f64 rows through the kernel (compiled for the widest vector unit, Gelu's erf form 32
    /// lanes at a time, a ragged end) give the bits of the scalar double form of each element.
    #[test]
    fn f64_double_forms_vectorised_equal_scalar() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| -45.0 + i as f64 * 0.0553)
            .chain([
                0.0,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-310,
                -4.0,
                4.0,
            ])
            .collect();
        fn through<K: Unary>(k: K, xs: &[f64]) -> Vec<f64> {
            let mut out = vec![MaybeUninit::<f64>::uninit(); xs.len()];
            <f64 as UnaryElem>::run(k, Src::Slice(xs), Src::Slice(xs), Out::new(&mut out)).unwrap();
            out.iter().map(|v| unsafe { v.assume_init() }).collect()
        }
        let gelu = own::Gelu7 { tanh: false };
        type Case = (&'static str, Vec<f64>, fn(f64) -> f64);
        let cases: [Case; 4] = [
            ("gelu erf", through(gelu, &xs), double::gelu_erf),
            ("gelu-2", through(own::Gelu, &xs), double::gelu_erf),
            (
                "gelu tanh",
                through(own::Gelu7 { tanh: true }, &xs),
                double::gelu_tanh,
            ),
            ("sigmoid", through(table::Sigmoid, &xs), double::sigmoid),
        ];
        for (name, got, scalar) in cases {
            for (&x, &y) in xs.iter().zip(&got) {
                assert_eq!(y.to_bits(), scalar(x).to_bits(), "{name}({x})");
            }
        }
    }
}
