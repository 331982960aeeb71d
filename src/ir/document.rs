//! serde structs for the parts of an IR file that ovir reads. Structure only: every value is
//! kept as the text written in the file, and later stages give it meaning (and report errors
//! with positions). Unknown elements and attributes are ignored by serde, which is how
//! `<rt_info>` (net, layer and port level), `<meta_data>`, `<quantization_parameters>` and
//! unknown sections are tolerated.

use std::borrow::Cow;

use serde::Deserialize;

/// The attributes of `<net>`.
#[derive(Debug, Deserialize)]
pub struct NetAttrs {
    #[serde(rename = "@name", default)]
    pub name: Option<String>,
    #[serde(rename = "@version", default)]
    pub version: Option<String>,
}

/// The attributes of a `<layer>` start tag, read on their own when the whole element does not
/// deserialize, so that the error can still name the layer.
#[derive(Debug, Default, Deserialize)]
pub struct LayerHead {
    #[serde(rename = "@id", default)]
    pub id: Option<String>,
    #[serde(rename = "@name", default)]
    pub name: Option<String>,
    #[serde(rename = "@type", default)]
    pub ty: Option<String>,
    #[serde(rename = "@version", default)]
    pub version: Option<String>,
}

impl LayerHead {
    pub fn into_layer<'a>(self) -> Layer<'a> {
        Layer {
            id: self.id.map(Cow::Owned),
            name: self.name.map(Cow::Owned),
            ty: self.ty.map(Cow::Owned),
            version: self.version.map(Cow::Owned),
            output_names: None,
            data: None,
            input: None,
            output: None,
        }
    }
}

/// One `<layer>`.
#[derive(Debug, PartialEq, Deserialize)]
pub struct Layer<'a> {
    #[serde(rename = "@id", borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(rename = "@name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "@type", borrow, default)]
    pub ty: Option<Cow<'a, str>>,
    #[serde(rename = "@version", borrow, default)]
    pub version: Option<Cow<'a, str>>,
    /// Result layers written by OpenVINO v11 carry their output tensor names here.
    #[serde(rename = "@output_names", borrow, default)]
    pub output_names: Option<Cow<'a, str>>,
    /// `<data>`: each op parses its own attributes from this map.
    #[serde(borrow, default)]
    pub data: Option<Data<'a>>,
    #[serde(borrow, default)]
    pub input: Option<PortList<'a>>,
    #[serde(borrow, default)]
    pub output: Option<PortList<'a>>,
}

/// The attributes of `<data>` (names without quick-xml's `@` prefix), sorted by name. A layer
/// has a handful, so a sorted list beats a map.
#[derive(Debug, Default, PartialEq)]
pub struct Data<'a>(pub Vec<(Cow<'a, str>, Cow<'a, str>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Data<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = std::collections::BTreeMap::<Cow<'a, str>, Cow<'a, str>>::deserialize(d)?;
        Ok(Data(
            raw.into_iter()
                .map(|(k, v)| {
                    let k = match k {
                        Cow::Borrowed(s) => Cow::Borrowed(s.strip_prefix('@').unwrap_or(s)),
                        Cow::Owned(s) => Cow::Owned(s.strip_prefix('@').unwrap_or(&s).to_owned()),
                    };
                    (k, v)
                })
                .collect(),
        ))
    }
}

impl<'a> Data<'a> {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .map(|i| self.0[i].1.as_ref())
    }

    /// The map of attributes given in file order: sorted by name, and of duplicates the last
    /// wins. One sort, O(n log n): a `<data>` with a million attributes stays cheap.
    pub fn from_pairs(mut pairs: Vec<(Cow<'a, str>, Cow<'a, str>)>) -> Data<'a> {
        pairs.reverse();
        // Stable: of equal keys, the last in the file now comes first and is kept.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|later, kept| later.0 == kept.0);
        Data(pairs)
    }
}

/// `<input>` or `<output>`.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub struct PortList<'a> {
    #[serde(borrow, default)]
    pub port: Vec<Port<'a>>,
}

/// One `<port>`.
#[derive(Debug, PartialEq, Deserialize)]
pub struct Port<'a> {
    #[serde(rename = "@id", borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(rename = "@precision", borrow, default)]
    pub precision: Option<Cow<'a, str>>,
    #[serde(rename = "@names", borrow, default)]
    pub names: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub dim: Vec<Cow<'a, str>>,
    /// Byte offset of the `<port>` start tag in the file (filled by the fast reader; serde
    /// leaves it 0).
    #[serde(skip)]
    pub offset: usize,
}

/// One `<edge>`.
#[derive(Debug, PartialEq, Deserialize)]
pub struct Edge<'a> {
    #[serde(rename = "@from-layer", borrow, default)]
    pub from_layer: Option<Cow<'a, str>>,
    #[serde(rename = "@from-port", borrow, default)]
    pub from_port: Option<Cow<'a, str>>,
    #[serde(rename = "@to-layer", borrow, default)]
    pub to_layer: Option<Cow<'a, str>>,
    #[serde(rename = "@to-port", borrow, default)]
    pub to_port: Option<Cow<'a, str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_from_pairs_sorts_and_keeps_the_last_duplicate() {
        let pairs = [("b", "1"), ("a", "2"), ("b", "3"), ("c", "4")]
            .map(|(k, v)| (Cow::Borrowed(k), Cow::Borrowed(v)))
            .to_vec();
        let d = Data::from_pairs(pairs);
        let keys: Vec<_> = d.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(keys, ["a=2", "b=3", "c=4"]);
        assert_eq!(d.get("b"), Some("3"));
        assert_eq!(d.get("d"), None);
    }
}
