//! The syntax of a testbed file as serde reads it: the top-level keys, a role's one
//! `[client]` table or several `[[client]]` tables, `gateway = "external"` or a
//! `[gateway]` table, and a host's fields, each value with its span for messages.
//!
//! Owns: what keys exist (unknown keys are refused by serde, with their place). Must
//! not: judge a value (that is the `parse` module's).

use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub name: Option<Spanned<String>>,
    pub topology: Option<Spanned<String>>,
    pub cache_dir: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    /// A `[client]` table, or several hosts as `[[client]]` tables.
    pub client: Option<Spanned<RawRole>>,
    /// A `[gateway]` table, or `gateway = "external"`.
    pub gateway: Option<Spanned<RawGateway>>,
    /// A `[server]` table, or several hosts as `[[server]]` tables.
    pub server: Option<Spanned<RawRole>>,
}

/// A role's host (`[client]`) or hosts (`[[client]]`, one table each).
pub enum RawRole {
    One(Box<RawHost>),
    Many(Vec<Spanned<RawHost>>),
}

impl<'de> Deserialize<'de> for RawRole {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawRole;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table, or tables ([[client]], [[server]]) for several hosts")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawRole, A::Error> {
                RawHost::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(|h| RawRole::One(Box::new(h)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<RawRole, A::Error> {
                let mut v = vec![];
                while let Some(h) = s.next_element::<Spanned<RawHost>>()? {
                    v.push(h);
                }
                Ok(RawRole::Many(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl RawRole {
    /// Its hosts, each with the span of its table, and whether they were given as
    /// `[[role]]` tables (their fields are then named `role#N.field`).
    pub fn hosts(r: Spanned<RawRole>) -> (Vec<Spanned<RawHost>>, bool) {
        let span = r.span();
        match r.into_inner() {
            RawRole::One(h) => (vec![Spanned::new(span, *h)], false),
            RawRole::Many(v) => (v, true),
        }
    }
}

/// `gateway = "external"` (an appliance with no agent) or a `[gateway]` table.
pub enum RawGateway {
    External(String),
    Host(Box<RawHost>),
}

impl<'de> Deserialize<'de> for RawGateway {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawGateway;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"external\" or a [gateway] table")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RawGateway, E> {
                Ok(RawGateway::External(s.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawGateway, A::Error> {
                RawHost::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(|h| RawGateway::Host(Box::new(h)))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub launcher: Option<Spanned<toml::Value>>,
    pub interface: Option<Spanned<String>>,
    pub address: Option<Spanned<toml::Value>>,
    pub addresses: Option<Spanned<toml::Value>>,
    pub prefix: Option<Spanned<toml::Value>>,
    pub gateway_address: Option<Spanned<toml::Value>>,
    pub gateway_interface: Option<Spanned<String>>,
    pub manage_addresses: Option<Spanned<bool>>,
    pub move_interface: Option<Spanned<bool>>,
}
