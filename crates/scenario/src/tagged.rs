//! Reading tables whose tag field names their variant, and the variant the
//! other fields allowed: `[[background]]` (`model`) and `[[apps]]` (`kind`).
//!
//! serde's internally tagged enums read the whole table before they know the
//! variant, and then lose the path of a field inside it: a bad `rate` would
//! be reported at `background[0]`, not at `background[0].rate`. Here the tag
//! is read first and the variant's struct reads the rest of the table in
//! place, so every error keeps its whole path. Each field name is checked
//! against the variant's before serde reads its value, so that a field of
//! another variant is reported as such, with the fields that are allowed.
//!
//! [`ScenarioFile`](crate::ScenarioFile) moves every tag to the front of its
//! table ([`tag_first`]). A table read another way with its tag further on is
//! read all the same, with paths down to the table only.

use crate::values::{choices, Choice};
use serde::de::value::{MapAccessDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;
use toml::{Table, Value};

/// A table whose tag chooses among variants with fields of their own.
pub(crate) trait Tagged: Sized {
    /// The tag's field name.
    const TAG: &'static str;
    /// The tag's values.
    type Kind: Choice + for<'de> Deserialize<'de>;
    /// The fields every variant takes.
    type Common: Common;
    /// A variant with its own fields.
    type Variant;
    /// Reads `kind`'s own fields: a struct derived with `deny_unknown_fields`.
    fn variant<'de, D: Deserializer<'de>>(kind: Self::Kind, fields: D) -> Result<Self::Variant, D::Error>;
    fn assemble(common: Self::Common, variant: Self::Variant) -> Self;
}

/// Fields every variant of a tagged table takes, declared once and read one
/// at a time (serde's `flatten` cannot be combined with `deny_unknown_fields`).
pub(crate) trait Common: Default {
    const FIELDS: &'static [&'static str];
    /// Reads the value of `field`, one of [`Common::FIELDS`].
    fn read<'de, A: MapAccess<'de>>(&mut self, field: &str, map: &mut A) -> Result<(), A::Error>;
}

/// No fields in common.
impl Common for () {
    const FIELDS: &'static [&'static str] = &[];
    fn read<'de, A: MapAccess<'de>>(&mut self, _: &str, map: &mut A) -> Result<(), A::Error> {
        map.next_value::<de::IgnoredAny>().map(drop)
    }
}

/// `T::deserialize`, for the `Deserialize` impl of a tagged table.
pub(crate) fn deserialize<'de, T: Tagged, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TableVisitor(PhantomData))
}

/// Moves `tag` to the front of `table`, keeping the other fields' order.
pub(crate) fn tag_first(table: &mut Table, tag: &str) {
    if let Some(v) = table.remove(tag) {
        let rest = std::mem::take(table);
        table.insert(tag.to_string(), v);
        table.extend(rest);
    }
}

struct TableVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TableVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a table with a {:?} field", T::TAG)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let first = map.next_key::<String>()?;
        if first.as_deref() == Some(T::TAG) {
            let kind: T::Kind = map.next_value()?;
            let mut common = T::Common::default();
            let rest = Rest { map, common: &mut common, fields: Fields::of::<T>(kind) };
            let variant = T::variant(kind, MapAccessDeserializer::new(rest))?;
            return Ok(T::assemble(common, variant));
        }
        // The tag comes later: read the table whole, and again with the tag first.
        let mut table = Table::new();
        if let Some(k) = first {
            table.insert(k, map.next_value()?);
        }
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            table.insert(k, v);
        }
        if !table.contains_key(T::TAG) {
            return Err(de::Error::custom(format!("missing required field {:?}: expected {}", T::TAG, choices::<T::Kind>())));
        }
        tag_first(&mut table, T::TAG);
        Value::Table(table).deserialize_map(self).map_err(|e| de::Error::custom(e.message()))
    }
}

/// The field names of one variant, for checking a table's fields against.
struct Fields {
    tag: &'static str,
    kind: &'static str,
    /// The tag, the common fields and the variant's own, in that order.
    allowed: Vec<&'static str>,
    /// Fields that only other variants take.
    elsewhere: Vec<&'static str>,
}

impl Fields {
    fn of<T: Tagged>(kind: T::Kind) -> Fields {
        let own = |k| {
            let mut fields: &'static [&'static str] = &[];
            let _ = T::variant(k, FieldNames(&mut fields));
            fields
        };
        let allowed: Vec<_> = [T::TAG].iter().chain(<T::Common as Common>::FIELDS).chain(own(kind)).copied().collect();
        let elsewhere = T::Kind::ALL.iter().flat_map(|&k| own(k)).copied().filter(|f| !allowed.contains(f)).collect();
        Fields { tag: T::TAG, kind: kind.name(), allowed, elsewhere }
    }
}

/// A field name, refused unless the variant takes it.
impl<'de> DeserializeSeed<'de> for &Fields {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let field = String::deserialize(d)?;
        if self.allowed.contains(&field.as_str()) {
            return Ok(field);
        }
        let allowed = self.allowed.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", ");
        Err(de::Error::custom(if self.elsewhere.contains(&field.as_str()) {
            format!("does not apply to {} {:?}; allowed fields are {allowed}", self.tag, self.kind)
        } else {
            format!("unknown field {field:?}; allowed fields are {allowed}")
        }))
    }
}

/// The rest of a tagged table after its tag, as the variant's struct sees
/// it: common fields are read into `common`, other fields checked by name.
struct Rest<'a, A, C> {
    map: A,
    common: &'a mut C,
    fields: Fields,
}

impl<'de, A: MapAccess<'de>, C: Common> MapAccess<'de> for Rest<'_, A, C> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        while let Some(field) = self.map.next_key_seed(&self.fields)? {
            if !C::FIELDS.contains(&field.as_str()) {
                return seed.deserialize(StringDeserializer::<A::Error>::new(field)).map(Some);
            }
            self.common.read(&field, &mut self.map)?;
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A deserializer that only notes the field names a derived struct asks for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names noted"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}
