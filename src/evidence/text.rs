//! [`Text`]: a string that is cheap to copy. Thousands of cells of one
//! transcript share the same answers, test names and file path; a fixed
//! sentence is borrowed and a computed one is shared by reference count, so
//! copying it into every cell does not allocate.
//!
//! A third, in-place form for strings of up to 22 bytes (a GPU's name, a
//! figure as printed) saved their allocation, for `unsafe` code of our
//! own: 1.1% of ingest's instructions (callgrind, collect --from
//! captures/: 81.6 M with it, 82.5 M without), not worth it.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A string, serialised as a plain JSON string.
#[derive(Clone)]
pub enum Text {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
        }
    }

    /// `parts` one after the other (`12.5`, ` `, `GB/s`): what
    /// `Text::from(parts.concat())` holds, without the String between.
    pub fn concat(parts: &[&str]) -> Text {
        Text::Shared(Arc::from(parts.concat()))
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::Static("")
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Text {
        Text::Static(s)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::Shared(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::Shared(Arc::from(s.as_str()))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        // Copies of one Text share their bytes: equal without a compare.
        let (a, b) = (self.as_str(), other.as_str());
        std::ptr::eq(a, b) || a == b
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

impl JsonSchema for Text {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "String".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_a_plain_string_and_back() {
        let t = Text::from(String::from("GPU0"));
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"GPU0\"");
        let back: Text = serde_json::from_str("\"GPU0\"").unwrap();
        assert_eq!(back, t);
        assert_eq!(Text::from("GPU0"), t);
        assert!(t == "GPU0");
    }

    /// Made from a String, a borrowed String or parts, it reads back as
    /// the very string at every length, with multi-byte characters, in
    /// the 24 bytes it took before.
    #[test]
    fn shared_reads_back_the_same() {
        assert_eq!(std::mem::size_of::<Text>(), 24);
        assert_eq!(std::mem::size_of::<Option<Text>>(), 24);
        for n in 0..=25 {
            for fill in ["x", "\u{e9}", "\u{1F600}"] {
                let s: String = fill.repeat(n);
                let t = Text::from(s.clone());
                assert_eq!(t.as_str(), s);
                assert_eq!(Text::from(&s), t);
                let (a, b) = s.split_at(s.len() / fill.len() / 2 * fill.len());
                assert_eq!(Text::concat(&[a, "+", b]).as_str(), format!("{a}+{b}"));
                assert_eq!(format!("{t:?}"), format!("{s:?}"));
                assert_eq!(
                    serde_json::to_string(&t).unwrap(),
                    serde_json::to_string(&s).unwrap()
                );
            }
        }
    }
}
