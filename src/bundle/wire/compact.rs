//! The bundle writer: one serde serializer that writes compact JSON into a
//! byte buffer, byte for byte what `serde_json::to_writer` writes, in
//! fewer instructions. Strings are checked for characters to escape eight
//! bytes at a time (`escape`; a transcript's text is most of a bundle's
//! bytes) and every write goes straight into the `Vec`; numbers are
//! formatted by serde_json's own formatter.
//!
//! It also holds the bundle's file table, so that a source can be two
//! numbers. Three names, which serde_json ignores, mark what it treats
//! differently:
//! - a struct named [`SOURCE`] is written as a list of its values
//!   (`[file, line]`) instead of an object;
//! - a newtype named [`FILE`] around a path is written as the path's index
//!   in the table, the path added when it is new;
//! - a newtype named [`FILES`] marks where the table goes: it is written
//!   there once everything else is (its paths are known only then).
//!
//! A map key that serde_json would quote (a number) or refuse is an error
//! here: no bundle has one. The tests (`tests/it/wire.rs`) compare the
//! bytes with serde_json's for every shape serde makes and every capture.

use std::collections::HashMap;
use std::fmt::{self, Display};

use serde::ser::{self, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};

use escape::{next_escaped, plain_short};

mod escape;

/// A struct written as the list of its values.
pub const SOURCE: &str = "$wire::Source";
/// A path written as its index in the file table.
pub const FILE: &str = "$wire::File";
/// Where the file table is written.
pub const FILES: &str = "$wire::Files";

/// Writes `value` at the end of `out`, the file table (if `value` has a
/// [`FILES`] mark) where the mark is.
pub fn write<T: ?Sized + Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), Error> {
    let mut c = Compact {
        out,
        files: Files::default(),
        file_next: false,
        files_at: None,
    };
    value.serialize(&mut c)?;
    if let Some(at) = c.files_at {
        let mut table = Vec::with_capacity(c.files.json.len() + 2);
        table.push(b'[');
        table.extend_from_slice(&c.files.json);
        table.push(b']');
        c.out.splice(at..at, table);
    }
    Ok(())
}

/// Why a value could not be written.
#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Error {
        Error(msg.to_string())
    }
}

fn io(e: std::io::Error) -> Error {
    Error(e.to_string())
}

/// The file table: each path once, in the order first written.
#[derive(Default)]
struct Files {
    paths: Vec<String>,
    index: HashMap<String, u32>,
    /// The paths as JSON strings, comma-separated.
    json: Vec<u8>,
}

impl Files {
    fn index_of(&mut self, path: &str) -> u32 {
        // A node names a few files, and the sources of one come together.
        if self.paths.last().is_some_and(|p| p == path) {
            return self.paths.len() as u32 - 1;
        }
        let found = if self.paths.len() <= 8 {
            self.paths.iter().position(|p| p == path).map(|i| i as u32)
        } else {
            self.index.get(path).copied()
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.paths.len() as u32;
        self.paths.push(path.to_string());
        self.index.insert(path.to_string(), i);
        if i > 0 {
            self.json.push(b',');
        }
        write_str(&mut self.json, path);
        i
    }
}

/// The serializer.
pub struct Compact<'o> {
    out: &'o mut Vec<u8>,
    files: Files,
    /// The next string is a path, written as its index ([`FILE`]).
    file_next: bool,
    /// Where the file table goes ([`FILES`]).
    files_at: Option<usize>,
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
    last: u8,
    close: &'static [u8],
    /// Whether a struct's fields are written with their names (not for a
    /// [`SOURCE`]).
    keys: bool,
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
            last: brackets[1],
            close: b"",
            keys: true,
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

    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        self.comma();
        v.serialize(&mut *self.ser)
    }

    /// A struct's field: `,"name":value`.
    fn field<T: ?Sized + Serialize>(&mut self, name: &str, v: &T) -> Result<(), Error> {
        self.comma();
        if self.keys {
            write_str(self.ser.out, name);
            self.ser.out.push(b':');
        }
        v.serialize(&mut *self.ser)
    }

    /// A map's key: what serde_json writes for a string key, else an error.
    fn key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), Error> {
        self.comma();
        let at = self.ser.out.len();
        k.serialize(&mut *self.ser)?;
        if self.ser.out.get(at) != Some(&b'"') {
            return Err(Error("a map key that is not a string".into()));
        }
        self.ser.out.push(b':');
        Ok(())
    }

    fn finish(self) -> Result<(), Error> {
        if self.state != State::Empty {
            self.ser.out.push(self.last);
        }
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

macro_rules! numbers {
    ($($f:ident: $t:ty => $w:ident),*) => {$(
        fn $f(self, v: $t) -> Result<(), Error> {
            CompactFormatter.$w(&mut *self.out, v).map_err(io)
        }
    )*};
}

impl<'a, 'o> ser::Serializer for &'a mut Compact<'o> {
    type Ok = ();
    type Error = Error;
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

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        CompactFormatter.write_f32(&mut *self.out, v).map_err(io)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        CompactFormatter.write_f64(&mut *self.out, v).map_err(io)
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        if std::mem::take(&mut self.file_next) {
            let i = self.files.index_of(v);
            return self.serialize_u32(i);
        }
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        CompactFormatter
            .write_byte_array(&mut *self.out, v)
            .map_err(io)
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        match name {
            FILES => {
                self.files_at = Some(self.out.len());
                Ok(())
            }
            FILE => {
                self.file_next = true;
                v.serialize(&mut *self)?;
                match std::mem::take(&mut self.file_next) {
                    true => Err(Error("a file that is not a path".into())),
                    false => Ok(()),
                }
            }
            _ => v.serialize(self),
        }
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant);
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Open<'a, 'o>, Error> {
        Ok(self.open(len, b"[]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Open<'a, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Open<'a, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Open<'a, 'o>, Error> {
        self.open_variant(variant);
        let mut open = self.open(Some(len), b"[]");
        open.close = b"}";
        Ok(open)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Open<'a, 'o>, Error> {
        Ok(self.open(len, b"{}"))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Open<'a, 'o>, Error> {
        if name == SOURCE {
            let mut open = self.open(Some(len), b"[]");
            open.keys = false;
            return Ok(open);
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Open<'a, 'o>, Error> {
        self.open_variant(variant);
        let mut open = self.open(Some(len), b"{}");
        open.close = b"}";
        Ok(open)
    }

    fn collect_str<T: ?Sized + Display>(self, v: &T) -> Result<(), Error> {
        self.serialize_str(&v.to_string())
    }
}

/// The compound values: elements and fields, one impl per serde trait.
macro_rules! compound {
    ($($tr:ident: $f:ident),*) => {$(
        impl ser::$tr for Open<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $f<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
                self.element(v)
            }
            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

compound!(SerializeSeq: serialize_element, SerializeTuple: serialize_element,
    SerializeTupleStruct: serialize_field, SerializeTupleVariant: serialize_field);

impl ser::SerializeMap for Open<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), Error> {
        self.key(k)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

macro_rules! fields {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Open<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<(), Error> {
                self.finish()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);
