//! The geometry of a window sliding over the spatial axes of an `[N, C, spatial…]` tensor,
//! shared by the convolutions (Convolution, GroupConvolution, their BackpropData forms) and the
//! pooling ops (MaxPool, AvgPool).
//!
//! A layer's window attributes are one [`Window`]: `strides`, `dilations`, `pads_begin`,
//! `pads_end` (one value per spatial axis) and `auto_pad` ([`AutoPad`]); pooling adds
//! `rounding_type` ([`Rounding`]), passed to the output rule as [`Rule::Pooling`]. The rules
//! follow OpenVINO's shape inference (`convolution_shape_inference_util.hpp`,
//! `pooling_shape_inference_util.hpp`, `convolution_backprop_shape_inference_util.hpp`,
//! `dimension_util.hpp`) and work on [`Dim`]s (static, interval or dynamic) at inference; at
//! execution the `*_static` forms take and give `usize`s through the same code.
//!
//! Per spatial axis `i`, with data dim `X`, kernel dim `K`, stride `s`, dilation `d`:
//!
//! * the kernel spans `(K − 1)·d + 1` data elements ([`dilated`]); a kernel dim of 0 is an
//!   error (OpenVINO reads it as 1);
//! * forward (convolution and pooling), pads `p_b`, `p_e`: the output dim is
//!   `⌊(X + p_b + p_e − span) / s⌋ + 1` — `⌈…⌉` for pooling's `ceil`, and for `ceil_torch` the
//!   same less one when the last window would start in the end padding
//!   (`(out − 1)·s ≥ X + p_b`). `valid` uses no pads, `explicit` (alias `notset`) the
//!   attributes', `same_upper`/`same_lower` the pads that make the output `⌈X / s⌉`: in total
//!   `max(0, (⌈X/s⌉ − 1)·s + span − X)`, half (rounded down) at the begin for `same_upper` and
//!   at the end for `same_lower`, the rest at the other end. Those pads need static `X` and
//!   `K`; otherwise they are 0 (unknown), and a convolution's output is still `⌈X / s⌉` (as an
//!   interval) while a pooling's is `?` (as OpenVINO does);
//! * backward (BackpropData) without an `output_shape` input: the output dim is
//!   `(X − 1)·s + span − p_b − p_e + output_padding` (`X − 1` read as 0 for an empty axis,
//!   as OpenVINO's interval arithmetic does), with the attributes' pads for `explicit` and 0
//!   for the other modes; with an `output_shape` the output dim is given, and the begin pad
//!   (the only one execution needs: the end pad is whatever makes the given size) is the
//!   attribute's for `explicit`, 0 for `valid`, and for `same_*` from the total
//!   `max(0, (X − 1)·s + span − out + output_padding)`: the larger half at the begin for
//!   `same_upper`, the smaller for `same_lower` (the spec's formula; OpenVINO agrees).
//!
//! Decisions and checks (errors name the attribute or axis):
//! * strides and dilations must be at least 1 and have one value per spatial axis; pads may
//!   be empty (read as zeros, as OpenVINO does) or have one value per axis; `dilations`
//!   may be left out where the op allows it ([`Window::parse`]: pooling), meaning 1s;
//! * attribute values are non-negative integers (a negative pad is an attribute error:
//!   OpenVINO's interval arithmetic turns one into nonsense dims);
//! * a kernel span larger than the padded data is an error when it holds for every value
//!   the intervals allow (OpenVINO checks static dims only; for intervals it clips at 0, and
//!   so does ovir where some values are valid);
//! * a backward output dim below 0 is an error when it is below 0 for every value (OpenVINO
//!   gives a dynamic dim);
//! * sizes past 2^63 − 1 are errors.

use std::fmt;

use super::{AttrError, Attrs};
use crate::shape::Dim;
use crate::shape::dim::MAX_DIM;

/// How the pads are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoPad {
    /// The `pads_begin` and `pads_end` attributes (`explicit`, or `notset`).
    Explicit,
    /// No padding.
    Valid,
    /// Pads that make the output `⌈X / s⌉`, an odd total's extra element at the end.
    SameUpper,
    /// The same, the extra element at the begin.
    SameLower,
}

impl AutoPad {
    /// `explicit`, `notset`, `valid`, `same_upper` or `same_lower`, any case (OpenVINO's
    /// enum names).
    pub fn parse(text: &str) -> Result<AutoPad, String> {
        let t = text.trim();
        [
            ("explicit", AutoPad::Explicit),
            ("notset", AutoPad::Explicit),
            ("valid", AutoPad::Valid),
            ("same_upper", AutoPad::SameUpper),
            ("same_lower", AutoPad::SameLower),
        ]
        .into_iter()
        .find(|(name, _)| t.eq_ignore_ascii_case(name))
        .map(|(_, p)| p)
        .ok_or_else(|| "expected explicit, notset, valid, same_upper or same_lower".into())
    }

    /// `same_upper` or `same_lower`.
    pub fn is_same(self) -> bool {
        matches!(self, AutoPad::SameUpper | AutoPad::SameLower)
    }
}

impl fmt::Display for AutoPad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AutoPad::Explicit => "explicit",
            AutoPad::Valid => "valid",
            AutoPad::SameUpper => "same_upper",
            AutoPad::SameLower => "same_lower",
        })
    }
}

/// How pooling rounds the number of windows (`rounding_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    Floor,
    /// Rounded up: the last window may start in the end padding.
    Ceil,
    /// Rounded up, but no window starts in the end padding (PyTorch's `ceil_mode`).
    CeilTorch,
}

impl Rounding {
    /// `floor`, `ceil` or `ceil_torch`, any case.
    pub fn parse(text: &str) -> Result<Rounding, String> {
        let t = text.trim();
        [
            ("floor", Rounding::Floor),
            ("ceil", Rounding::Ceil),
            ("ceil_torch", Rounding::CeilTorch),
        ]
        .into_iter()
        .find(|(name, _)| t.eq_ignore_ascii_case(name))
        .map(|(_, r)| r)
        .ok_or_else(|| "expected floor, ceil or ceil_torch".into())
    }
}

/// Which rules give a forward window's output dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Rounded down; `same_*` gives `⌈X / s⌉` even for a dim that is not static.
    Convolution,
    /// Rounded as given; `same_*` on a dim that is not static gives `?`.
    Pooling(Rounding),
}

/// A comma-separated list of non-negative integers (`"1,2"`; empty for none), each at most
/// 2^63 − 1.
pub fn parse_list(text: &str) -> Result<Vec<u64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split(',')
        .map(|v| {
            let v = v.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err("expected non-negative integers separated by commas".to_string());
            }
            v.parse::<u64>()
                .ok()
                .filter(|&n| n <= MAX_DIM)
                .ok_or_else(|| format!("{v} is too large (the limit is 2^63-1)"))
        })
        .collect()
}

/// A list attribute's length against the spatial rank: `spatial` values, or none where
/// `may_be_empty`.
pub fn check_len(
    name: &str,
    list: &[u64],
    spatial: usize,
    may_be_empty: bool,
) -> Result<(), String> {
    if list.len() == spatial || (may_be_empty && list.is_empty()) {
        return Ok(());
    }
    let values = if list.len() == 1 { "value" } else { "values" };
    let axes = if spatial == 1 { "axis" } else { "axes" };
    Err(format!(
        "{name} has {} {values} but the data has {spatial} spatial {axes}",
        list.len()
    ))
}

/// The window attributes of a convolution or pooling layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub strides: Vec<u64>,
    /// `None`: not given (pooling ops without the attribute): all 1s.
    pub dilations: Option<Vec<u64>>,
    /// Empty: zeros.
    pub pads_begin: Vec<u64>,
    pub pads_end: Vec<u64>,
    pub auto_pad: AutoPad,
}

/// One spatial axis of a forward window: the output dim and the pads it uses (0 where they
/// are unknown: `same_*` on dims that are not static).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis<D> {
    pub out: D,
    pub pad_begin: u64,
    pub pad_end: u64,
}

impl Window {
    /// Reads `strides` (required), `dilations` (required when `dilations_required`, else
    /// `None` when missing), `pads_begin` and `pads_end` (empty when missing) and `auto_pad`
    /// (default `explicit`). Every problem at once.
    pub fn parse(a: &Attrs, dilations_required: bool) -> Result<Window, Vec<AttrError>> {
        let dilations = if dilations_required {
            a.parse_required("dilations", parse_list).map(Some)
        } else {
            a.parse_or("dilations", None, |t| parse_list(t).map(Some))
        };
        let (strides, dilations, pads_begin, pads_end, auto_pad) = crate::attrs_all!(
            a.parse_required("strides", parse_list),
            dilations,
            a.parse_or("pads_begin", Vec::new(), parse_list),
            a.parse_or("pads_end", Vec::new(), parse_list),
            a.parse_or("auto_pad", AutoPad::Explicit, AutoPad::parse),
        )?;
        Ok(Window {
            strides: strides.unwrap_or_default(),
            dilations: dilations.flatten(),
            pads_begin: pads_begin.unwrap_or_default(),
            pads_end: pads_end.unwrap_or_default(),
            auto_pad: auto_pad.unwrap_or(AutoPad::Explicit),
        })
    }

    /// The number of spatial axes the attributes imply, for inference when no input has a
    /// static rank (OpenVINO's order: strides, dilations, pads_begin, pads_end).
    pub fn spatial_hint(&self) -> Option<usize> {
        [
            &self.strides,
            self.dilations.as_ref().unwrap_or(&Vec::new()),
            &self.pads_begin,
            &self.pads_end,
        ]
        .into_iter()
        .map(Vec::len)
        .find(|&n| n > 0)
    }

    /// Checks the attributes against `spatial` axes: lengths, and strides and dilations of at
    /// least 1. The error names the attribute.
    pub fn validate(&self, spatial: usize) -> Result<(), String> {
        check_len("strides", &self.strides, spatial, false)?;
        if let Some(d) = &self.dilations {
            check_len("dilations", d, spatial, false)?;
        }
        check_len("pads_begin", &self.pads_begin, spatial, true)?;
        check_len("pads_end", &self.pads_end, spatial, true)?;
        let lists = [
            ("strides", Some(&self.strides)),
            ("dilations", self.dilations.as_ref()),
        ];
        for (name, list) in lists {
            if let Some(i) = list.and_then(|l| l.iter().position(|&v| v == 0)) {
                return Err(format!(
                    "{name} must be at least 1, but is 0 on spatial axis {i}"
                ));
            }
        }
        Ok(())
    }

    /// The stride of spatial axis `i` (the attributes were validated).
    pub fn stride(&self, i: usize) -> u64 {
        self.strides.get(i).copied().unwrap_or(1)
    }

    pub fn dilation(&self, i: usize) -> u64 {
        self.dilations
            .as_ref()
            .and_then(|d| d.get(i).copied())
            .unwrap_or(1)
    }

    /// The `pads_begin` attribute's value on axis `i` (0 when empty).
    pub fn pad_begin(&self, i: usize) -> u64 {
        self.pads_begin.get(i).copied().unwrap_or(0)
    }

    pub fn pad_end(&self, i: usize) -> u64 {
        self.pads_end.get(i).copied().unwrap_or(0)
    }

    /// Output dim and pads of spatial axis `i` of a forward window over data dim `data` with
    /// kernel dim `kernel` (undilated).
    pub fn forward(
        &self,
        rule: Rule,
        i: usize,
        data: Dim,
        kernel: Dim,
    ) -> Result<Axis<Dim>, String> {
        let s = self.stride(i).max(1);
        let span = dilated(kernel, self.dilation(i), i)?;
        let (pb, pe) = match self.auto_pad {
            AutoPad::Explicit => (self.pad_begin(i), self.pad_end(i)),
            AutoPad::Valid => (0, 0),
            AutoPad::SameUpper | AutoPad::SameLower => {
                match (data.get_static(), span.get_static()) {
                    (Some(x), Some(k)) => same_pads(x, k, s, self.auto_pad == AutoPad::SameUpper),
                    _ => (0, 0),
                }
            }
        };
        let axis = |out| Axis {
            out,
            pad_begin: pb,
            pad_end: pe,
        };
        if self.auto_pad.is_same() {
            match rule {
                Rule::Convolution => {
                    let out =
                        Dim::interval(data.min().div_ceil(s), data.max().map(|m| m.div_ceil(s)));
                    return Ok(axis(out.unwrap_or(Dim::DYNAMIC)));
                }
                Rule::Pooling(_) if !data.is_static() => return Ok(axis(Dim::DYNAMIC)),
                Rule::Pooling(_) => {}
            }
        }
        let too_large = || format!("the padded spatial axis {i} is larger than 2^63-1");
        let pads = pb
            .checked_add(pe)
            .filter(|&p| p <= MAX_DIM)
            .ok_or_else(too_large)?;
        let lo = data
            .min()
            .checked_add(pads)
            .filter(|&v| v <= MAX_DIM)
            .ok_or_else(too_large)?;
        let hi = match data.max() {
            Some(m) => Some(
                m.checked_add(pads)
                    .filter(|&v| v <= MAX_DIM)
                    .ok_or_else(too_large)?,
            ),
            None => None,
        };
        if let Some(h) = hi
            && h < span.min()
        {
            let padded = Dim::interval(lo, hi).unwrap_or(Dim::DYNAMIC);
            return Err(format!(
                "the kernel spans {span} elements after dilation on spatial axis {i}, more than the padded data's {padded} (data {data}, pads {pb} and {pe})"
            ));
        }
        // The positions of the last window's start, clipped at 0 (OpenVINO's interval
        // subtraction) where only some values of the intervals are valid.
        let first = lo.saturating_sub(span.max().unwrap_or(u64::MAX));
        let last = hi.map(|h| h - span.min());
        let rounding = match rule {
            Rule::Convolution => Rounding::Floor,
            Rule::Pooling(r) => r,
        };
        let count = |v: u64, x: u64| -> u64 {
            match rounding {
                Rounding::Floor => v / s + 1,
                Rounding::Ceil => v.div_ceil(s) + 1,
                Rounding::CeilTorch => {
                    let q = v.div_ceil(s);
                    // No window may start in the end padding.
                    if (q as u128) * (s as u128) < x as u128 + pb as u128 {
                        q + 1
                    } else {
                        q
                    }
                }
            }
        };
        let out_lo = count(first, data.min());
        let out_hi = last.map(|l| count(l, data.max().unwrap_or(u64::MAX)));
        Ok(axis(
            Dim::interval(out_lo.min(out_hi.unwrap_or(u64::MAX)), out_hi).unwrap_or(Dim::DYNAMIC),
        ))
    }

    /// [`forward`](Window::forward) on static dims (execution).
    pub fn forward_static(
        &self,
        rule: Rule,
        i: usize,
        data: usize,
        kernel: usize,
    ) -> Result<Axis<usize>, String> {
        let a = self.forward(rule, i, Dim::fixed(data as u64), Dim::fixed(kernel as u64))?;
        let out = a
            .out
            .get_static()
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| format!("the output dim of spatial axis {i} is too large"))?;
        Ok(Axis {
            out,
            pad_begin: a.pad_begin,
            pad_end: a.pad_end,
        })
    }

    /// Output dim of spatial axis `i` of a backward window (BackpropData without an
    /// `output_shape` input) over data dim `data` with kernel dim `kernel`.
    pub fn backward(
        &self,
        i: usize,
        data: Dim,
        kernel: Dim,
        output_padding: u64,
    ) -> Result<Dim, String> {
        let s = self.stride(i).max(1) as u128;
        let span = dilated(kernel, self.dilation(i), i)?;
        let (pb, pe) = match self.auto_pad {
            AutoPad::Explicit => (self.pad_begin(i), self.pad_end(i)),
            _ => (0, 0),
        };
        let pads = pb as u128 + pe as u128;
        let full =
            |x: u64, k: u64| x.saturating_sub(1) as u128 * s + k as u128 + output_padding as u128;
        let lo = full(data.min(), span.min());
        let hi = match (data.max(), span.max()) {
            (Some(x), Some(k)) => Some(full(x, k)),
            _ => None,
        };
        if let Some(h) = hi
            && h < pads
        {
            return Err(format!(
                "the output of spatial axis {i} would be {h} − {pads} (pads_begin + pads_end) < 0 (data {data}, kernel span {span}, output_padding {output_padding})"
            ));
        }
        let too_large = || format!("the output dim of spatial axis {i} is larger than 2^63-1");
        let fit = |v: u128| u64::try_from(v).ok().filter(|&v| v <= MAX_DIM);
        let out_lo = fit(lo.saturating_sub(pads)).ok_or_else(too_large)?;
        let out_hi = match hi {
            Some(h) => Some(fit(h - pads).ok_or_else(too_large)?),
            None => None,
        };
        Ok(Dim::interval(out_lo, out_hi).unwrap_or(Dim::DYNAMIC))
    }

    /// [`backward`](Window::backward) on static dims (execution).
    pub fn backward_static(
        &self,
        i: usize,
        data: usize,
        kernel: usize,
        output_padding: u64,
    ) -> Result<usize, String> {
        let d = self.backward(
            i,
            Dim::fixed(data as u64),
            Dim::fixed(kernel as u64),
            output_padding,
        )?;
        d.get_static()
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| format!("the output dim of spatial axis {i} is too large"))
    }

    /// The begin pad of spatial axis `i` of a backward window at execution: output element
    /// `y` is the sum of the products whose taps land on `y + pad` of the full transposed
    /// convolution. `output` is the `output_shape` input's dim, if given.
    pub fn backward_pad_begin(
        &self,
        i: usize,
        data: usize,
        kernel: usize,
        output: Option<usize>,
        output_padding: u64,
    ) -> u64 {
        match (self.auto_pad, output) {
            (AutoPad::Explicit, _) => self.pad_begin(i),
            (_, None) | (AutoPad::Valid, _) => 0,
            (same, Some(out)) => {
                let span = (kernel.max(1) as i128 - 1) * self.dilation(i) as i128 + 1;
                let total = ((data as i128 - 1) * self.stride(i) as i128 + span - out as i128
                    + output_padding as i128)
                    .max(0);
                let small = total / 2;
                let pad = if same == AutoPad::SameUpper {
                    total - small
                } else {
                    small
                };
                u64::try_from(pad).unwrap_or(u64::MAX)
            }
        }
    }
}

/// The span of a kernel dim after dilation, `(K − 1)·d + 1`, on spatial axis `i`; a kernel
/// dim of 0 is an error (an interval's 0 is left out).
pub fn dilated(kernel: Dim, dilation: u64, i: usize) -> Result<Dim, String> {
    if kernel.max() == Some(0) {
        return Err(format!("the kernel is empty (0) on spatial axis {i}"));
    }
    let span = |k: u64| {
        ((k.max(1) - 1) as u128 * dilation as u128 + 1)
            .try_into()
            .ok()
            .filter(|&v: &u64| v <= MAX_DIM)
            .ok_or_else(|| format!("the dilated kernel of spatial axis {i} is larger than 2^63-1"))
    };
    let lo = span(kernel.min())?;
    let hi = match kernel.max() {
        Some(k) => Some(span(k)?),
        None => None,
    };
    Ok(Dim::interval(lo, hi).unwrap_or(Dim::DYNAMIC))
}

/// The `same_*` pads (begin, end) of a static data dim `x` under a kernel span `k` and stride
/// `s`: in total `max(0, (⌈x/s⌉ − 1)·s + k − x)`, the smaller half at the begin for
/// `same_upper`, at the end for `same_lower`.
fn same_pads(x: u64, k: u64, s: u64, upper: bool) -> (u64, u64) {
    let out = x.div_ceil(s) as i128;
    let total = ((out - 1) * s as i128 + k as i128 - x as i128).max(0);
    let small = (total / 2) as u64;
    let large = (total - total / 2) as u64;
    if upper {
        (small, large)
    } else {
        (large, small)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::context::attrs_for_test;

    fn window(
        strides: &[u64],
        dilations: &[u64],
        pb: &[u64],
        pe: &[u64],
        auto_pad: AutoPad,
    ) -> Window {
        Window {
            strides: strides.to_vec(),
            dilations: Some(dilations.to_vec()),
            pads_begin: pb.to_vec(),
            pads_end: pe.to_vec(),
            auto_pad,
        }
    }

    fn dim(s: &str) -> Dim {
        Dim::parse(s).unwrap()
    }

    /// One axis: stride, dilation, pads, auto_pad, rule, data, kernel → output (and pads) or
    /// the error's start.
    #[allow(clippy::too_many_arguments)]
    fn fwd(
        s: u64,
        d: u64,
        pb: u64,
        pe: u64,
        ap: AutoPad,
        rule: Rule,
        data: &str,
        k: &str,
    ) -> String {
        let w = window(&[s], &[d], &[pb], &[pe], ap);
        match w.forward(rule, 0, dim(data), dim(k)) {
            Ok(a) => format!("{} {} {}", a.out, a.pad_begin, a.pad_end),
            Err(e) => format!("error: {e}"),
        }
    }

    /// stride, dilation, pads, auto_pad, rule, data, kernel, expected.
    type FwdRow = (
        u64,
        u64,
        u64,
        u64,
        AutoPad,
        Rule,
        &'static str,
        &'static str,
        &'static str,
    );
    /// stride, dilation, pads, output_padding, auto_pad, data, kernel, expected.
    type BackRow = (
        u64,
        u64,
        u64,
        u64,
        u64,
        AutoPad,
        &'static str,
        &'static str,
        &'static str,
    );

    const CONV: Rule = Rule::Convolution;
    const FLOOR: Rule = Rule::Pooling(Rounding::Floor);
    const CEIL: Rule = Rule::Pooling(Rounding::Ceil);
    const TORCH: Rule = Rule::Pooling(Rounding::CeilTorch);
    use AutoPad::{Explicit as E, SameLower as SL, SameUpper as SU, Valid as V};

    #[test]
    fn forward_table() {
        // Checked against OpenVINO 2026.4's shape inference (Convolution-1, MaxPool-1/14) where
        // OpenVINO gives a result; the errors are ovir's decisions (module docs).
        let table: &[FwdRow] = &[
            (1, 1, 0, 0, E, CONV, "5", "3", "3 0 0"),
            (2, 1, 0, 0, E, CONV, "7", "3", "3 0 0"),
            (2, 1, 1, 1, E, CONV, "7", "3", "4 1 1"),
            (3, 2, 0, 0, E, CONV, "320", "3", "106 0 0"),
            (2, 1, 0, 0, E, CONV, "128", "4", "63 0 0"),
            (1, 1, 2, 2, E, CONV, "224", "5", "224 2 2"),
            // valid ignores the pads.
            (2, 1, 5, 5, V, CONV, "128", "4", "63 0 0"),
            // same: the output is ⌈X/s⌉, the odd pad at the end (upper) or begin (lower).
            (1, 1, 9, 9, SU, CONV, "7", "3", "7 1 1"),
            (1, 1, 0, 0, SU, CONV, "7", "4", "7 1 2"),
            (1, 1, 0, 0, SL, CONV, "7", "4", "7 2 1"),
            (2, 1, 0, 0, SU, CONV, "7", "3", "4 1 1"),
            (2, 1, 0, 0, SU, CONV, "8", "3", "4 0 1"),
            (2, 1, 0, 0, SL, CONV, "8", "3", "4 1 0"),
            (3, 2, 0, 0, SU, CONV, "10", "3", "4 2 2"),
            (5, 1, 0, 0, SU, CONV, "10", "1", "2 0 0"),
            // Intervals and dynamic dims (OpenVINO's results).
            (2, 1, 0, 0, E, CONV, "1..10", "3", "1..4 0 0"),
            (2, 1, 0, 0, SU, CONV, "1..10", "3", "1..5 0 0"),
            (2, 1, 0, 0, SU, CONV, "?", "3", "? 0 0"),
            (2, 1, 0, 0, E, CONV, "?", "3", "1.. 0 0"),
            (2, 1, 0, 0, E, CONV, "2..", "3", "1.. 0 0"),
            (2, 1, 0, 0, E, CONV, "2..9", "?", "1..5 0 0"),
            (2, 2, 0, 0, E, CONV, "2..9", "2..3", "1..4 0 0"),
            (2, 1, 0, 0, SL, CONV, "7", "?", "4 0 0"),
            (1, 1, 0, 0, E, CONV, "..3", "3", "1 0 0"),
            (2, 1, 1, 1, E, CONV, "4..8", "?", "1..5 1 1"),
            // Errors: a kernel larger than the padded data for every value, an empty kernel.
            (2, 1, 0, 0, E, CONV, "2", "3", "error: the kernel spans 3"),
            (1, 2, 0, 0, E, CONV, "4", "3", "error: the kernel spans 5"),
            (1, 1, 0, 0, E, CONV, "..2", "3", "error: the kernel spans 3"),
            (
                1,
                1,
                0,
                0,
                E,
                CONV,
                "5",
                "0",
                "error: the kernel is empty (0) on spatial axis 0",
            ),
            (1, 1, 0, 0, E, CONV, "5", "0..4", "2..5 0 0"),
            // Pooling: rounding, and same_* on a dynamic dim.
            (2, 1, 0, 0, E, FLOOR, "6", "3", "2 0 0"),
            (2, 1, 0, 0, E, CEIL, "6", "3", "3 0 0"),
            (2, 1, 0, 0, E, TORCH, "6", "3", "3 0 0"),
            (2, 1, 0, 1, E, CEIL, "5", "2", "3 0 1"),
            (2, 1, 0, 1, E, TORCH, "5", "2", "3 0 1"),
            (2, 1, 0, 1, E, CEIL, "4", "2", "3 0 1"),
            (2, 1, 0, 1, E, TORCH, "4", "2", "2 0 1"),
            (2, 1, 1, 1, E, TORCH, "5", "3", "3 1 1"),
            (2, 1, 0, 0, SU, FLOOR, "7", "3", "4 1 1"),
            (2, 1, 0, 0, SU, CEIL, "8", "3", "4 0 1"),
            (2, 1, 0, 0, SU, FLOOR, "1..10", "3", "? 0 0"),
            (2, 1, 0, 0, E, CEIL, "1..10", "3", "1..5 0 0"),
            (2, 1, 0, 1, E, TORCH, "5..7", "2", "3..4 0 1"),
        ];
        let mut failures = Vec::new();
        for &(s, d, pb, pe, ap, rule, data, k, want) in table {
            let got = fwd(s, d, pb, pe, ap, rule, data, k);
            if !got.starts_with(want) {
                failures.push(format!(
                    "s{s} d{d} p{pb},{pe} {ap} {rule:?} {data} k{k}: got {got:?}, want {want:?}"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn forward_static_matches_the_definition() {
        // Every output window lies inside the padded data, and one more would not.
        for x in 1..12usize {
            for k in 1..5usize {
                for s in 1..4u64 {
                    for d in 1..3u64 {
                        for (pb, pe) in [(0, 0), (1, 0), (0, 2), (2, 1)] {
                            let w = window(&[s], &[d], &[pb], &[pe], E);
                            let span = (k as u64 - 1) * d + 1;
                            let padded = x as u64 + pb + pe;
                            match w.forward_static(CONV, 0, x, k) {
                                Ok(a) => {
                                    let o = a.out as u64;
                                    assert!(o >= 1 && (o - 1) * s + span <= padded);
                                    assert!(o * s + span > padded);
                                }
                                Err(_) => assert!(span > padded),
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn same_pads_give_the_ceiling() {
        for x in 1..20usize {
            for k in 1..6usize {
                for s in 1..5u64 {
                    for d in 1..3u64 {
                        for ap in [SU, SL] {
                            let w = window(&[s], &[d], &[], &[], ap);
                            let a = w.forward_static(CONV, 0, x, k).unwrap();
                            assert_eq!(a.out as u64, (x as u64).div_ceil(s));
                            // The explicit formula with the resolved pads agrees (pooling
                            // reads the pads so).
                            let e = window(&[s], &[d], &[a.pad_begin], &[a.pad_end], E);
                            assert_eq!(e.forward_static(CONV, 0, x, k).unwrap().out, a.out);
                            assert_eq!(w.forward_static(FLOOR, 0, x, k).unwrap().out, a.out);
                            let diff = a.pad_end as i64 - a.pad_begin as i64;
                            assert!(diff == 0 || diff == if ap == SU { 1 } else { -1 });
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn backward_table() {
        // (stride, dilation, pads, output_padding, auto_pad, data, kernel) → output: the spec's
        // examples (447, 8) and OpenVINO's interval results.
        let table: &[BackRow] = &[
            (2, 1, 1, 1, 0, E, "224", "3", "447"),
            (3, 1, 0, 0, 2, E, "2", "3", "8"),
            (1, 1, 0, 0, 0, E, "4", "3", "6"),
            (2, 1, 1, 0, 0, E, "4", "3", "8"),
            (2, 1, 0, 0, 1, E, "4", "3", "10"),
            (1, 2, 0, 0, 0, E, "4", "3", "8"),
            // Pads are read only in explicit mode.
            (2, 1, 1, 1, 0, SU, "224", "3", "449"),
            (2, 1, 1, 1, 0, V, "224", "3", "449"),
            (2, 1, 0, 0, 0, E, "1..4", "3", "3..9"),
            (2, 1, 0, 0, 0, E, "?", "3", "3.."),
            (2, 1, 0, 0, 0, E, "4", "?", "7.."),
            (1, 1, 0, 0, 0, E, "0", "3", "3"),
            (
                1,
                1,
                2,
                2,
                0,
                E,
                "1",
                "3",
                "error: the output of spatial axis 0 would be 3",
            ),
            (1, 1, 2, 2, 0, E, "1..4", "3", "..2"),
            (1, 1, 0, 0, 0, E, "4", "0", "error: the kernel is empty"),
        ];
        for &(s, d, pb, pe, op, ap, data, k, want) in table {
            let w = window(&[s], &[d], &[pb], &[pe], ap);
            let got = match w.backward(0, dim(data), dim(k), op) {
                Ok(o) => o.to_string(),
                Err(e) => format!("error: {e}"),
            };
            assert!(
                got.starts_with(want),
                "s{s} d{d} p{pb},{pe} op{op} {ap} {data} k{k}: {got}"
            );
        }
    }

    #[test]
    fn backward_pads_from_the_output_shape() {
        // (auto_pad, pads_begin, data, kernel, stride, output, output_padding) → begin pad;
        // the same_* cases as OpenVINO's CPU plugin places them.
        for (ap, pb, x, k, s, out, op, want) in [
            (E, 1, 4, 3, 1, Some(6), 0, 1),
            (E, 1, 4, 3, 1, None, 0, 1),
            (V, 1, 4, 3, 1, Some(6), 0, 0),
            (SU, 0, 4, 3, 1, Some(5), 0, 1),
            (SL, 0, 4, 3, 1, Some(5), 0, 0),
            (SU, 0, 4, 3, 1, Some(8), 0, 0),
            (SU, 0, 4, 3, 2, Some(4), 0, 3),
            (SL, 0, 4, 3, 2, Some(4), 0, 2),
            (SU, 0, 4, 3, 2, Some(4), 1, 3),
            (SU, 5, 4, 3, 2, None, 0, 0),
        ] {
            let w = window(&[s], &[1], &[pb], &[0], ap);
            assert_eq!(
                w.backward_pad_begin(0, x, k, out, op),
                want,
                "{ap} {pb} {x} {k} {s} {out:?} {op}"
            );
        }
    }

    #[test]
    fn validation_names_the_attribute() {
        let ok = window(&[1, 2], &[1, 1], &[], &[0, 1], E);
        assert_eq!(ok.validate(2), Ok(()));
        for (w, spatial, want) in [
            (
                window(&[1], &[1, 1], &[], &[], E),
                2,
                "strides has 1 value but the data has 2 spatial axes",
            ),
            (
                window(&[1, 1], &[1], &[], &[], E),
                2,
                "dilations has 1 value",
            ),
            (
                window(&[1, 1], &[1, 1], &[0, 0, 0], &[], E),
                2,
                "pads_begin has 3 values",
            ),
            (
                window(&[1], &[1], &[0], &[0, 0], E),
                1,
                "pads_end has 2 values but the data has 1 spatial axis",
            ),
            (
                window(&[1, 0], &[1, 1], &[], &[], E),
                2,
                "strides must be at least 1, but is 0 on spatial axis 1",
            ),
            (
                window(&[1, 1], &[0, 1], &[], &[], E),
                2,
                "dilations must be at least 1, but is 0 on spatial axis 0",
            ),
        ] {
            let err = w.validate(spatial).unwrap_err();
            assert!(err.starts_with(want), "{err}");
        }
        // No dilations: pooling's 1s.
        let mut w = window(&[2], &[], &[], &[], E);
        w.dilations = None;
        assert_eq!(w.validate(1), Ok(()));
        assert_eq!(w.dilation(0), 1);
        assert_eq!(w.spatial_hint(), Some(1));
    }

    #[test]
    fn parse_table() {
        let parse = |attrs: &[(&str, &str)], required: bool| {
            let data = attrs_for_test(attrs);
            Window::parse(&Attrs::new(Some(&data)), required).map_err(|e| {
                e.iter()
                    .map(|e| format!("{} {:?}: {}", e.name, e.value, e.reason))
                    .collect::<Vec<_>>()
            })
        };
        let w = parse(
            &[
                ("strides", "2,1"),
                ("dilations", "1, 3"),
                ("pads_begin", "0,1"),
                ("pads_end", "1,0"),
                ("auto_pad", "NOTSET"),
            ],
            true,
        )
        .unwrap();
        assert_eq!(w, window(&[2, 1], &[1, 3], &[0, 1], &[1, 0], E));
        let w = parse(&[("strides", "2"), ("auto_pad", "Same_Upper")], false).unwrap();
        assert_eq!((w.dilations, w.auto_pad, w.pads_begin), (None, SU, vec![]));
        for (ap, want) in [("valid", V), ("same_lower", SL), ("explicit", E)] {
            let w = parse(
                &[("strides", "1"), ("dilations", "1"), ("auto_pad", ap)],
                true,
            )
            .unwrap();
            assert_eq!(w.auto_pad, want);
        }
        let errs = parse(
            &[
                ("pads_begin", "-1"),
                ("auto_pad", "same"),
                ("dilations", "1,x"),
            ],
            true,
        )
        .unwrap_err();
        assert_eq!(
            errs,
            [
                "strides None: ",
                "dilations Some(\"1,x\"): expected non-negative integers separated by commas",
                "pads_begin Some(\"-1\"): expected non-negative integers separated by commas",
                "auto_pad Some(\"same\"): expected explicit, notset, valid, same_upper or same_lower",
            ]
        );
        let errs = parse(&[("strides", "1")], true).unwrap_err();
        assert_eq!(errs, ["dilations None: "]);
        assert_eq!(parse_list(" "), Ok(vec![]));
        assert!(
            parse_list("9223372036854775808")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(Rounding::parse("CEIL_torch"), Ok(Rounding::CeilTorch));
        assert!(Rounding::parse("round").is_err());
    }
}
