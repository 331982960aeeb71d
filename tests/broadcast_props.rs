//! Properties of the broadcast rules (the one module shape inference and execution share).

use ovir::broadcast::{self, AutoBroadcast};
use ovir::shape::{Dim, PartialShape};
use proptest::prelude::*;

fn fixed(d: &[u64]) -> PartialShape {
    PartialShape::fixed(d)
}

/// The numpy rule written the obvious way, on static shapes.
fn naive_numpy(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let rank = a.len().max(b.len());
    let get = |s: &[u64], i: usize| {
        if i < rank - s.len() {
            1
        } else {
            s[i - (rank - s.len())]
        }
    };
    (0..rank)
        .map(|i| match (get(a, i), get(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

fn shape() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(0u64..5, 0..6)
}

fn dim() -> impl Strategy<Value = Dim> {
    (0u64..6, prop::option::of(0u64..6))
        .prop_map(|(lo, span)| Dim::interval(lo, span.map(|s| lo + s)).unwrap())
}

fn partial() -> impl Strategy<Value = PartialShape> {
    prop::collection::vec(dim(), 0..5).prop_map(PartialShape::new)
}

/// A shape A, an axis and a B that pdpd can broadcast onto A at that axis (B's dims are A's
/// or 1).
fn pdpd_pair() -> impl Strategy<Value = (Vec<u64>, usize, Vec<u64>)> {
    prop::collection::vec(1u64..5, 1..6)
        .prop_flat_map(|a| {
            let n = a.len();
            (Just(a), 0..=n).prop_flat_map(move |(a, axis)| {
                let len = n - axis;
                (
                    Just(a),
                    Just(axis),
                    0..=len,
                    prop::collection::vec(any::<bool>(), len),
                )
            })
        })
        .prop_map(|(a, axis, len, ones)| {
            let b = (0..len)
                .map(|i| if ones[i] { 1 } else { a[axis + i] })
                .collect();
            (a, axis, b)
        })
}

proptest! {
    #[test]
    fn numpy_agrees_with_the_naive_rule(a in shape(), b in shape()) {
        let got = broadcast::numpy(&fixed(&a), &fixed(&b)).ok().and_then(|s| s.to_static());
        prop_assert_eq!(got, naive_numpy(&a, &b));
    }

    #[test]
    fn numpy_is_symmetric(a in partial(), b in partial()) {
        let ab = broadcast::numpy(&a, &b).map_err(|e| e.axis);
        let ba = broadcast::numpy(&b, &a).map_err(|e| e.axis);
        prop_assert_eq!(ab, ba);
    }

    #[test]
    fn all_ones_is_the_identity(a in shape(), k in 0usize..7) {
        let ones = vec![1u64; k];
        let out = broadcast::numpy(&fixed(&a), &fixed(&ones)).unwrap().to_static().unwrap();
        let mut want = vec![1u64; k.saturating_sub(a.len())];
        want.extend(&a);
        prop_assert_eq!(out, want);
    }

    #[test]
    fn pdpd_equals_numpy_after_reshaping_b((a, axis, b) in pdpd_pair()) {
        let spec = AutoBroadcast::Pdpd { axis: axis as i64, axis_given: true };
        let pdpd = spec.infer_static(&a, &b).unwrap();
        let mut reshaped = vec![1u64; axis];
        reshaped.extend(&b);
        reshaped.resize(a.len(), 1);
        let numpy = AutoBroadcast::Numpy.infer_static(&a, &reshaped).unwrap();
        prop_assert_eq!(&pdpd, &numpy);
        prop_assert_eq!(&pdpd, &a);
    }

    #[test]
    fn incompatible_pairs_always_error(a in prop::collection::vec(2u64..6, 1..6), i in any::<prop::sample::Index>(), bump in 1u64..4) {
        let i = i.index(a.len());
        let mut b = a.clone();
        b[i] = a[i] + bump; // differs from a[i], and neither is 1
        for spec in [AutoBroadcast::Numpy, AutoBroadcast::None, AutoBroadcast::Pdpd { axis: -1, axis_given: true }] {
            let err = spec.infer_static(&a, &b).unwrap_err();
            prop_assert_eq!(err.axis, Some(i), "{}", spec);
        }
    }

    /// Execution's shape rule on fixed dims is inference's (intervals, partial shapes).
    #[test]
    fn static_rule_agrees_with_inference(
        a in prop::collection::vec(0u64..4, 0..5),
        b in prop::collection::vec(0u64..4, 0..5),
        mode in 0u8..3,
        axis in -1i64..5,
    ) {
        let spec = match mode {
            0 => AutoBroadcast::Numpy,
            1 => AutoBroadcast::None,
            _ => AutoBroadcast::Pdpd { axis, axis_given: true },
        };
        let usize_of = |s: &[u64]| s.iter().map(|&d| d as usize).collect::<Vec<_>>();
        let fast = broadcast::static_out(spec, &usize_of(&a), &usize_of(&b));
        let slow = spec.infer_static(&a, &b).ok().map(|s| usize_of(&s));
        prop_assert_eq!(fast, slow, "{} {:?} {:?}", spec, a, b);
    }

    #[test]
    fn none_equals_merge_of_equal_ranks(a in partial()) {
        prop_assert_eq!(broadcast::merge(&a, &a).unwrap(), a);
    }
}
