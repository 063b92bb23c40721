//! The match fields of an nft rule (from nft's JSON) a test packet can be given —
//! addresses, ports, protocol — or why the rule cannot be aimed at.
//!
//! Must not: change the rule; guess a value it cannot read (the rule is then
//! unaimable, with the reason).

use crate::model::{AimFields, Ip};

/// A single value a test packet can have for the right side of a match: a number,
/// a range, an address or prefix, or the first element of an anonymous set.
fn first_value(v: &serde_json::Value) -> Option<serde_json::Value> {
    match v {
        serde_json::Value::Object(m) if m.contains_key("set") => {
            first_value(m["set"].as_array()?.first()?)
        }
        other => Some(other.clone()),
    }
}

/// Why a rule cannot be aimed at: its `what` match compares with something unreadable.
fn unreadable_match(what: &str, named: bool) -> String {
    let against = if named {
        "a named set"
    } else {
        "a value fwbench cannot read"
    };
    format!("`{what}` is matched against {against}")
}

fn port_range(v: &serde_json::Value) -> Option<(u16, u16)> {
    if let Some(p) = v.as_u64() {
        let p = u16::try_from(p).ok()?;
        return Some((p, p));
    }
    let r = v.get("range")?.as_array()?;
    Some((
        u16::try_from(r.first()?.as_u64()?).ok()?,
        u16::try_from(r.get(1)?.as_u64()?).ok()?,
    ))
}

fn addr_text(v: &serde_json::Value) -> Option<String> {
    if let Some(s) = v.as_str() {
        return (!s.starts_with('@') && !s.starts_with('$')).then(|| s.to_owned());
    }
    let p = v.get("prefix")?;
    Some(format!("{}/{}", p["addr"].as_str()?, p["len"].as_u64()?))
}

/// The match fields of an nft rule a test packet can be given (addresses, ports,
/// protocol), or why it cannot be aimed at.
pub(super) fn nft_aim(expr: &[serde_json::Value], ip: Ip) -> AimFields {
    let mut a = AimFields::default();
    let l3 = if ip == Ip::V4 { "ip" } else { "ip6" };
    for e in expr {
        let Some(m) = e.get("match") else { continue };
        let op = m["op"].as_str().unwrap_or("");
        let left = &m["left"];
        let right = &m["right"];
        let what = if let Some(p) = left.get("payload") {
            format!(
                "{} {}",
                p["protocol"].as_str().unwrap_or("?"),
                p["field"].as_str().unwrap_or("?")
            )
        } else if let Some(k) = left.get("meta") {
            format!("meta {}", k["key"].as_str().unwrap_or("?"))
        } else if let Some(k) = left.get("ct") {
            format!("ct {}", k["key"].as_str().unwrap_or("?"))
        } else {
            continue;
        };
        let known = matches!(
            what.as_str(),
            "ip saddr"
                | "ip daddr"
                | "ip6 saddr"
                | "ip6 daddr"
                | "meta l4proto"
                | "ip protocol"
                | "ip6 nexthdr"
        ) || what.ends_with(" sport")
            || what.ends_with(" dport");
        if !known {
            continue;
        }
        if op != "==" && op != "in" {
            a.unaimable
                .get_or_insert_with(|| format!("`{what} {op} …` is not an equality match"));
            continue;
        }
        let Some(val) = first_value(right) else {
            continue;
        };
        let named = right.as_str().is_some_and(|s| s.starts_with('@'));
        // A value of a known match that cannot be read: the rule cannot be aimed at.
        let unreadable = |a: &mut AimFields| {
            a.unaimable
                .get_or_insert_with(|| unreadable_match(&what, named));
        };
        match what.as_str() {
            w if w == format!("{l3} saddr") || w == format!("{l3} daddr") => {
                match addr_text(&val) {
                    Some(t) if w.ends_with("saddr") => a.src = Some(t),
                    Some(t) => a.dst = Some(t),
                    None => unreadable(&mut a),
                }
            }
            "ip saddr" | "ip daddr" | "ip6 saddr" | "ip6 daddr" => {
                a.unaimable
                    .get_or_insert_with(|| format!("`{what}` is of the other IP version"));
            }
            "meta l4proto" | "ip protocol" | "ip6 nexthdr" => {
                if let Some(p) = val.as_str() {
                    a.l4 = Some(p.to_owned());
                }
            }
            w => {
                let proto = w.split_whitespace().next().unwrap_or("");
                if proto == "tcp" || proto == "udp" {
                    a.l4 = Some(proto.to_owned());
                }
                match port_range(&val) {
                    Some(r) if w.ends_with("dport") => a.dport = Some(r),
                    Some(r) => a.sport = Some(r),
                    None => unreadable(&mut a),
                }
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eq(left: serde_json::Value, right: serde_json::Value) -> serde_json::Value {
        json!({ "match": { "op": "==", "left": left, "right": right } })
    }

    #[test]
    fn equality_matches_become_aim_fields_and_others_say_why_not() {
        let saddr = json!({ "payload": { "protocol": "ip", "field": "saddr" } });
        let dport = json!({ "payload": { "protocol": "udp", "field": "dport" } });
        let a = nft_aim(
            &[
                eq(
                    saddr.clone(),
                    json!({ "prefix": { "addr": "198.18.0.0", "len": 15 } }),
                ),
                eq(
                    dport.clone(),
                    json!({ "set": [{ "range": [5000, 6000] }, 7000] }),
                ),
                json!({ "accept": null }),
            ],
            Ip::V4,
        );
        assert_eq!(a.src.as_deref(), Some("198.18.0.0/15"));
        assert_eq!(
            (a.l4.as_deref(), a.dport),
            (Some("udp"), Some((5000, 6000)))
        );
        assert_eq!(a.unaimable, None);
        // A named set cannot be aimed at; an IPv4 match in an IPv6 trial neither.
        let a = nft_aim(&[eq(dport, json!("@ports"))], Ip::V4);
        assert!(a.unaimable.unwrap().contains("named set"));
        let a = nft_aim(&[eq(saddr.clone(), json!("198.18.0.1"))], Ip::V6);
        assert!(a.unaimable.unwrap().contains("other IP version"));
        let ne = json!({ "match": { "op": "!=", "left": saddr, "right": "198.18.0.1" } });
        assert!(nft_aim(&[ne], Ip::V4)
            .unaimable
            .unwrap()
            .contains("not an equality match"));
    }
}
