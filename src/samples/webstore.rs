//! The e-commerce web store of the Cosmos DB modelling guides ("CosmicWorks"), generated
//! once and written in two designs:
//!
//! - **relational**: one container per table, each partitioned by `/id` — `customer`,
//!   `customerAddress`, `customerPassword`, `product`, `productCategory`, `productTag`,
//!   `productTags` (the many-to-many link), `salesOrder`, `salesOrderDetail`.
//! - **denormalized**: `customer` by `/customerId` holds each customer (addresses and
//!   password embedded, `salesOrderCount`) and their sales orders (details embedded), told
//!   apart by `type`; `product` by `/categoryId` carries its category name and tag names;
//!   `productMeta` by `/type` holds the categories and tags.
//!
//! Categories and tags come from the bundled catalog (`sample-data/vocab/catalog.json`)
//! with fixed ids; products and customers are pure functions of the seed and their index,
//! so both designs hold the same customers, orders and products.

use serde::Serialize;

use super::rng::Rng;
use super::vocab::{Vocabulary, epoch_millis, hex, iso_millis, vocabulary};
use super::{Sink, Writer};
use crate::error::{Error, Result};

/// Customers and products at scale 1.
pub const BASE_CUSTOMERS: f64 = 400.0;
pub const BASE_PRODUCTS: f64 = 150.0;
/// Orders per customer are skewed towards few, at most this many.
pub const MAX_ORDERS: u64 = 10;
pub const DETAILS_PER_ORDER: (u64, u64) = (1, 5);
pub const ADDRESSES_PER_CUSTOMER: (u64, u64) = (1, 3);
pub const TAGS_PER_PRODUCT: (u64, u64) = (1, 4);

const START_MS: i64 = epoch_millis(2021, 1, 1);
const END_MS: i64 = epoch_millis(2025, 6, 1);
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    Relational,
    Denormalized,
}

impl Design {
    pub fn parse(s: &str) -> Result<Design> {
        match s {
            "relational" => Ok(Design::Relational),
            "denormalized" => Ok(Design::Denormalized),
            other => Err(Error::internal(format!(
                "the webstore generator has designs relational and denormalized, not {other:?}"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Product {
    pub id: String,
    /// Index into the catalog's categories.
    pub category: usize,
    pub sku: String,
    pub name: String,
    pub description: String,
    pub price: f64,
    /// Indices into the catalog's tags, with the id of each `productTags` link row.
    pub tags: Vec<(usize, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Customer {
    pub id: String,
    pub title: Option<&'static str>,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone: String,
    pub creation_ms: i64,
    pub addresses: Vec<Address>,
    pub password_hash: String,
    pub password_salt: String,
    pub orders: Vec<Order>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Address {
    /// The `customerAddress` row id (the embedded copy has none).
    pub id: String,
    pub line1: String,
    pub line2: Option<String>,
    pub city: String,
    pub state: String,
    pub country: String,
    pub zip: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub id: String,
    pub order_ms: i64,
    /// Not yet shipped when `None`.
    pub ship_ms: Option<i64>,
    pub details: Vec<Detail>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// The `salesOrderDetail` row id.
    pub id: String,
    /// Index into the products.
    pub product: usize,
    pub quantity: u64,
}

/// The web store generator for one design.
#[derive(Debug, Clone)]
pub struct Webstore {
    seed: u64,
    customers: u64,
    products: u64,
    design: Design,
}

impl Webstore {
    pub fn new(seed: u64, customers: u64, products: u64, design: Design) -> Webstore {
        Webstore {
            seed,
            customers: customers.max(1),
            products: products.max(1),
            design,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many customers the store has (at least one).
    pub fn customers(&self) -> u64 {
        self.customers
    }

    /// How many products the store sells (at least one).
    pub fn products(&self) -> u64 {
        self.products
    }

    pub fn design(&self) -> Design {
        self.design
    }

    /// Product `index` (`0..products`).
    pub fn product(&self, index: u64) -> Result<Product> {
        let v = vocabulary()?;
        let cat = &v.catalog;
        let mut r = Rng::derive(self.seed, "webstore.product", index);
        let id = r.uuid();
        let category = r.below(cat.categories.len() as u64) as usize;
        let c = &cat.categories[category];
        let kind = Vocabulary::pick(&mut r, &c.products);
        let adjective = Vocabulary::pick(&mut r, &cat.product_adjectives);
        let color = Vocabulary::pick(&mut r, &cat.colors);
        // Bikes and clothing come in sizes; a size is part of what is sold.
        let sized = c.name.starts_with("Bikes") || c.name.starts_with("Clothing");
        let size = sized.then(|| Vocabulary::pick(&mut r, &cat.sizes));
        let name = match size {
            Some(s) => format!("{adjective} {kind} - {color}, {s}"),
            None => format!("{adjective} {kind} - {color}"),
        };
        let color_code: String = color.chars().take(3).collect::<String>().to_uppercase();
        let sku = match size {
            Some(s) => format!("{}-{index:05}-{color_code}-{s}", c.sku_prefix),
            None => format!("{}-{index:05}-{color_code}", c.sku_prefix),
        };
        let [lo, hi] = c.price_range;
        let price = r.between(u64::from(lo), u64::from(hi)) as f64 + 0.99;
        let description = v.sentence(&mut r, 8, 20);
        let n_tags = r.between(TAGS_PER_PRODUCT.0, TAGS_PER_PRODUCT.1);
        let tags = r
            .distinct(cat.tags.len() as u64, n_tags)
            .into_iter()
            .map(|t| (t as usize, r.uuid()))
            .collect();
        Ok(Product {
            id,
            category,
            sku,
            name,
            description,
            price,
            tags,
        })
    }

    /// Customer `index` (`0..customers`) with addresses, password and orders.
    pub fn customer(&self, index: u64) -> Result<Customer> {
        let v = vocabulary()?;
        let p = &v.people;
        let mut r = Rng::derive(self.seed, "webstore.customer", index);
        let id = r.uuid();
        let title = r
            .chance(0.4)
            .then(|| *r.pick(&["Mr.", "Ms.", "Mx.", "Dr."]).unwrap_or(&"Mx."));
        let first_name = Vocabulary::pick(&mut r, &p.first_names).to_string();
        let last_name = Vocabulary::pick(&mut r, &p.last_names).to_string();
        let domain = Vocabulary::pick(&mut r, &p.email_domains);
        let email = format!(
            "{}.{}{index}@{domain}",
            first_name.to_lowercase(),
            last_name.to_lowercase()
        );
        let phone = format!("+1-{}-555-{:04}", r.between(201, 989), r.below(10_000));
        let creation_ms = START_MS + r.below(((END_MS - START_MS) * 3 / 4) as u64) as i64;
        let addresses = (0..r.between(ADDRESSES_PER_CUSTOMER.0, ADDRESSES_PER_CUSTOMER.1))
            .map(|_| address(&mut r, v))
            .collect();
        let password_hash = hex(&mut r, 32);
        let password_salt = hex(&mut r, 8);
        let mut orders: Vec<Order> = (0..r.skewed(MAX_ORDERS))
            .map(|_| {
                let order_ms = creation_ms + r.below((END_MS - creation_ms) as u64) as i64;
                let ship_ms = Some(
                    order_ms + r.between(1, 6) as i64 * DAY_MS - r.below(DAY_MS as u64 / 2) as i64,
                )
                .filter(|s| *s < END_MS);
                let id = r.uuid();
                let n = r.between(DETAILS_PER_ORDER.0, DETAILS_PER_ORDER.1);
                let details = r
                    .distinct(self.products, n)
                    .into_iter()
                    .map(|product| Detail {
                        id: r.uuid(),
                        product: product as usize,
                        quantity: 1 + r.skewed(3),
                    })
                    .collect();
                Order {
                    id,
                    order_ms,
                    ship_ms,
                    details,
                }
            })
            .collect();
        orders.sort_by_key(|o| o.order_ms);
        Ok(Customer {
            id,
            title,
            first_name,
            last_name,
            email,
            phone,
            creation_ms,
            addresses,
            password_hash,
            password_salt,
            orders,
        })
    }

    /// Items per generator stream, exactly (customers are cheap to generate, so this
    /// generates them without serializing anything).
    pub fn counts(&self) -> Result<Vec<(&'static str, u64)>> {
        let v = vocabulary()?;
        let (categories, tags) = (
            v.catalog.categories.len() as u64,
            v.catalog.tags.len() as u64,
        );
        let (mut addresses, mut orders, mut details, mut links) = (0, 0, 0, 0);
        for i in 0..self.products {
            links += self.product(i)?.tags.len() as u64;
        }
        for i in 0..self.customers {
            let c = self.customer(i)?;
            addresses += c.addresses.len() as u64;
            orders += c.orders.len() as u64;
            details += c.orders.iter().map(|o| o.details.len() as u64).sum::<u64>();
        }
        Ok(match self.design {
            Design::Relational => vec![
                ("customer", self.customers),
                ("customerAddress", addresses),
                ("customerPassword", self.customers),
                ("product", self.products),
                ("productCategory", categories),
                ("productTag", tags),
                ("productTags", links),
                ("salesOrder", orders),
                ("salesOrderDetail", details),
            ],
            Design::Denormalized => vec![
                ("customer", self.customers + orders),
                ("product", self.products),
                ("productMeta", categories + tags),
            ],
        })
    }

    /// Writes every item of this design to `sink`: the catalog, then customer by customer.
    pub fn run(&self, sink: &mut dyn Sink) -> Result<()> {
        let v = vocabulary()?;
        let cat = &v.catalog;
        let mut w = Writer::new(sink);
        // The denormalized design keeps categories and tags together, told apart by type.
        let denorm = self.design == Design::Denormalized;
        let (cat_stream, tag_stream) = match self.design {
            Design::Relational => ("productCategory", "productTag"),
            Design::Denormalized => ("productMeta", "productMeta"),
        };
        for c in &cat.categories {
            let kind = denorm.then_some("category");
            w.emit(
                cat_stream,
                &MetaDoc {
                    id: &c.id,
                    kind,
                    name: &c.name,
                },
            )?;
        }
        for t in &cat.tags {
            let kind = denorm.then_some("tag");
            w.emit(
                tag_stream,
                &MetaDoc {
                    id: &t.id,
                    kind,
                    name: &t.name,
                },
            )?;
        }
        let products: Vec<Product> = (0..self.products)
            .map(|i| self.product(i))
            .collect::<Result<_>>()?;
        for p in &products {
            self.emit_product(&mut w, p)?;
        }
        for i in 0..self.customers {
            let c = self.customer(i)?;
            match self.design {
                Design::Relational => emit_relational_customer(&mut w, &c, &products)?,
                Design::Denormalized => emit_denormalized_customer(&mut w, &c, &products)?,
            }
        }
        Ok(())
    }

    fn emit_product(&self, w: &mut Writer, p: &Product) -> Result<()> {
        let cat = &vocabulary()?.catalog;
        let category = &cat.categories[p.category];
        let denorm = self.design == Design::Denormalized;
        w.emit(
            "product",
            &ProductDoc {
                id: &p.id,
                category_id: &category.id,
                category_name: denorm.then_some(category.name.as_str()),
                sku: &p.sku,
                name: &p.name,
                description: &p.description,
                price: p.price,
                tags: denorm.then(|| {
                    p.tags
                        .iter()
                        .map(|(t, _)| TagRef {
                            id: &cat.tags[*t].id,
                            name: &cat.tags[*t].name,
                        })
                        .collect()
                }),
            },
        )?;
        if !denorm {
            for (t, link_id) in &p.tags {
                w.emit(
                    "productTags",
                    &ProductTagLink {
                        id: link_id,
                        product_id: &p.id,
                        tag_id: &cat.tags[*t].id,
                    },
                )?;
            }
        }
        Ok(())
    }
}

fn address(r: &mut Rng, v: &Vocabulary) -> Address {
    let p = &v.people;
    let street = Vocabulary::pick(r, &p.streets);
    let line1 = format!("{} {street}", r.between(1, 2400));
    let line2 = r.chance(0.25).then(|| format!("Apt {}", r.between(1, 60)));
    let city = r.pick(&p.cities);
    let zip_prefix = city.map_or("", |c| c.zip_prefix.as_str());
    let zip_digits = 5usize.saturating_sub(zip_prefix.len()).max(1);
    let zip = format!(
        "{zip_prefix}{:0zip_digits$}",
        r.below(10u64.pow(zip_digits as u32))
    );
    Address {
        id: r.uuid(),
        line1,
        line2,
        city: city.map_or_else(String::new, |c| c.city.clone()),
        state: city.map_or_else(String::new, |c| c.state.clone()),
        country: city.map_or_else(String::new, |c| c.country.clone()),
        zip,
    }
}

fn emit_relational_customer(w: &mut Writer, c: &Customer, products: &[Product]) -> Result<()> {
    w.emit("customer", &CustomerDoc::new(c, None))?;
    for a in &c.addresses {
        w.emit("customerAddress", &AddressDoc::new(a, Some((&a.id, &c.id))))?;
    }
    w.emit(
        "customerPassword",
        &PasswordDoc {
            id: Some(&c.id),
            hash: &c.password_hash,
            salt: &c.password_salt,
        },
    )?;
    for o in &c.orders {
        w.emit("salesOrder", &OrderDoc::new(c, o, None))?;
        for d in &o.details {
            w.emit(
                "salesOrderDetail",
                &DetailDoc::new(d, Some((&d.id, &o.id)), products),
            )?;
        }
    }
    Ok(())
}

fn emit_denormalized_customer(w: &mut Writer, c: &Customer, products: &[Product]) -> Result<()> {
    let embedded = Embedded {
        addresses: c
            .addresses
            .iter()
            .map(|a| AddressDoc::new(a, None))
            .collect(),
        password: PasswordDoc {
            id: None,
            hash: &c.password_hash,
            salt: &c.password_salt,
        },
        sales_order_count: c.orders.len() as u64,
    };
    w.emit("customer", &CustomerDoc::new(c, Some(embedded)))?;
    for o in &c.orders {
        let details = o
            .details
            .iter()
            .map(|d| DetailDoc::new(d, None, products))
            .collect();
        w.emit("customer", &OrderDoc::new(c, o, Some(details)))?;
    }
    Ok(())
}

#[derive(Serialize)]
struct MetaDoc<'a> {
    id: &'a str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    name: &'a str,
}

#[derive(Serialize)]
struct TagRef<'a> {
    id: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProductDoc<'a> {
    id: &'a str,
    category_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category_name: Option<&'a str>,
    sku: &'a str,
    name: &'a str,
    description: &'a str,
    price: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<TagRef<'a>>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProductTagLink<'a> {
    id: &'a str,
    product_id: &'a str,
    tag_id: &'a str,
}

/// A customer; the denormalized design adds the type discriminator, the partition key
/// `customerId` and the embedded parts.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomerDoc<'a> {
    id: &'a str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    customer_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    first_name: &'a str,
    last_name: &'a str,
    email_address: &'a str,
    phone_number: &'a str,
    creation_date: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    embedded: Option<Embedded<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Embedded<'a> {
    addresses: Vec<AddressDoc<'a>>,
    password: PasswordDoc<'a>,
    sales_order_count: u64,
}

impl<'a> CustomerDoc<'a> {
    fn new(c: &'a Customer, embedded: Option<Embedded<'a>>) -> CustomerDoc<'a> {
        let denorm = embedded.is_some();
        CustomerDoc {
            id: &c.id,
            kind: denorm.then_some("customer"),
            customer_id: denorm.then_some(c.id.as_str()),
            title: c.title,
            first_name: &c.first_name,
            last_name: &c.last_name,
            email_address: &c.email,
            phone_number: &c.phone,
            creation_date: iso_millis(c.creation_ms),
            embedded,
        }
    }
}

/// An address row (`id`, `customerId`) or its embedded copy (neither).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AddressDoc<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    customer_id: Option<&'a str>,
    address_line1: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    address_line2: Option<&'a str>,
    city: &'a str,
    state: &'a str,
    country: &'a str,
    zip_code: &'a str,
}

impl<'a> AddressDoc<'a> {
    fn new(a: &'a Address, row: Option<(&'a str, &'a str)>) -> AddressDoc<'a> {
        AddressDoc {
            id: row.map(|r| r.0),
            customer_id: row.map(|r| r.1),
            address_line1: &a.line1,
            address_line2: a.line2.as_deref(),
            city: &a.city,
            state: &a.state,
            country: &a.country,
            zip_code: &a.zip,
        }
    }
}

/// The password row's id is the customer's (1:1), as in the relational model.
#[derive(Serialize)]
struct PasswordDoc<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    hash: &'a str,
    salt: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OrderDoc<'a> {
    id: &'a str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    customer_id: &'a str,
    order_date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ship_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Vec<DetailDoc<'a>>>,
}

impl<'a> OrderDoc<'a> {
    fn new(c: &'a Customer, o: &'a Order, details: Option<Vec<DetailDoc<'a>>>) -> OrderDoc<'a> {
        OrderDoc {
            id: &o.id,
            kind: details.is_some().then_some("salesOrder"),
            customer_id: &c.id,
            order_date: iso_millis(o.order_ms),
            ship_date: o.ship_ms.map(iso_millis),
            details,
        }
    }
}

/// A detail row (`id`, `salesOrderId`) or its embedded copy (neither); the product's
/// sku, name and price are copied in at order time in both designs, as in the guide.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DetailDoc<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sales_order_id: Option<&'a str>,
    sku: &'a str,
    name: &'a str,
    price: f64,
    quantity: u64,
}

impl<'a> DetailDoc<'a> {
    fn new(
        d: &'a Detail,
        row: Option<(&'a str, &'a str)>,
        products: &'a [Product],
    ) -> DetailDoc<'a> {
        let p = &products[d.product];
        DetailDoc {
            id: row.map(|r| r.0),
            sales_order_id: row.map(|r| r.1),
            sku: &p.sku,
            name: &p.name,
            price: p.price,
            quantity: d.quantity,
        }
    }
}
