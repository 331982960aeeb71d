//! Random input tensors from a seed (`ovir run --random-inputs`, benchmarks).

use ndarray::{ArrayD, IxDyn};

use crate::dtype::ElementType;
use crate::tensor::{Element, Tensor};

/// splitmix64: a small, well-mixed generator; the same seed gives the same tensors everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Values that make a demo meaningful: floats in [-8, 8); integers non-zero (so that a random
/// Divide does not divide by zero) in [-100, 100] or [1, 200] for unsigned types.
pub trait RandomValue: Element {
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! signed {
    ($($t:ty)*) => {$(
        impl RandomValue for $t {
            fn random(rng: &mut Rng) -> Self {
                let v = (rng.next_u64() % 100) as $t + 1;
                if rng.next_u64() & 1 == 0 { v } else { -v }
            }
        }
    )*};
}
signed!(i8 i16 i32 i64);

macro_rules! unsigned {
    ($($t:ty)*) => {$(
        impl RandomValue for $t {
            fn random(rng: &mut Rng) -> Self {
                (rng.next_u64() % 200) as $t + 1
            }
        }
    )*};
}
unsigned!(u8 u16 u32 u64);

impl RandomValue for f32 {
    fn random(rng: &mut Rng) -> Self {
        (rng.unit() * 16.0 - 8.0) as f32
    }
}

impl RandomValue for f64 {
    fn random(rng: &mut Rng) -> Self {
        rng.unit() * 16.0 - 8.0
    }
}

impl RandomValue for half::f16 {
    fn random(rng: &mut Rng) -> Self {
        half::f16::from_f64(rng.unit() * 16.0 - 8.0)
    }
}

impl RandomValue for half::bf16 {
    fn random(rng: &mut Rng) -> Self {
        half::bf16::from_f64(rng.unit() * 16.0 - 8.0)
    }
}

impl RandomValue for bool {
    fn random(rng: &mut Rng) -> Self {
        rng.next_u64() & 1 == 1
    }
}

fn make<T: RandomValue>(shape: &[usize], rng: &mut Rng) -> Option<Tensor> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    let data: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
    ArrayD::from_shape_vec(IxDyn(shape), data).ok().map(T::wrap)
}

/// A random tensor, or `None` for element types ovir does not compute with.
pub fn tensor(et: ElementType, shape: &[usize], rng: &mut Rng) -> Option<Tensor> {
    crate::dispatch!(any: et, T => make::<T>(shape, rng), _ => None)
}

/// The dims of a random input of partial shape `shape`: each dynamic dim at its lower bound
/// (at least 1). `None` for a dynamic rank.
pub fn dims(shape: &crate::shape::PartialShape) -> Option<Vec<u64>> {
    Some(
        shape
            .dims()?
            .iter()
            .map(|d| d.get_static().unwrap_or_else(|| d.min().max(1)))
            .collect(),
    )
}

/// Random tensors for every input of `g`, in order, shaped by [`dims`]. `None` if an input
/// has a dynamic rank, a type ovir cannot make values of, or more than `max_elements`
/// elements: the fuzz targets and tests use this to run any model they load on small inputs.
pub fn inputs(
    g: &crate::graph::Graph,
    rng: &mut Rng,
    max_elements: u64,
) -> Option<Vec<(crate::exec::InputKey, Tensor)>> {
    let mut bound = Vec::with_capacity(g.inputs.len());
    for (i, &node) in g.inputs.iter().enumerate() {
        let p = g.nodes[node].parameter()?;
        let dims = dims(&p.shape)?;
        dims.iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= max_elements)?;
        let shape: Vec<usize> = dims
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<_>>()?;
        bound.push((
            crate::exec::InputKey::Index(i),
            tensor(p.element_type, &shape, rng)?,
        ));
    }
    Some(bound)
}
