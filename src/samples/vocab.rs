//! The vocabularies the generators draw from (`sample-data/vocab/`), parsed once, and the
//! text they make: titles, sentences, paragraphs, names and timestamps.
//!
//! Everything here is a pure function of a [`Rng`], so generated text is as deterministic as
//! the numbers.

use std::sync::OnceLock;

use serde::Deserialize;

use super::registry;
use super::rng::Rng;
use crate::error::{Error, Result};

/// People and places: names, streets and cities.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct People {
    pub first_names: Vec<String>,
    pub last_names: Vec<String>,
    pub streets: Vec<String>,
    pub cities: Vec<City>,
    pub email_domains: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct City {
    pub city: String,
    pub state: String,
    pub country: String,
    pub zip_prefix: String,
}

/// The web store's fixed catalog vocabulary: categories and tags keep their ids across
/// seeds and scales, so both webstore designs (and later renames) agree on them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    pub categories: Vec<CategoryDef>,
    pub tags: Vec<TagDef>,
    pub product_adjectives: Vec<String>,
    pub colors: Vec<String>,
    pub sizes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryDef {
    pub id: String,
    pub name: String,
    pub sku_prefix: String,
    /// Product kinds sold in the category ("Road Bike", "Chain", ...).
    pub products: Vec<String>,
    /// Lowest and highest list price.
    pub price_range: [u32; 2],
}

#[derive(Debug, Deserialize)]
pub struct TagDef {
    pub id: String,
    pub name: String,
}

pub struct Vocabulary {
    pub words: Vec<&'static str>,
    pub people: People,
    pub catalog: Catalog,
}

/// The parsed vocabularies (parsed on first use; a broken embedded file is a 500).
pub fn vocabulary() -> Result<&'static Vocabulary> {
    static VOCAB: OnceLock<Result<Vocabulary>> = OnceLock::new();
    VOCAB.get_or_init(parse).as_ref().map_err(Clone::clone)
}

fn parse() -> Result<Vocabulary> {
    let words: Vec<&'static str> = registry::require("vocab/words.txt")?
        .lines()
        .map(str::trim)
        .filter(|w| !w.is_empty() && !w.starts_with('#'))
        .collect();
    let people: People = registry::json("vocab/people.json")?;
    let catalog: Catalog = registry::json("vocab/catalog.json")?;
    let empty = [
        ("words", words.is_empty()),
        ("first names", people.first_names.is_empty()),
        ("last names", people.last_names.is_empty()),
        ("streets", people.streets.is_empty()),
        ("cities", people.cities.is_empty()),
        ("email domains", people.email_domains.is_empty()),
        ("categories", catalog.categories.is_empty()),
        ("tags", catalog.tags.is_empty()),
        ("product adjectives", catalog.product_adjectives.is_empty()),
        ("colors", catalog.colors.is_empty()),
        ("sizes", catalog.sizes.is_empty()),
    ];
    if let Some((what, _)) = empty.iter().find(|(_, e)| *e) {
        return Err(Error::internal(format!(
            "the bundled vocabulary has no {what}"
        )));
    }
    if let Some(c) = catalog
        .categories
        .iter()
        .find(|c| c.products.is_empty() || c.price_range[0] > c.price_range[1])
    {
        return Err(Error::internal(format!(
            "catalog category {:?} needs products and a low-to-high price range",
            c.name
        )));
    }
    Ok(Vocabulary {
        words,
        people,
        catalog,
    })
}

impl Vocabulary {
    /// Picks from a list the vocabulary checked to be non-empty.
    pub fn pick<'a>(rng: &mut Rng, items: &'a [String]) -> &'a str {
        rng.pick(items).map_or("", String::as_str)
    }

    fn word(&self, rng: &mut Rng) -> &'static str {
        rng.pick(&self.words).copied().unwrap_or("word")
    }

    /// `min..=max` words, the first capitalized, ending in a full stop (sometimes `?`/`!`).
    pub fn sentence(&self, rng: &mut Rng, min: u64, max: u64) -> String {
        let n = rng.between(min, max);
        let mut s = String::with_capacity(n as usize * 7);
        for i in 0..n {
            let w = self.word(rng);
            if i == 0 {
                push_capitalized(&mut s, w);
            } else {
                // A comma now and then breaks the rhythm like real prose.
                if i + 1 < n && i > 2 && rng.chance(0.08) {
                    s.push(',');
                }
                s.push(' ');
                s.push_str(w);
            }
        }
        s.push(match rng.below(20) {
            0 => '?',
            1 => '!',
            _ => '.',
        });
        s
    }

    /// `min..=max` sentences of 6–18 words.
    pub fn paragraph(&self, rng: &mut Rng, min: u64, max: u64) -> String {
        let n = rng.between(min, max);
        let mut p = String::new();
        for i in 0..n {
            if i > 0 {
                p.push(' ');
            }
            p.push_str(&self.sentence(rng, 6, 18));
        }
        p
    }

    /// Paragraphs joined by blank lines.
    pub fn paragraphs(&self, rng: &mut Rng, min: u64, max: u64) -> String {
        let n = rng.between(min, max);
        (0..n)
            .map(|_| self.paragraph(rng, 3, 7))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// A title of `min..=max` capitalized words.
    pub fn title(&self, rng: &mut Rng, min: u64, max: u64) -> String {
        let n = rng.between(min, max);
        let mut t = String::new();
        for i in 0..n {
            if i > 0 {
                t.push(' ');
            }
            push_capitalized(&mut t, self.word(rng));
        }
        t
    }
}

fn push_capitalized(s: &mut String, w: &str) {
    let mut chars = w.chars();
    if let Some(first) = chars.next() {
        s.extend(first.to_uppercase());
        s.push_str(chars.as_str());
    }
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds
/// (`2024-03-05T14:22:31.123Z`), the format the service's date functions use. Written out
/// (days-to-civil) so no formatting library can change the bytes.
pub fn iso_millis(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Milliseconds since the epoch of a UTC calendar date at midnight.
pub const fn epoch_millis(y: i64, m: i64, d: i64) -> i64 {
    days_from_civil(y, m, d) * 86_400_000
}

/// Howard Hinnant's `civil_from_days`: day number since 1970-01-01 to (year, month, day).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The inverse of [`civil_from_days`].
const fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Lower-case hex of `n` random bytes (password hashes and salts).
pub fn hex(rng: &mut Rng, n: usize) -> String {
    let mut s = String::with_capacity(n * 2);
    while s.len() < n * 2 {
        s.push_str(&format!("{:016x}", rng.next_u64()));
    }
    s.truncate(n * 2);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_like_the_service() {
        assert_eq!(iso_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_millis(1_709_648_551_123), "2024-03-05T14:22:31.123Z");
        assert_eq!(
            iso_millis(epoch_millis(2024, 2, 29) + 1),
            "2024-02-29T00:00:00.001Z"
        );
        assert_eq!(epoch_millis(1970, 1, 1), 0);
    }

    #[test]
    fn the_bundled_vocabulary_parses() {
        let v = vocabulary().unwrap();
        assert!(v.words.len() > 200);
        let mut rng = Rng::new(5);
        let s = v.sentence(&mut rng, 6, 18);
        assert!(s.chars().next().unwrap().is_uppercase());
        assert!(s.ends_with(['.', '?', '!']));
        let t = v.title(&mut rng, 4, 9);
        assert!(t.split(' ').count() >= 4);
        assert_eq!(hex(&mut rng, 16).len(), 32);
    }
}
