//! Elementwise layers applied by the layer before them to its output as it writes it: a
//! convolution's bias Add, Relu, residual Add… computed on each block of the output while the
//! block is still in the cache, instead of in a pass of their own over the whole tensor.
//!
//! The steps are those of a linear chain ([`Link`]s, evaluated by the f32 [`InPlaceFn`] one
//! step at a time over each row, which is in the L1 cache), each rounding as the layer does on
//! its own, so the bits are those of running the layers one by one. Each step's other operand
//! is one value, one value per channel, or a tensor of the output's shape.

use super::Src;
use super::chain::{Chain, InPlaceFn, Link};

/// The other operand of one step, for an output `[N, C, positions…]`.
#[derive(Clone, Copy, Debug)]
pub enum Other<'a> {
    /// None: a unary step.
    Unary,
    /// One value for every element.
    One(f32),
    /// One value per channel (`C` of them).
    Channel(&'a [f32]),
    /// A tensor of the output's shape, row-major.
    Full(&'a [f32]),
}

/// The steps, in order, over an f32 output of `channels` channels of `plane` positions each.
pub struct Epilogue<'a> {
    steps: Vec<(Link, Other<'a>)>,
    channels: usize,
    plane: usize,
    chain: InPlaceFn<f32>,
}

/// The most steps an epilogue takes.
pub const MAX_STEPS: usize = 16;

impl<'a> Epilogue<'a> {
    /// The steps over an output of `shape` (`[N, C, …]`, rank at least 2), or `None` when an
    /// operand does not hold what its kind says it does.
    pub fn new(steps: Vec<(Link, Other<'a>)>, shape: &[usize]) -> Option<Epilogue<'a>> {
        let (&n, rest) = shape.split_first()?;
        let (&channels, positions) = rest.split_first()?;
        let plane = positions
            .iter()
            .try_fold(1usize, |p, &d| p.checked_mul(d))?;
        let len = n.checked_mul(channels)?.checked_mul(plane)?;
        let fits = steps.len() <= MAX_STEPS
            && steps.iter().all(|(link, f)| match *f {
                Other::Unary => link.unary(),
                Other::One(_) => !link.unary(),
                Other::Channel(v) => !link.unary() && v.len() == channels,
                Other::Full(v) => !link.unary() && v.len() == len,
            });
        Some(Epilogue {
            steps,
            channels,
            plane,
            chain: f32::CHAIN?.in_place,
        })
        .filter(|_| fits)
    }

    /// Applies the steps to `out`, the positions `p0..p0 + out.len()` of image `n`, channel
    /// `c` (all within one plane), where the elements lie.
    pub fn apply(&self, out: &mut [f32], n: usize, c: usize, p0: usize) {
        let at = (n * self.channels + c) * self.plane + p0;
        // A step at a time (the in-place chain goes so anyway): no list of every step's
        // operand to build for each row.
        for &(link, other) in &self.steps {
            let v = match other {
                Other::Unary => Src::Repeat(0.0),
                Other::One(v) => Src::Repeat(v),
                Other::Channel(v) => Src::Repeat(v[c]),
                Other::Full(v) => Src::Slice(&v[at..at + out.len()]),
            };
            (self.chain)(out, &[(link, v)]);
        }
    }

    /// Applies the steps to `out`, the whole planes of channels `c0..` of image `n`, where
    /// the elements lie. Over planes of one position (a squeeze-and-excitation block's
    /// `[N, C, 1, 1]`) each step is one pass over the channels, each channel's operand where
    /// it lies, not a pass per channel of one element.
    pub fn apply_planes(&self, out: &mut [f32], n: usize, c0: usize) {
        if self.plane != 1 {
            for (i, row) in out.chunks_mut(self.plane.max(1)).enumerate() {
                self.apply(row, n, c0 + i, 0);
            }
            return;
        }
        let (len, at) = (out.len(), n * self.channels + c0);
        for &(link, other) in &self.steps {
            let v = match other {
                Other::Unary => Src::Repeat(0.0),
                Other::One(v) => Src::Repeat(v),
                Other::Channel(v) => Src::Slice(&v[c0..c0 + len]),
                Other::Full(v) => Src::Slice(&v[at..at + len]),
            };
            (self.chain)(out, &[(link, v)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::binary::ArithOp;
    use crate::ops::binary::arith::{Divide, Subtract};
    use crate::ops::kernel::ChainOp;

    /// Every kind of operand, on each side, over rows of every length up to a few blocks of
    /// the chain's lanes and at several places in the output: the bits of the steps taken
    /// one element at a time.
    #[test]
    fn steps_match_element_by_element() {
        let (n, channels, plane) = (2usize, 3usize, 150usize);
        let len = n * channels * plane;
        let values = |seed: u32| -> Vec<f32> {
            (0..len as u32)
                .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 100.0 - 10.0)
                .collect()
        };
        let (full, per) = (values(7), values(11));
        let sub = |other_is_a| Link {
            op: ChainOp::Arith(ArithOp::Subtract(Subtract)),
            other_is_a,
        };
        let div = Link {
            op: ChainOp::Arith(ArithOp::Divide(Divide { pythondiv: true })),
            other_is_a: true,
        };
        let steps = vec![
            (sub(false), Other::Channel(&per[..channels])),
            (div, Other::Full(&full)),
            (sub(true), Other::One(0.25)),
        ];
        let epilogue = Epilogue::new(steps, &[n, channels, 10, 15]).unwrap();
        let data = values(3);
        for (b, c, p0) in [(0, 0, 0), (1, 2, 0), (0, 1, 17), (1, 1, 64)] {
            for width in 0..=plane - p0 {
                let at = (b * channels + c) * plane + p0;
                let mut got = data[at..at + width].to_vec();
                epilogue.apply(&mut got, b, c, p0);
                for (i, g) in got.iter().enumerate() {
                    let want = 0.25 - full[at + i] / (data[at + i] - per[c]);
                    assert_eq!(g.to_bits(), want.to_bits(), "{b} {c} {p0} {width} {i}");
                }
            }
        }
        // Whole planes of several channels at once, planes of one position and of many:
        // the bits of the steps a channel at a time.
        for (shape, plane) in [([n, channels, 1, 1], 1), ([n, channels, 10, 15], plane)] {
            let one = |v: &[f32]| v[..n * channels * plane].to_vec();
            let (full, data) = (one(&full), one(&data));
            let steps = vec![
                (sub(false), Other::Channel(&per[..channels])),
                (div, Other::Full(&full)),
                (sub(true), Other::One(0.25)),
            ];
            let epilogue = Epilogue::new(steps, &shape).unwrap();
            for (b, c0, count) in [(0, 0, 3), (1, 1, 2), (1, 2, 1), (0, 1, 0)] {
                let at = (b * channels + c0) * plane;
                let mut got = data[at..at + count * plane].to_vec();
                epilogue.apply_planes(&mut got, b, c0);
                for (i, g) in got.iter().enumerate() {
                    let c = c0 + i / plane;
                    let want = 0.25 - full[at + i] / (data[at + i] - per[c]);
                    assert_eq!(g.to_bits(), want.to_bits(), "{shape:?} {b} {c0} {i}");
                }
            }
        }
        // Operands that do not fit the output's shape are refused.
        let short = vec![(sub(false), Other::Channel(&per[..2]))];
        assert!(Epilogue::new(short, &[n, channels, 150]).is_none());
        let long = vec![(sub(false), Other::One(1.0)); MAX_STEPS + 1];
        assert!(Epilogue::new(long, &[n, channels, 150]).is_none());
    }
}
