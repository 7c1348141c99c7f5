//! Compact JSON into a byte buffer, byte for byte what
//! `serde_json::to_writer` writes, in fewer instructions: a string is
//! checked for characters to escape many bytes at a time (`escape`; a
//! transcript's text is most of a bundle's bytes), and every write goes
//! straight into the `Vec`. Numbers are formatted by serde_json's own
//! formatter.
//!
//! What serde_json would write differently or refuse (a map key that is not
//! a string: serde_json quotes numbers and refuses others) is not written
//! here: [`write`] then starts again with serde_json, so the bytes never
//! depend on which writer ran.

use std::fmt::{self, Display};

use serde::ser::{self, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};

use escape::{next_escaped, plain_short};

mod escape;

/// Writes `value` as compact JSON at the end of `out`: this writer, or
/// serde_json where this one declines (see the module doc).
pub fn write<T: ?Sized + Serialize>(value: &T, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let start = out.len();
    if value.serialize(&mut Compact { out: &mut *out }).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    serde_json::to_writer(&mut *out, value)
}

/// An object written field by field (`{`, then `"key":value` pairs).
pub struct Object<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Object<'o> {
    pub fn open(out: &'o mut Vec<u8>) -> Object<'o> {
        out.push(b'{');
        Object { out, first: true }
    }

    /// `"key":` (after a comma unless first); the value is the caller's to
    /// write into [`Object::out`].
    pub fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(self.out, key);
        self.out.push(b':');
    }

    pub fn field<T: ?Sized + Serialize>(&mut self, key: &str, v: &T) -> Result<(), Declined> {
        self.key(key);
        v.serialize(&mut Compact { out: self.out })
    }

    pub fn out(&mut self) -> &mut Vec<u8> {
        self.out
    }

    pub fn close(self) {
        self.out.push(b'}');
    }
}

/// An unsigned integer as serde_json writes it.
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    let _ = CompactFormatter.write_u64(out, v);
}

/// `key` (`,"name":`) and `v` when there is one: a field serde skips when
/// it is absent (`skip_serializing_if = "Option::is_none"`).
#[inline]
pub fn opt_u64(out: &mut Vec<u8>, key: &[u8], v: Option<u64>) {
    if let Some(v) = v {
        out.extend_from_slice(key);
        write_u64(out, v);
    }
}

/// [`opt_u64`] for a float.
#[inline]
pub fn opt_f64(out: &mut Vec<u8>, key: &[u8], v: Option<f64>) {
    if let Some(v) = v {
        out.extend_from_slice(key);
        write_f64(out, v);
    }
}

/// [`opt_u64`] for a string.
#[inline]
pub fn opt_str(out: &mut Vec<u8>, key: &[u8], v: Option<&str>) {
    if let Some(v) = v {
        out.extend_from_slice(key);
        write_str(out, v);
    }
}

/// A float as serde_json writes it (`null` when not finite).
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let _ = CompactFormatter.write_f64(out, v);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// Why this writer declined; [`write`] then uses serde_json.
#[derive(Debug)]
pub struct Declined(String);

impl Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "not written by the compact writer: {}", self.0)
    }
}

impl std::error::Error for Declined {}

impl From<serde_json::Error> for Declined {
    fn from(e: serde_json::Error) -> Declined {
        Declined(e.to_string())
    }
}

impl ser::Error for Declined {
    fn custom<T: Display>(msg: T) -> Declined {
        Declined(msg.to_string())
    }
}

fn io(e: std::io::Error) -> Declined {
    Declined(e.to_string())
}

/// The serializer: everything goes to `out`.
pub struct Compact<'o> {
    out: &'o mut Vec<u8>,
}

/// `s` as a JSON string, escaped as serde_json escapes: `\"`, `\\`, the
/// short forms `\b \t \n \f \r`, and `\u00xx` (lowercase) for other
/// control characters; everything else as it is.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    if plain_short(b) {
        out.push(b'"');
        out.extend_from_slice(b);
        out.push(b'"');
        return;
    }
    write_long(out, b);
}

/// [`write_str`] of a string longer than 16 bytes or with something to
/// escape (out of line: most strings are short and plain).
#[inline(never)]
fn write_long(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    let mut run = 0;
    while let Some(at) = next_escaped(b, run) {
        out.extend_from_slice(&b[run..at]);
        let c = b[at];
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0a => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0d => out.extend_from_slice(b"\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 0xf)]);
            }
        }
        run = at + 1;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// Where a list or an object stands: serde_json's `State`.
#[derive(PartialEq)]
enum State {
    /// Written whole already (`[]`, `{}`: the length said none).
    Empty,
    First,
    Rest,
}

/// An open list or object; `close` is what ends it (`]`, `}`, or `]}` and
/// `}}` for an enum variant's).
pub struct Open<'a, 'o> {
    ser: &'a mut Compact<'o>,
    state: State,
    close: &'static [u8],
}

impl<'o> Compact<'o> {
    /// `{"variant":`, how serde_json opens a variant with data.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }

    fn open<'a>(&'a mut self, len: Option<usize>, brackets: &[u8; 2]) -> Open<'a, 'o> {
        self.out.push(brackets[0]);
        let state = if len == Some(0) {
            self.out.push(brackets[1]);
            State::Empty
        } else {
            State::First
        };
        Open {
            ser: self,
            state,
            close: b"",
        }
    }
}

impl Open<'_, '_> {
    fn comma(&mut self) {
        if self.state != State::First {
            self.ser.out.push(b',');
        }
        self.state = State::Rest;
    }

    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        self.comma();
        v.serialize(&mut *self.ser)
    }

    /// A struct's field name: `,"name":`.
    fn field(&mut self, name: &str) {
        let out = &mut *self.ser.out;
        if self.state != State::First {
            out.push(b',');
        }
        self.state = State::Rest;
        let b = name.as_bytes();
        if plain_short(b) {
            out.reserve(b.len() + 3);
            out.push(b'"');
            out.extend_from_slice(b);
            out.extend_from_slice(b"\":");
        } else {
            write_str(out, name);
            out.push(b':');
        }
    }

    fn key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), Declined> {
        self.comma();
        k.serialize(Key(&mut *self.ser))?;
        self.ser.out.push(b':');
        Ok(())
    }

    fn end(self, last: u8) -> Result<(), Declined> {
        if self.state != State::Empty {
            self.ser.out.push(last);
        }
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

macro_rules! numbers {
    ($($f:ident: $t:ty => $w:ident),*) => {$(
        fn $f(self, v: $t) -> Result<(), Declined> {
            CompactFormatter.$w(&mut *self.out, v).map_err(io)
        }
    )*};
}

impl<'a, 'o> ser::Serializer for &'a mut Compact<'o> {
    type Ok = ();
    type Error = Declined;
    type SerializeSeq = Open<'a, 'o>;
    type SerializeTuple = Open<'a, 'o>;
    type SerializeTupleStruct = Open<'a, 'o>;
    type SerializeTupleVariant = Open<'a, 'o>;
    type SerializeMap = Open<'a, 'o>;
    type SerializeStruct = Open<'a, 'o>;
    type SerializeStructVariant = Open<'a, 'o>;

    numbers!(serialize_i8: i8 => write_i8, serialize_i16: i16 => write_i16,
        serialize_i32: i32 => write_i32, serialize_i64: i64 => write_i64,
        serialize_i128: i128 => write_i128, serialize_u8: u8 => write_u8,
        serialize_u16: u16 => write_u16, serialize_u32: u32 => write_u32,
        serialize_u64: u64 => write_u64, serialize_u128: u128 => write_u128);

    fn serialize_bool(self, v: bool) -> Result<(), Declined> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Declined> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        CompactFormatter.write_f32(&mut *self.out, v).map_err(io)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Declined> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        CompactFormatter.write_f64(&mut *self.out, v).map_err(io)
    }

    fn serialize_char(self, v: char) -> Result<(), Declined> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Declined> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Declined> {
        CompactFormatter
            .write_byte_array(&mut *self.out, v)
            .map_err(io)
    }

    fn serialize_none(self) -> Result<(), Declined> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Declined> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Declined> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Declined> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Declined> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Declined> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Declined> {
        self.open_variant(variant);
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Open<'a, 'o>, Declined> {
        Ok(self.open(len, b"[]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Open<'a, 'o>, Declined> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Open<'a, 'o>, Declined> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Open<'a, 'o>, Declined> {
        self.open_variant(variant);
        let mut open = self.open(Some(len), b"[]");
        open.close = b"}";
        Ok(open)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Open<'a, 'o>, Declined> {
        Ok(self.open(len, b"{}"))
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Open<'a, 'o>, Declined> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Open<'a, 'o>, Declined> {
        self.open_variant(variant);
        let mut open = self.open(Some(len), b"{}");
        open.close = b"}";
        Ok(open)
    }

    fn collect_str<T: ?Sized + Display>(self, v: &T) -> Result<(), Declined> {
        self.serialize_str(&v.to_string())
    }
}

impl ser::SerializeSeq for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        self.element(v)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b']')
    }
}

impl ser::SerializeTuple for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        self.element(v)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b']')
    }
}

impl ser::SerializeTupleStruct for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        self.element(v)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b']')
    }
}

impl ser::SerializeTupleVariant for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        self.element(v)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b']')
    }
}

impl ser::SerializeMap for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), Declined> {
        self.key(k)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Declined> {
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b'}')
    }
}

impl ser::SerializeStruct for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Declined> {
        self.field(key);
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b'}')
    }
}

impl ser::SerializeStructVariant for Open<'_, '_> {
    type Ok = ();
    type Error = Declined;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Declined> {
        self.field(key);
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Declined> {
        Open::end(self, b'}')
    }
}

/// A map key: a string (a `str`, a `char`, a unit variant, a newtype of
/// one) is written as serde_json writes it; anything else is declined
/// (serde_json quotes a number or a bool, and refuses the rest).
struct Key<'a, 'o>(&'a mut Compact<'o>);

macro_rules! declined {
    ($($f:ident($($t:ty),*)),*) => {$(
        fn $f(self, $(_: $t),*) -> Result<(), Declined> {
            Err(Declined(concat!("a map key from ", stringify!($f)).into()))
        }
    )*};
}

impl ser::Serializer for Key<'_, '_> {
    type Ok = ();
    type Error = Declined;
    type SerializeSeq = ser::Impossible<(), Declined>;
    type SerializeTuple = ser::Impossible<(), Declined>;
    type SerializeTupleStruct = ser::Impossible<(), Declined>;
    type SerializeTupleVariant = ser::Impossible<(), Declined>;
    type SerializeMap = ser::Impossible<(), Declined>;
    type SerializeStruct = ser::Impossible<(), Declined>;
    type SerializeStructVariant = ser::Impossible<(), Declined>;

    declined!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str)
    );

    fn serialize_str(self, v: &str) -> Result<(), Declined> {
        write_str(self.0.out, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Declined> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Declined> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Declined> {
        v.serialize(self)
    }

    fn collect_str<T: ?Sized + Display>(self, v: &T) -> Result<(), Declined> {
        self.serialize_str(&v.to_string())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Declined> {
        Err(Declined("a map key from serialize_some".into()))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Declined> {
        Err(Declined("a map key from a newtype variant".into()))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Declined> {
        Err(Declined("a map key from a list".into()))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Declined> {
        Err(Declined("a map key from a tuple".into()))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Declined> {
        Err(Declined("a map key from a tuple struct".into()))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Declined> {
        Err(Declined("a map key from a tuple variant".into()))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Declined> {
        Err(Declined("a map key from a map".into()))
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Declined> {
        Err(Declined("a map key from a struct".into()))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Declined> {
        Err(Declined("a map key from a struct variant".into()))
    }
}

#[cfg(test)]
mod tests;
