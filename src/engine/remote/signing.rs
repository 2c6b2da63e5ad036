//! Master-key signatures (reference/gateway.md §1), shared by the two sides that speak the
//! REST protocol: the remote backend signs every request it sends, the gateway checks every
//! request it receives.
//!
//! A request is signed with HMAC-SHA256 over its verb, resource type, resource link and
//! date, keyed by the base64-decoded account key, and carries
//! `authorization: type=master&ver=1.0&sig=<base64>` (URL-encoded) with the date it signed
//! in `x-ms-date`. The key never leaves [`MasterKey`]: its `Debug` hides it, and nothing
//! here puts it in a message.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::hmac;

/// The well-known key of Microsoft's emulator, which SDK samples and test suites use for
/// local endpoints. Anyone can sign with it, so the gateway only accepts it on loopback.
pub const EMULATOR_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

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
    /// Parses a base64 account key. The message of a refusal never quotes the text.
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

    /// Whether `tag` (a decoded signature) is this key's signature of `signed`, compared in
    /// constant time.
    pub fn signed_by(&self, signed: Signed<'_>, tag: &[u8]) -> bool {
        hmac::verify(&self.key, string_to_sign(signed).as_bytes(), tag).is_ok()
    }
}

/// `verb\ntype\nlink\ndate\n\n`, verb, type and date lower-cased, the link as it is.
fn string_to_sign(s: Signed<'_>) -> String {
    format!(
        "{}\n{}\n{}\n{}\n\n",
        s.verb.to_lowercase(),
        s.resource_type.to_lowercase(),
        s.resource_link,
        s.date.to_lowercase()
    )
}

/// The resource type and link a request to `path` signs (reference/gateway.md §1): an odd
/// number of segments is a feed (type = the last, link = the rest), an even number one
/// resource (type = the second-last, link = the whole path); `/` is type and link "".
/// `path` is made of unencoded segments.
pub fn resource_of(path: &str) -> (String, String) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.len() {
        0 => (String::new(), String::new()),
        n if n % 2 == 1 => (segments[n - 1].to_string(), segments[..n - 1].join("/")),
        n => (segments[n - 2].to_string(), segments.join("/")),
    }
}

/// The current time as `x-ms-date` takes it: RFC 1123 in GMT.
pub fn http_date(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
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

/// Percent-encodes everything but unreserved characters (RFC 3986).
pub fn percent_encode(s: &str) -> String {
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
        assert_eq!(
            key.authorization(signed),
            "type%3Dmaster%26ver%3D1.0%26sig%3Dc09PEVJrgp2uQRkr934kFbTqhByc7TVr3OHyqlu%2Bc%2Bc%3D"
        );
    }

    #[test]
    fn emulator_key_vectors() {
        let key = MasterKey::emulator();
        let date = "Sat, 21 Nov 2026 09:31:12 GMT";
        let cases = [
            (
                "GET",
                "dbs/MyDb/colls/MyColl/docs/Item1",
                "aXCQXrihs5CLn0EE/LE7Da7T/fEfgQORsoMahDV4uGE=",
            ),
            (
                "POST",
                "dbs/MyDb/colls/MyColl/docs",
                "hnCyynJQ3MTNkHKFkiYA3KXWmKMsT+bcSVaMwiNhQys=",
            ),
            ("GET", "dbs", "2J0WWQ/5m9e9FCS9DoISXRUlFUiUKxR4W+nlOIHkuuM="),
            (
                "GET",
                "/dbs/MyDb/colls/MyColl/pkranges/",
                "cjbwj4wOXCeS/ZoC7xENQ/+nfdK07DxAdMWarXcPuxM=",
            ),
        ];
        for (verb, path, sig) in cases {
            // The type and link come from the path, as the client derives them.
            let (resource_type, resource_link) = resource_of(path);
            let signed = Signed {
                verb,
                resource_type: &resource_type,
                resource_link: &resource_link,
                date,
            };
            assert_eq!(key.sign(signed), sig, "{verb} {path}");
            let tag = STANDARD.decode(sig).unwrap();
            assert!(key.signed_by(signed, &tag));
        }
        assert!(key.is_emulator_key());
    }

    #[test]
    fn resource_type_and_link_follow_the_path() {
        assert_eq!(resource_of(""), (String::new(), String::new()));
        assert_eq!(resource_of("/"), (String::new(), String::new()));
        assert_eq!(resource_of("dbs"), ("dbs".into(), String::new()));
        assert_eq!(resource_of("dbs/D"), ("dbs".into(), "dbs/D".into()));
        assert_eq!(
            resource_of("dbs/D/colls/C/docs"),
            ("docs".into(), "dbs/D/colls/C".into())
        );
        assert_eq!(
            resource_of("offers/Ab1="),
            ("offers".into(), "offers/Ab1=".into())
        );
    }

    #[test]
    fn the_date_is_rfc_1123_in_gmt() {
        let t = chrono::DateTime::parse_from_rfc3339("2017-04-27T00:51:12Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(http_date(t), "Thu, 27 Apr 2017 00:51:12 GMT");
    }

    #[test]
    fn a_signature_depends_on_every_part() {
        let key = MasterKey::emulator();
        let base = Signed {
            verb: "GET",
            resource_type: "docs",
            resource_link: "dbs/a/colls/b/docs/c",
            date: "Sat, 21 Nov 2026 09:31:12 GMT",
        };
        let sig = key.sign(base);
        let variants = [
            Signed {
                verb: "PUT",
                ..base
            },
            Signed {
                resource_type: "colls",
                ..base
            },
            Signed {
                resource_link: "dbs/a/colls/b/docs/C",
                ..base
            },
            Signed {
                date: "Sat, 21 Nov 2026 09:31:13 GMT",
                ..base
            },
        ];
        for v in variants {
            assert_ne!(key.sign(v), sig, "{v:?}");
        }
        // Case of the verb and the date does not matter; the link's does.
        assert_eq!(
            key.sign(Signed {
                verb: "get",
                ..base
            }),
            sig
        );
    }

    #[test]
    fn keys_are_checked_and_never_printed() {
        assert!(MasterKey::parse("not base64!").is_err());
        assert!(MasterKey::parse("c2hvcnQ=").is_err());
        let e = MasterKey::parse("c2hvcnQ=").unwrap_err();
        assert!(!e.contains("c2hvcnQ"), "{e}");
        assert_eq!(format!("{:?}", MasterKey::emulator()), "MasterKey(..)");
    }
}
