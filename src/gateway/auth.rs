//! Master-key authorization, as the service checks it (reference/gateway.md §1).
//!
//! A client signs each request with HMAC-SHA256 over its verb, resource type, resource
//! link and date, keyed by the base64-decoded account key, and sends
//! `authorization: type=master&ver=1.0&sig=<base64>` (URL-encoded) with the date it signed
//! in `x-ms-date`. The gateway recomputes the signature and compares in constant time;
//! the key never leaves this module (its `Debug` hides it).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use ring::hmac;

/// The well-known key of Microsoft's emulator, which SDK samples and test suites use for
/// local endpoints. Anyone can sign with it, so the gateway only accepts it on loopback.
pub const EMULATOR_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// How far a request's date may be from the gateway's clock, as the service allows.
pub const MAX_CLOCK_SKEW_SECS: i64 = 15 * 60;

/// An account key, decoded and ready to sign with.
#[derive(Clone)]
pub struct MasterKey {
    key: hmac::Key,
    is_emulator_key: bool,
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(..)")
    }
}

/// Why a request's authorization was refused; the message is safe to send back (it never
/// holds the key or the expected signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// What a request is signed over.
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    pub verb: &'a str,
    pub resource_type: &'a str,
    pub resource_link: &'a str,
    /// The `x-ms-date` (or `date`) header, exactly as sent.
    pub date: &'a str,
}

impl MasterKey {
    /// Parses a base64 account key.
    pub fn parse(text: &str) -> Result<MasterKey, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|e| format!("the key is not base64 ({e})"))?;
        if bytes.len() < 16 {
            return Err("the key is too short: account keys are 64 base64-encoded bytes".into());
        }
        Ok(MasterKey {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
            is_emulator_key: text.trim() == EMULATOR_KEY,
        })
    }

    /// The emulator's well-known key.
    pub fn emulator() -> MasterKey {
        // The constant is valid base64 of 64 bytes.
        MasterKey::parse(EMULATOR_KEY).unwrap_or_else(|_| unreachable!("emulator key parses"))
    }

    /// Whether this is the emulator's well-known key (which anyone can sign with).
    pub fn is_emulator_key(&self) -> bool {
        self.is_emulator_key
    }

    /// The signature a client computes for `signed`.
    pub fn sign(&self, signed: Signed<'_>) -> String {
        STANDARD.encode(hmac::sign(&self.key, string_to_sign(signed).as_bytes()).as_ref())
    }

    /// The `authorization` header value a client sends for `signed` (URL-encoded).
    pub fn authorization(&self, signed: Signed<'_>) -> String {
        percent_encode(&format!("type=master&ver=1.0&sig={}", self.sign(signed)))
    }

    /// Checks a request's `authorization` header against what it signs, and its date
    /// against `now`.
    pub fn verify(
        &self,
        authorization: Option<&str>,
        signed: Signed<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), Refused> {
        let header = authorization.ok_or_else(|| {
            Refused("the request has no authorization header; sign it with the account key".into())
        })?;
        check_date(signed.date, now)?;
        let sig = signature_of(header)?;
        let tag = STANDARD
            .decode(sig)
            .map_err(|_| Refused("the authorization header's signature is not base64".into()))?;
        let verify = |link: &str| {
            let msg = string_to_sign(Signed {
                resource_link: link,
                ..signed
            });
            hmac::verify(&self.key, msg.as_bytes(), &tag).is_ok()
        };
        // Links made of resource ids (offers) are signed lowercased by some SDKs and as
        // written by others; either proves the key.
        if verify(signed.resource_link) || verify(&signed.resource_link.to_lowercase()) {
            return Ok(());
        }
        Err(Refused(format!(
            "the authorization signature does not match the request (verb {}, resource type \
             {:?}, resource link {:?}, date {:?}); check the key",
            signed.verb.to_uppercase(),
            signed.resource_type,
            signed.resource_link,
            signed.date
        )))
    }
}

fn string_to_sign(s: Signed<'_>) -> String {
    format!(
        "{}\n{}\n{}\n{}\n\n",
        s.verb.to_lowercase(),
        s.resource_type.to_lowercase(),
        s.resource_link,
        s.date.to_lowercase()
    )
}

/// The service takes RFC 1123 dates in GMT only, within 15 minutes of its clock.
fn check_date(date: &str, now: DateTime<Utc>) -> Result<(), Refused> {
    if date.is_empty() {
        return Err(Refused(
            "the request has no x-ms-date header; send the RFC 1123 date it was signed with".into(),
        ));
    }
    let parsed = DateTime::parse_from_rfc2822(date)
        .ok()
        .filter(|_| date.trim_end().ends_with("GMT"))
        .ok_or_else(|| {
            Refused(format!(
                "x-ms-date {date:?} is not an RFC 1123 date in GMT (e.g. \"Thu, 27 Apr 2017 00:51:12 GMT\")"
            ))
        })?;
    let skew = (now.timestamp() - parsed.timestamp()).abs();
    if skew > MAX_CLOCK_SKEW_SECS {
        return Err(Refused(format!(
            "x-ms-date {date:?} is {skew} s away from the gateway's clock (at most {MAX_CLOCK_SKEW_SECS} s allowed)"
        )));
    }
    Ok(())
}

/// The `sig` of `type=master&ver=1.0&sig=...`, URL-encoded or not.
fn signature_of(header: &str) -> Result<String, Refused> {
    let decoded = percent_decode(header)
        .ok_or_else(|| Refused("the authorization header is not valid URL encoding".into()))?;
    let mut kind = None;
    let mut sig = None;
    for part in decoded.split('&') {
        match part.split_once('=') {
            Some(("type", v)) => kind = Some(v),
            Some(("sig", v)) => sig = Some(v),
            _ => {}
        }
    }
    match (kind, sig) {
        (Some("master"), Some(sig)) if !sig.is_empty() => Ok(sig.to_string()),
        (Some(other), _) if other != "master" => Err(Refused(format!(
            "authorization type {other:?} is not supported: the gateway takes master-key signatures"
        ))),
        _ => Err(Refused(
            "the authorization header is not `type=master&ver=1.0&sig=...`".into(),
        )),
    }
}

/// Decodes `%XX` escapes. A `+` stays a `+`: ids may hold one, and a signature's base64
/// sent unencoded does.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(date: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc2822(date)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn documented_vector() {
        let key = MasterKey::parse(
            "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==",
        )
        .unwrap();
        let signed = Signed {
            verb: "GET",
            resource_type: "dbs",
            resource_link: "dbs/ToDoList",
            date: "Thu, 27 Apr 2017 00:51:12 GMT",
        };
        assert_eq!(
            key.sign(signed),
            "c09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu+c+c="
        );
        let header = key.authorization(signed);
        assert!(header.starts_with("type%3Dmaster%26ver%3D1.0%26sig%3D"));
        assert_eq!(key.verify(Some(&header), signed, at(signed.date)), Ok(()));
    }

    #[test]
    fn emulator_key_vectors() {
        let key = MasterKey::emulator();
        let date = "Sat, 21 Nov 2026 09:31:12 GMT";
        let cases = [
            (
                "GET",
                "docs",
                "dbs/MyDb/colls/MyColl/docs/Item1",
                "aXCQXrihs5CLn0EE/LE7Da7T/fEfgQORsoMahDV4uGE=",
            ),
            (
                "POST",
                "docs",
                "dbs/MyDb/colls/MyColl",
                "hnCyynJQ3MTNkHKFkiYA3KXWmKMsT+bcSVaMwiNhQys=",
            ),
            (
                "GET",
                "dbs",
                "",
                "2J0WWQ/5m9e9FCS9DoISXRUlFUiUKxR4W+nlOIHkuuM=",
            ),
            (
                "GET",
                "pkranges",
                "dbs/MyDb/colls/MyColl",
                "cjbwj4wOXCeS/ZoC7xENQ/+nfdK07DxAdMWarXcPuxM=",
            ),
        ];
        for (verb, resource_type, resource_link, sig) in cases {
            let signed = Signed {
                verb,
                resource_type,
                resource_link,
                date,
            };
            assert_eq!(key.sign(signed), sig, "{verb} {resource_link}");
        }
        assert!(key.is_emulator_key());
    }

    #[test]
    fn refusals_name_the_problem() {
        let key = MasterKey::emulator();
        let date = "Sat, 21 Nov 2026 09:31:12 GMT";
        let signed = Signed {
            verb: "GET",
            resource_type: "dbs",
            resource_link: "",
            date,
        };
        let now = at(date);
        let good = key.authorization(signed);
        assert!(key.verify(None, signed, now).is_err());
        // Another key's signature.
        let other = MasterKey::parse(&STANDARD.encode([7u8; 64])).unwrap();
        let err = key
            .verify(Some(&other.authorization(signed)), signed, now)
            .unwrap_err();
        assert!(err.0.contains("does not match"), "{err:?}");
        // The same signature over another verb.
        let post = Signed {
            verb: "POST",
            ..signed
        };
        assert!(key.verify(Some(&good), post, now).is_err());
        // Sixteen minutes late, and a date that is not GMT.
        let late = now + chrono::Duration::minutes(16);
        assert!(
            key.verify(Some(&good), signed, late)
                .unwrap_err()
                .0
                .contains("away")
        );
        let local = Signed {
            date: "Sat, 21 Nov 2026 10:31:12 +0100",
            ..signed
        };
        assert!(
            key.verify(Some(&key.authorization(local)), local, now)
                .is_err()
        );
        // Garbage headers.
        for h in [
            "",
            "%zz",
            "type=resource&ver=1.0&sig=abc",
            "type=master&sig=!!",
        ] {
            assert!(key.verify(Some(h), signed, now).is_err(), "{h}");
        }
    }

    #[test]
    fn keys_are_checked_and_never_printed() {
        assert!(MasterKey::parse("not base64!").is_err());
        assert!(MasterKey::parse("c2hvcnQ=").is_err());
        assert_eq!(format!("{:?}", MasterKey::emulator()), "MasterKey(..)");
    }
}
