//! Comparisons, logical and bitwise ops (LogicalXor is version 2 in OpenVINO's table, its opset1
//! layer type too): Equal, NotEqual, Less, LessEqual, Greater,
//! GreaterEqual (→ `boolean`), LogicalAnd, LogicalOr, LogicalXor (`boolean`), BitwiseAnd,
//! BitwiseOr, BitwiseXor (integers and `boolean`), BitwiseLeftShift, BitwiseRightShift
//! (integers); and the one-input LogicalNot, BitwiseNot, IsNaN, IsInf, IsFinite.
//!
//! The two-input ops are rows of one table ([`Pairwise`]): both inputs of one element type,
//! `auto_broadcast` none/numpy/pdpd as the arithmetic family (the same broadcast module), and
//! either a test (output `boolean`) or a bitwise rule (output the input type).
//!
//! Decisions:
//! * Comparisons are IEEE on floats: NaN is unordered (every comparison false, NotEqual true),
//!   −0 equals +0; on `boolean`, false < true.
//! * Shifts: the shift amount is the second input, of the same integer type. An amount of at
//!   least the bit width shifts every bit out (left: 0; right: 0, or −1 for a negative signed
//!   value, which fills with its sign bit); a negative amount is an error (E606): C++ leaves
//!   both undefined.
//! * IsInf: `detect_positive` and `detect_negative` (default true) choose which infinities
//!   count.
//! * A comparison may end a fused group (`x*s + b > t` in one pass over the data), or be the
//!   `cond` of a Select that does: the group's float parts are computed tile by tile and
//!   compared, with the same bits as layer by layer. Each rule has its own loop.

use std::fmt;
use std::mem::MaybeUninit;

use super::binary::{Fusable, infer_shape};
use super::kernel::{self, Out, Src};
use super::{Arity, AttrError, Attrs, ElemError, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast::{AutoBroadcast, Plan};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::Int;
use crate::shape::TensorType;
use crate::tensor::{Element, Tensor, TypeSet};

/// The bitwise rules, on integers and `boolean`.
pub trait Bits: Element + Copy {
    fn and(self, b: Self) -> Self;
    fn or(self, b: Self) -> Self;
    fn xor(self, b: Self) -> Self;
    fn not(self) -> Self;
    /// `self << b` / `self >> b` for an integer amount `b` (`boolean` never shifts).
    fn shl(self, b: Self) -> Result<Self, ElemError>;
    fn shr(self, b: Self) -> Result<Self, ElemError>;
}

macro_rules! int_bits {
    ($($t:ty)*) => {$(
        impl Bits for $t {
            #[inline(always)]
            fn and(self, b: Self) -> Self { self & b }
            #[inline(always)]
            fn or(self, b: Self) -> Self { self | b }
            #[inline(always)]
            fn xor(self, b: Self) -> Self { self ^ b }
            #[inline(always)]
            fn not(self) -> Self { !self }
            #[inline(always)]
            fn shl(self, b: Self) -> Result<Self, ElemError> {
                if b.is_negative() {
                    return Err(ElemError::Undefined("a negative shift amount"));
                }
                let n = b.to_i128();
                Ok(if n >= <$t>::BITS as i128 { 0 } else { self << n as u32 })
            }
            #[inline(always)]
            fn shr(self, b: Self) -> Result<Self, ElemError> {
                if b.is_negative() {
                    return Err(ElemError::Undefined("a negative shift amount"));
                }
                let n = b.to_i128().min(<$t>::BITS as i128 - 1) as u32;
                // An amount of the width or more: every bit out (the sign fills a signed
                // value), which is what shifting by width − 1 and once more gives.
                let once = self >> n;
                Ok(if b.to_i128() >= <$t>::BITS as i128 { once >> 1 } else { once })
            }
        }
    )*};
}
int_bits!(i8 i16 i32 i64 u8 u16 u32 u64);

impl Bits for bool {
    #[inline(always)]
    fn and(self, b: Self) -> Self {
        self & b
    }
    #[inline(always)]
    fn or(self, b: Self) -> Self {
        self | b
    }
    #[inline(always)]
    fn xor(self, b: Self) -> Self {
        self ^ b
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
    fn shl(self, _: Self) -> Result<Self, ElemError> {
        Err(ElemError::Undefined("a shift of a boolean"))
    }
    fn shr(self, _: Self) -> Result<Self, ElemError> {
        Err(ElemError::Undefined("a shift of a boolean"))
    }
}

/// What a two-input row computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl Rule {
    pub(crate) fn is_test(self) -> bool {
        matches!(
            self,
            Rule::Equal
                | Rule::NotEqual
                | Rule::Less
                | Rule::LessEqual
                | Rule::Greater
                | Rule::GreaterEqual
        )
    }

    #[inline(always)]
    fn bits<T: Bits>(self, a: T, b: T) -> Result<T, ElemError> {
        Ok(match self {
            Rule::And => a.and(b),
            Rule::Or => a.or(b),
            Rule::Xor => a.xor(b),
            Rule::Shl => return a.shl(b),
            Rule::Shr => return a.shr(b),
            _ => a,
        })
    }
}

/// One row: the op's name, version, input types and rule.
#[derive(Clone, Copy)]
pub struct Row {
    pub name: &'static str,
    pub version: u32,
    pub types: TypeSet,
    pub rule: Rule,
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.name, self.version)
    }
}

const CMP: TypeSet = TypeSet::ANY;
const BITWISE: TypeSet = TypeSet::INT.union(TypeSet::BOOLEAN);

macro_rules! pairwise_table {
    ($($const:ident: $name:literal-$version:literal, $types:expr, $rule:ident;)*) => {
        $(pub const $const: OpDef = OpDef {
            name: $name,
            version: $version,
            inputs: Arity::exactly(2),
            outputs: Arity::exactly(1),
            parse: |a| parse(a, Row { name: $name, version: $version, types: $types, rule: Rule::$rule }),
        };)*
        /// Every row's definition, for the registry.
        pub const FAMILY: &[&OpDef] = &[$(&$const,)* &LOGICAL_NOT, &BITWISE_NOT, &IS_NAN, &IS_INF, &IS_FINITE];
    };
}

pairwise_table! {
    EQUAL: "Equal"-1, CMP, Equal;
    NOT_EQUAL: "NotEqual"-1, CMP, NotEqual;
    LESS: "Less"-1, CMP, Less;
    LESS_EQUAL: "LessEqual"-1, CMP, LessEqual;
    GREATER: "Greater"-1, CMP, Greater;
    GREATER_EQUAL: "GreaterEqual"-1, CMP, GreaterEqual;
    LOGICAL_AND: "LogicalAnd"-1, TypeSet::BOOLEAN, And;
    LOGICAL_OR: "LogicalOr"-1, TypeSet::BOOLEAN, Or;
    LOGICAL_XOR: "LogicalXor"-2, TypeSet::BOOLEAN, Xor;
    BITWISE_AND: "BitwiseAnd"-13, BITWISE, And;
    BITWISE_OR: "BitwiseOr"-13, BITWISE, Or;
    BITWISE_XOR: "BitwiseXor"-13, BITWISE, Xor;
    BITWISE_LEFT_SHIFT: "BitwiseLeftShift"-15, TypeSet::INT, Shl;
    BITWISE_RIGHT_SHIFT: "BitwiseRightShift"-15, TypeSet::INT, Shr;
}

/// A two-input row with its `auto_broadcast`.
#[derive(Clone, Copy, Debug)]
pub struct Pairwise {
    pub row: Row,
    pub auto_broadcast: AutoBroadcast,
}

fn parse(a: &Attrs, row: Row) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let auto_broadcast = a.auto_broadcast().map_err(|e| vec![e])?;
    Ok(Box::new(Pairwise {
        row,
        auto_broadcast,
    }))
}

/// The common element type of two inputs (`dynamic` merges with anything), or a finding.
pub fn same_type(cx: &mut InferCx<'_>, a: ElementType, b: ElementType) -> Option<ElementType> {
    match (a, b) {
        (x, y) if x == y => Some(x),
        (ElementType::Dynamic, y) => Some(y),
        (x, ElementType::Dynamic) => Some(x),
        (x, y) => {
            cx.report(ErrorKind::ElementTypeMismatch { a: x, b: y });
            None
        }
    }
}

impl Pairwise {
    /// The op on two tensors.
    pub fn eval_tensors(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
        let ty = a.element_type();
        if ty != b.element_type() {
            return Err(EvalError::Types(ty, b.element_type()));
        }
        let unsupported = || EvalError::UnsupportedType {
            op: self.row.name.into(),
            ty,
        };
        if !self.row.types.contains(ty) {
            return Err(unsupported());
        }
        let plan = Plan::new(self.auto_broadcast, a.shape(), b.shape()).ok_or_else(|| {
            EvalError::Shapes {
                a: a.shape().to_vec(),
                b: b.shape().to_vec(),
                reason: "the shapes do not broadcast".into(),
            }
        })?;
        let rule = self.row.rule;
        if rule.is_test() {
            crate::dispatch!(any: ty, T => compare::<T>(rule, &plan, a, b), _ => Err(unsupported()))
        } else if ty == ElementType::Boolean {
            pair_map::<bool, bool>(&plan, a, b, |x, y| rule.bits(x, y))
        } else {
            crate::dispatch!(int: ty, T => pair_map::<T, T>(&plan, a, b, |x, y| rule.bits(x, y)),
                _ => Err(unsupported()))
        }
    }
}

/// Evaluates `$body` with `$test` bound to the comparison `$rule` names, as a closure over two
/// `$t`; `$other` for a rule that is not a comparison. Each rule is its own closure type, so a
/// loop over it is compiled (and vectorised) per rule: a rule matched element by element was
/// not vectorised (`f32` Less ran 3x slower).
macro_rules! with_test {
    ($rule:expr, $t:ty, |$test:ident| $body:expr, _ => $other:expr) => {{
        use $crate::ops::logic::Rule;
        match $rule {
            Rule::Equal => {
                let $test = |x: $t, y: $t| x == y;
                $body
            }
            Rule::NotEqual => {
                let $test = |x: $t, y: $t| x != y;
                $body
            }
            Rule::Less => {
                let $test = |x: $t, y: $t| x < y;
                $body
            }
            Rule::LessEqual => {
                let $test = |x: $t, y: $t| x <= y;
                $body
            }
            Rule::Greater => {
                let $test = |x: $t, y: $t| x > y;
                $body
            }
            Rule::GreaterEqual => {
                let $test = |x: $t, y: $t| x >= y;
                $body
            }
            _ => $other,
        }
    }};
}
pub(crate) use with_test;

/// A comparison over the broadcast pairs of `a` and `b`, one loop per rule ([`with_test`]).
fn compare<T: Element + PartialOrd>(
    rule: Rule,
    plan: &Plan,
    a: &Tensor,
    b: &Tensor,
) -> Result<Tensor, EvalError> {
    with_test!(rule, T, |test| pair_map::<T, bool>(plan, a, b, |x, y| Ok(test(x, y))),
        _ => Err(EvalError::Internal("not a comparison")))
}

/// `f` over the broadcast pairs of `a` and `b`; on failure, the first failing output element.
/// Run by run through the vectorised loop of [`kernel::try_map`], in parallel chunks when the
/// output is large (like the arithmetic kernels), streaming an output larger than the caches.
fn pair_map<T: Element, O: Element + Default>(
    plan: &Plan,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> Result<O, ElemError> + Sync,
) -> Result<Tensor, EvalError> {
    let (Some(xa), Some(xb)) = (kernel::contiguous::<T>(a), kernel::contiguous::<T>(b)) else {
        return Err(EvalError::Types(a.element_type(), b.element_type()));
    };
    let n = plan.len();
    let stream = n.saturating_mul(std::mem::size_of::<O>()) >= kernel::fused::STREAM_MIN;
    let chunk = |start: usize, o: &mut [MaybeUninit<O>]| {
        let mut failure = None;
        plan.runs(start, start + o.len(), |r| {
            let x = Src::of_run(&xa, r.a, r.a_step, r.len);
            let y = Src::of_run(&xb, r.b, r.b_step, r.len);
            let at = r.start - start;
            let out = Out {
                data: &mut o[at..at + r.len],
                stream,
            };
            if let Err((i, e)) = kernel::try_map(x, y, out, &f) {
                failure = Some((r.start + i, e));
                return false;
            }
            true
        });
        if stream {
            kernel::simd::stream_fence();
        }
        failure
    };
    let mut out: Vec<O> = Vec::with_capacity(n);
    let failed = kernel::in_parts(&mut out.spare_capacity_mut()[..n], 1, chunk, |f| f.0);
    if let Some((at, e)) = failed {
        return Err(kernel::Failure {
            step: 0,
            at,
            error: e,
        }
        .to_eval(&plan.out));
    }
    // SAFETY: the plan's runs cover `0..n` exactly once and each wrote all its elements (no
    // failure, checked above).
    unsafe { out.set_len(n) };
    kernel::tensor_from::<O>(&plan.out, out)
}

impl Op for Pairwise {
    fn def(&self) -> Option<&'static OpDef> {
        FAMILY
            .iter()
            .copied()
            .find(|d| d.name == self.row.name && d.version == self.row.version)
    }

    fn name(&self) -> &str {
        self.row.name
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..2, self.row.types)?;
        let (a, b) = (cx.input(0), cx.input(1));
        let ty = same_type(cx, a.element_type, b.element_type)?;
        let shape = infer_shape(cx, self.auto_broadcast, a, b)?;
        let out = if self.row.rule.is_test() {
            ElementType::Boolean
        } else {
            ty
        };
        Some(vec![TensorType::new(out, shape)])
    }

    fn fusable(&self) -> Option<&dyn Fusable> {
        self.row.rule.is_test().then_some(self as &dyn Fusable)
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (a, b) = (cx.tensor(0)?, cx.tensor(1)?);
        if let Some(plan) = Plan::new(self.auto_broadcast, a.shape(), b.shape()) {
            let ty = if self.row.rule.is_test() {
                ElementType::Boolean
            } else {
                a.element_type()
            };
            cx.reserve(ty, plan.len())?;
        }
        Ok(vec![self.eval_tensors(&a, &b)?])
    }
}

/// A comparison ends a fused group (or is the `cond` of the Select that does): the group's
/// parts are computed tile by tile in their type and compared ([`kernel::Compared`]); it has
/// no step kernel of its own.
impl Fusable for Pairwise {
    fn auto_broadcast(&self) -> AutoBroadcast {
        self.auto_broadcast
    }

    fn compares(&self) -> Option<Rule> {
        self.row.rule.is_test().then_some(self.row.rule)
    }
}

/// What a one-input row computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// LogicalNot, BitwiseNot.
    Not,
    IsNan,
    /// IsInf: which infinities count.
    IsInf {
        positive: bool,
        negative: bool,
    },
    IsFinite,
}

/// A one-input row.
#[derive(Clone, Copy, Debug)]
pub struct OneInput {
    pub name: &'static str,
    pub version: u32,
    pub types: TypeSet,
    pub test: Test,
}

macro_rules! one_input {
    ($($const:ident: $name:literal-$version:literal, $types:expr, |$a:ident| $test:expr;)*) => {$(
        pub const $const: OpDef = OpDef {
            name: $name,
            version: $version,
            inputs: Arity::exactly(1),
            outputs: Arity::exactly(1),
            parse: |$a| {
                let test: Result<Test, Vec<AttrError>> = $test;
                Ok(Box::new(OneInput { name: $name, version: $version, types: $types, test: test? }))
            },
        };
    )*};
}

one_input! {
    LOGICAL_NOT: "LogicalNot"-1, TypeSet::BOOLEAN, |_a| Ok(Test::Not);
    BITWISE_NOT: "BitwiseNot"-13, BITWISE, |_a| Ok(Test::Not);
    IS_NAN: "IsNaN"-10, TypeSet::FLOAT, |_a| Ok(Test::IsNan);
    IS_INF: "IsInf"-10, TypeSet::FLOAT, |a| {
        let p = a.bool_or(&["detect_positive"], true);
        let n = a.bool_or(&["detect_negative"], true);
        match (p, n) {
            (Ok(positive), Ok(negative)) => Ok(Test::IsInf { positive, negative }),
            (p, n) => Err(p.err().into_iter().chain(n.err()).collect()),
        }
    };
    IS_FINITE: "IsFinite"-10, TypeSet::FLOAT, |_a| Ok(Test::IsFinite);
}

impl OneInput {
    /// The op on a tensor.
    pub fn eval_tensor(&self, x: &Tensor) -> Result<Tensor, EvalError> {
        let ty = x.element_type();
        let unsupported = || EvalError::UnsupportedType {
            op: self.name.into(),
            ty,
        };
        if !self.types.contains(ty) {
            return Err(unsupported());
        }
        match self.test {
            Test::Not if ty == ElementType::Boolean => map_one::<bool, bool>(x, |v| v.not()),
            Test::Not => {
                crate::dispatch!(int: ty, T => map_one::<T, T>(x, |v| v.not()), _ => Err(unsupported()))
            }
            test => crate::dispatch!(float: ty, T => map_one::<T, bool>(x, |v| {
                let f = crate::num::Cast::to_num(v);
                let f = match f { crate::num::Num::Float(f) => f, crate::num::Num::Int(i) => i as f64 };
                match test {
                    Test::IsNan => f.is_nan(),
                    Test::IsFinite => f.is_finite(),
                    Test::IsInf { positive, negative } => {
                        (positive && f == f64::INFINITY) || (negative && f == f64::NEG_INFINITY)
                    }
                    Test::Not => false,
                }
            }), _ => Err(unsupported())),
        }
    }

    fn out_type(&self, ty: ElementType) -> ElementType {
        match self.test {
            Test::Not => ty,
            _ => ElementType::Boolean,
        }
    }
}

/// `f` on every element of `x`, in parallel parts for a large tensor.
fn map_one<T: Element, O: Element>(
    x: &Tensor,
    f: impl Fn(T) -> O + Sync,
) -> Result<Tensor, EvalError> {
    let data = kernel::contiguous::<T>(x).ok_or(EvalError::Types(x.element_type(), T::TYPE))?;
    let n = data.len();
    let mut out: Vec<O> = Vec::with_capacity(n);
    kernel::in_parts(
        &mut out.spare_capacity_mut()[..n],
        kernel::BLOCK,
        |at, part| {
            for (o, &v) in part.iter_mut().zip(&data[at..]) {
                o.write(f(v));
            }
            None::<()>
        },
        |_| (),
    );
    // SAFETY: the parts cover `0..n`, and each wrote every element of its part.
    unsafe { out.set_len(n) };
    kernel::tensor_from::<O>(x.shape(), out)
}

impl Op for OneInput {
    fn def(&self) -> Option<&'static OpDef> {
        FAMILY
            .iter()
            .copied()
            .find(|d| d.name == self.name && d.version == self.version)
    }

    fn name(&self) -> &str {
        self.name
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, self.types)?;
        let x = cx.input(0);
        Some(vec![TensorType::new(
            self.out_type(x.element_type),
            x.shape.clone(),
        )])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let x = cx.tensor(0)?;
        cx.reserve(self.out_type(x.element_type()), x.shape().iter().product())?;
        Ok(vec![self.eval_tensor(&x)?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    /// A tensor large enough to be computed in parallel parts gives each element's own result
    /// at its own place (every part written, none shifted).
    #[test]
    fn large_one_input_ops_are_elementwise() {
        let n = 3 * kernel::PARALLEL_MIN + 7;
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -1.5];
        let xs: Vec<f32> = (0..n).map(|i| specials[(i * i + i / 3) % 5]).collect();
        let x = f32::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), xs.clone()).unwrap());
        let op = |test| OneInput {
            name: "IsNaN",
            version: 10,
            types: TypeSet::FLOAT,
            test,
        };
        type Case = (Test, fn(f32) -> bool);
        let cases: [Case; 3] = [
            (Test::IsNan, f32::is_nan),
            (Test::IsFinite, f32::is_finite),
            (
                Test::IsInf {
                    positive: true,
                    negative: false,
                },
                |v| v == f32::INFINITY,
            ),
        ];
        for (test, want) in cases {
            let got = op(test).eval_tensor(&x).unwrap();
            let got = got.view::<bool>().unwrap();
            assert!(got.iter().zip(&xs).all(|(&g, &v)| g == want(v)), "{test:?}");
        }
        let ints: Vec<i32> = (0..n as i32).collect();
        let t = i32::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), ints.clone()).unwrap());
        let not = OneInput {
            name: "BitwiseNot",
            version: 13,
            types: TypeSet::INT,
            test: Test::Not,
        };
        let got = not.eval_tensor(&t).unwrap();
        let got = got.view::<i32>().unwrap();
        assert!(got.iter().zip(&ints).all(|(&g, &v)| g == !v));
    }
}
