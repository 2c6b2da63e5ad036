//! Master-key authorization, as the service checks it (reference/gateway.md §1).
//!
//! A client signs each request with HMAC-SHA256 over its verb, resource type, resource
//! link and date, keyed by the base64-decoded account key, and sends
//! `authorization: type=master&ver=1.0&sig=<base64>` (URL-encoded) with the date it signed
//! in `x-ms-date`. The gateway recomputes the signature (with the signing both sides share,
//! `engine::remote::signing`) and compares in constant time; here are the checks only a
//! server makes: the header's form and the date's skew.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};

pub use crate::engine::remote::signing::{
    EMULATOR_KEY, MasterKey, Signed, percent_decode, percent_encode,
};

/// How far a request's date may be from the gateway's clock, as the service allows.
pub const MAX_CLOCK_SKEW_SECS: i64 = 15 * 60;

/// Why a request's authorization was refused; the message is safe to send back (it never
/// holds the key or the expected signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// The gateway's check of a request's signature.
pub trait Verify {
    /// Checks a request's `authorization` header against what it signs, and its date
    /// against `now`.
    fn verify(
        &self,
        authorization: Option<&str>,
        signed: Signed<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), Refused>;
}

impl Verify for MasterKey {
    fn verify(
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
            self.signed_by(
                Signed {
                    resource_link: link,
                    ..signed
                },
                &tag,
            )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(date: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc2822(date)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn accepts_the_documented_vector() {
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
        let header = key.authorization(signed);
        assert_eq!(key.verify(Some(&header), signed, at(signed.date)), Ok(()));
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
}
