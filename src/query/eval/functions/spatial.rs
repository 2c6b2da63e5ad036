//! Spatial built-ins over GeoJSON (geography, WGS-84): `ST_DISTANCE`, `ST_WITHIN`,
//! `ST_INTERSECTS`, `ST_ISVALID`, `ST_ISVALIDDETAILED` and `ST_AREA`, as documented per
//! function in MicrosoftDocs/azure-databases-docs (articles/cosmos-db/nosql/query/st-*.md) with
//! the examples of Azure-Samples/cosmos-db-nosql-query-samples.
//!
//! Supported types are the documented ones: Point, LineString, Polygon (with holes) and
//! MultiPolygon. Edges are great-circle arcs and topology (within, intersects) is computed on
//! the unit sphere. Measurements use the WGS-84 ellipsoid, which is what reproduces the
//! documented outputs: distances are geodesics (Vincenty's inverse formula; the docs' two
//! distances are matched to 8e-5 m and 0.08 m), areas are taken on the authalic sphere of the
//! ellipsoid (the docs' area is matched to 0.06 m² of 7.4e8 m²).
//!
//! As the pages say, a ring's interior is on its left: a counter-clockwise ring encloses the
//! small region, a clockwise one the rest of the globe. Holes always remove the smaller of the
//! two regions their ring separates, whatever their orientation.
//!
//! A non-object argument gives `undefined` everywhere; an invalid object gives `false` from
//! `ST_ISVALID` (with a reason from `ST_ISVALIDDETAILED`) and `undefined` elsewhere.

use std::f64::consts::{PI, TAU};
use std::sync::Arc;

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::Val;

pub const FUNCTIONS: &[FnSpec] = &[
    // Distance, within and intersects "benefit from a geospatial index"; the validity and
    // area pages do not mention the index.
    scalar("ST_DISTANCE", 2, 2, true, st_distance),
    scalar("ST_WITHIN", 2, 2, true, st_within),
    scalar("ST_INTERSECTS", 2, 2, true, st_intersects),
    scalar("ST_ISVALID", 1, 1, false, st_isvalid),
    scalar("ST_ISVALIDDETAILED", 1, 1, false, st_isvaliddetailed),
    scalar("ST_AREA", 1, 1, false, st_area),
];

/// WGS-84 semi-major axis (m) and flattening.
const WGS84_A: f64 = 6_378_137.0;
const WGS84_F: f64 = 1.0 / 298.257_223_563;
/// Angular tolerance on the unit sphere (about 6 µm on the ground) for "on a point/edge".
const TOL: f64 = 1e-12;

// ---------------------------------------------------------------------------------------------
// GeoJSON reading and validation

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos {
    lon: f64,
    lat: f64,
}

type Rings = Vec<Vec<Pos>>;

#[derive(Debug, Clone)]
enum Geo {
    Point(Pos),
    LineString(Vec<Pos>),
    Polygon(Rings),
    MultiPolygon(Vec<Rings>),
}

/// The geometry of a GeoJSON object, or why it is invalid; `None` for a non-object.
///
/// Reason strings: the latitude one and the unclosed-ring one are the service's, quoted on the
/// ST_ISVALIDDETAILED page and in its older spatial query article; the others are ours, written
/// in the same style, for conditions the docs do not show.
fn read(v: &Val) -> Option<Result<Geo, String>> {
    v.as_object()?;
    Some(read_object(v))
}

fn read_object(v: &Val) -> Result<Geo, String> {
    let kind = match v.get("type") {
        Val::Str(s) => s,
        _ => {
            return Err("The input is not valid GeoJSON because it has no \"type\" string.".into());
        }
    };
    let coordinates = v.get("coordinates");
    let shape_error = || {
        format!(
            "The {kind} input is not valid because its \"coordinates\" member does not have the \
             shape a {kind} requires."
        )
    };
    let array = |v: &Val| v.as_array().map(<[Val]>::to_vec).ok_or_else(shape_error);
    let positions = |v: &Val| -> Result<Vec<Pos>, String> {
        array(v)?.iter().map(|p| position(p, &kind)).collect()
    };
    let polygon = |v: &Val| -> Result<Rings, String> {
        let rings = array(v)?
            .iter()
            .map(&positions)
            .collect::<Result<Rings, String>>()?;
        check_rings(&rings, &kind)?;
        Ok(rings)
    };
    match &*kind {
        "Point" => Ok(Geo::Point(position(&coordinates, &kind)?)),
        "LineString" => {
            let line = positions(&coordinates)?;
            if line.len() < 2 {
                return Err(
                    "The LineString input is not valid because it has fewer than 2 \
                            points. A LineString must have at least 2 points."
                        .into(),
                );
            }
            Ok(Geo::LineString(line))
        }
        "Polygon" => Ok(Geo::Polygon(polygon(&coordinates)?)),
        // "A MultiPolygon is an array of zero or more Polygons."
        "MultiPolygon" => Ok(Geo::MultiPolygon(
            array(&coordinates)?
                .iter()
                .map(&polygon)
                .collect::<Result<_, _>>()?,
        )),
        other => Err(format!(
            "The GeoJSON type \"{other}\" is not supported. Supported types are Point, \
             LineString, Polygon and MultiPolygon."
        )),
    }
}

fn position(v: &Val, kind: &str) -> Result<Pos, String> {
    let coords: Option<Vec<f64>> = v
        .as_array()
        .and_then(|a| a.iter().map(Val::as_f64).collect());
    let (lon, lat) = match coords.as_deref() {
        // Longitude, latitude, then an optional altitude that geography ignores.
        Some([lon, lat, ..]) if lon.is_finite() && lat.is_finite() => (*lon, *lat),
        _ => {
            return Err(format!(
                "The {kind} input is not valid because a position is not an array of two or more \
                 numbers."
            ));
        }
    };
    // Latitude first, as the service's message for the documented example comes from it.
    if !(-90.0..=90.0).contains(&lat) {
        return Err("Latitude values must be between -90 and 90 degrees.".into());
    }
    if !(-180.0..=180.0).contains(&lon) {
        return Err("Longitude values must be between -180 and 180 degrees.".into());
    }
    Ok(Pos { lon, lat })
}

fn check_rings(rings: &Rings, kind: &str) -> Result<(), String> {
    if rings.is_empty() {
        return Err(format!(
            "The {kind} input is not valid because a polygon has no rings."
        ));
    }
    for (i, ring) in rings.iter().enumerate() {
        let number = i + 1;
        if ring.first() != ring.last() || ring.is_empty() {
            return Err(format!(
                "The {kind} input is not valid because the start and end points of the ring \
                 number {number} are not the same. Each ring of a polygon must have the same \
                 start and end points."
            ));
        }
        if ring.len() < 4 {
            return Err(format!(
                "The {kind} input is not valid because the ring number {number} has fewer than 4 \
                 points. Each ring of a polygon must have at least 4 points."
            ));
        }
    }
    Ok(())
}

/// The full validity check of `ST_ISVALID`: the structure above plus simple rings (no ring
/// crosses or touches itself). Crossings between different rings are not checked.
fn validate(v: &Val) -> Option<Result<(), String>> {
    let geo = match read(v)? {
        Ok(geo) => geo,
        Err(reason) => return Some(Err(reason)),
    };
    let (kind, polygons): (&str, Vec<&Rings>) = match &geo {
        Geo::Polygon(rings) => ("Polygon", vec![rings]),
        Geo::MultiPolygon(polys) => ("MultiPolygon", polys.iter().collect()),
        Geo::Point(_) | Geo::LineString(_) => return Some(Ok(())),
    };
    for rings in polygons {
        for (i, ring) in rings.iter().enumerate() {
            if ring_self_intersects(&Ring::new(ring).verts) {
                return Some(Err(format!(
                    "The {kind} input is not valid because the ring number {} intersects itself.",
                    i + 1
                )));
            }
        }
    }
    Some(Ok(()))
}

fn ring_self_intersects(verts: &[Pt]) -> bool {
    let n = verts.len();
    if n < 3 {
        return n > 0;
    }
    let edge = |i: usize| (verts[i].v, verts[(i + 1) % n].v);
    (0..n).any(|i| {
        // Edges sharing a vertex meet there by construction; skip those pairs.
        (i + 2..n).filter(|&j| !(i == 0 && j == n - 1)).any(|j| {
            let ((a, b), (c, d)) = (edge(i), edge(j));
            !arc_intersections(a, b, c, d).is_empty()
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Vectors on the unit sphere

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn scale(a: V3, k: f64) -> V3 {
    [a[0] * k, a[1] * k, a[2] * k]
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

fn unit(a: V3) -> Option<V3> {
    let n = norm(a);
    (n > TOL).then(|| scale(a, 1.0 / n))
}

fn to_vec(p: Pos) -> V3 {
    let (lon, lat) = (p.lon.to_radians(), p.lat.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

fn to_pos(v: V3) -> Pos {
    Pos {
        lon: v[1].atan2(v[0]).to_degrees(),
        lat: v[2].clamp(-1.0, 1.0).asin().to_degrees(),
    }
}

/// Angle between two unit vectors, accurate for tiny and near-straight angles alike.
fn angle(a: V3, b: V3) -> f64 {
    norm(cross(a, b)).atan2(dot(a, b))
}

fn same(a: V3, b: V3) -> bool {
    norm(sub(a, b)) <= TOL
}

/// Whether `x`, on the great circle with unit normal `n` through `a` and `b`, lies on the minor
/// arc from `a` to `b`.
fn between(x: V3, a: V3, b: V3, n: V3) -> bool {
    dot(cross(a, x), n) >= -TOL && dot(cross(x, b), n) >= -TOL
}

fn on_arc(p: V3, a: V3, b: V3) -> bool {
    if same(p, a) || same(p, b) {
        return true;
    }
    match unit(cross(a, b)) {
        Some(n) => dot(p, n).abs() <= TOL && between(p, a, b, n),
        None => false,
    }
}

/// Points where arcs `ab` and `cd` meet, touching included; for arcs on one great circle, the
/// ends of their overlap.
fn arc_intersections(a: V3, b: V3, c: V3, d: V3) -> Vec<V3> {
    let (n1, n2) = match (unit(cross(a, b)), unit(cross(c, d))) {
        (None, _) => return if on_arc(a, c, d) { vec![a] } else { vec![] },
        (_, None) => return if on_arc(c, a, b) { vec![c] } else { vec![] },
        (Some(n1), Some(n2)) => (n1, n2),
    };
    match unit(cross(n1, n2)) {
        None => {
            let mut ends = Vec::new();
            for (p, (x, y)) in [(a, (c, d)), (b, (c, d)), (c, (a, b)), (d, (a, b))] {
                if on_arc(p, x, y) {
                    ends.push(p);
                }
            }
            ends
        }
        Some(x) => [x, scale(x, -1.0)]
            .into_iter()
            .filter(|&p| between(p, a, b, n1) && between(p, c, d, n2))
            .take(1)
            .collect(),
    }
}

/// The point `t` radians along the great circle from `a` towards `b`.
fn along(a: V3, b: V3, t: f64) -> V3 {
    match unit(cross(a, b)).and_then(|n| unit(cross(n, a))) {
        Some(dir) => {
            let p = [
                a[0] * t.cos() + dir[0] * t.sin(),
                a[1] * t.cos() + dir[1] * t.sin(),
                a[2] * t.cos() + dir[2] * t.sin(),
            ];
            unit(p).unwrap_or(a)
        }
        None => a,
    }
}

// ---------------------------------------------------------------------------------------------
// Shapes

#[derive(Debug, Clone, Copy)]
struct Pt {
    v: V3,
    p: Pos,
}

impl Pt {
    fn new(p: Pos) -> Pt {
        Pt { v: to_vec(p), p }
    }
}

/// A ring without its closing repeat and without consecutive duplicates.
#[derive(Debug, Clone)]
struct Ring {
    verts: Vec<Pt>,
    /// The region on the left is the smaller one (the ring is counter-clockwise around it).
    ccw: bool,
}

impl Ring {
    fn new(ring: &[Pos]) -> Ring {
        let mut verts: Vec<Pt> = Vec::with_capacity(ring.len());
        for &p in ring {
            let pt = Pt::new(p);
            if verts.last().is_none_or(|last| !same(last.v, pt.v)) {
                verts.push(pt);
            }
        }
        while verts.len() > 1
            && verts
                .first()
                .zip(verts.last())
                .is_some_and(|(f, l)| same(f.v, l.v))
        {
            verts.pop();
        }
        let ccw =
            verts.len() < 3 || left_area(&verts.iter().map(|p| p.v).collect::<Vec<_>>()) < TAU;
        Ring { verts, ccw }
    }

    fn edges(&self) -> impl Iterator<Item = (Pt, Pt)> + '_ {
        let n = self.verts.len();
        (0..if n > 1 { n } else { 0 }).map(move |i| (self.verts[i], self.verts[(i + 1) % n]))
    }

    /// Whether `p` is in the region the ring encloses counter-clockwise or clockwise, i.e. on
    /// the side away from `-p`: the sum of the angles the edges subtend at `p` is ±2π then.
    fn encircles(&self, p: V3) -> bool {
        if self.verts.len() < 3 {
            return false;
        }
        let tangent = |x: V3| sub(x, scale(p, dot(p, x)));
        let total: f64 = self
            .edges()
            .map(|(a, b)| {
                let (ta, tb) = (tangent(a.v), tangent(b.v));
                dot(p, cross(ta, tb)).atan2(dot(ta, tb))
            })
            .sum();
        (total / TAU).round() != 0.0
    }

    /// Whether `p` (not on the ring) is on the ring's left, its interior.
    fn inside(&self, p: V3) -> bool {
        self.encircles(p) == self.ccw
    }

    fn on_boundary(&self, p: V3) -> bool {
        self.edges().any(|(a, b)| on_arc(p, a.v, b.v))
    }
}

/// Area (steradians) of the region left of a closed path of great-circle arcs, by
/// Gauss–Bonnet: 2π minus the total turning. Loses precision for tiny regions, so it only
/// decides orientation and which multiple of 2π `signed_area` is off by.
fn left_area(verts: &[V3]) -> f64 {
    let n = verts.len();
    let turning: f64 = (0..n)
        .map(|i| {
            let (a, b, c) = (verts[(i + n - 1) % n], verts[i], verts[(i + 1) % n]);
            let t_in = cross(cross(a, b), b);
            let t_out = cross(cross(b, c), b);
            dot(b, cross(t_in, t_out)).atan2(dot(t_in, t_out))
        })
        .sum();
    (TAU - turning).rem_euclid(2.0 * TAU)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Interior,
    Boundary,
    Exterior,
}

#[derive(Debug, Clone)]
struct Polygon {
    outer: Ring,
    holes: Vec<Ring>,
}

impl Polygon {
    fn new(rings: &Rings) -> Polygon {
        let mut rings = rings.iter().map(|r| Ring::new(r));
        let outer = rings.next().unwrap_or(Ring {
            verts: Vec::new(),
            ccw: true,
        });
        Polygon {
            outer,
            holes: rings.collect(),
        }
    }

    fn rings(&self) -> impl Iterator<Item = &Ring> {
        std::iter::once(&self.outer).chain(&self.holes)
    }

    fn locate(&self, p: V3) -> Loc {
        if self.rings().any(|r| r.on_boundary(p)) {
            Loc::Boundary
        } else if self.outer.verts.len() >= 3
            && self.outer.inside(p)
            && !self.holes.iter().any(|h| h.encircles(p))
        {
            Loc::Interior
        } else {
            Loc::Exterior
        }
    }
}

#[derive(Debug, Clone)]
enum Shape {
    Point(Pt),
    Line(Vec<Pt>),
    Polygons(Vec<Polygon>),
}

impl Shape {
    fn new(geo: &Geo) -> Shape {
        match geo {
            Geo::Point(p) => Shape::Point(Pt::new(*p)),
            Geo::LineString(line) => Shape::Line(line.iter().map(|&p| Pt::new(p)).collect()),
            Geo::Polygon(rings) => Shape::Polygons(vec![Polygon::new(rings)]),
            Geo::MultiPolygon(polys) => Shape::Polygons(polys.iter().map(Polygon::new).collect()),
        }
    }

    fn vertices(&self) -> Vec<Pt> {
        match self {
            Shape::Point(p) => vec![*p],
            Shape::Line(line) => line.clone(),
            Shape::Polygons(polys) => polys
                .iter()
                .flat_map(|poly| poly.rings().flat_map(|r| r.verts.iter().copied()))
                .collect(),
        }
    }

    fn edges(&self) -> Vec<(Pt, Pt)> {
        match self {
            Shape::Point(_) => Vec::new(),
            Shape::Line(line) => line.windows(2).map(|w| (w[0], w[1])).collect(),
            Shape::Polygons(polys) => polys
                .iter()
                .flat_map(|poly| poly.rings().flat_map(Ring::edges))
                .collect(),
        }
    }

    /// Where `p` lies relative to the shape's interior and boundary (OGC: a line's boundary is
    /// its two ends unless it is closed; a point is all interior).
    fn locate(&self, p: V3) -> Loc {
        match self {
            Shape::Point(q) if same(p, q.v) => Loc::Interior,
            Shape::Point(_) => Loc::Exterior,
            Shape::Line(line) => {
                if !line.windows(2).any(|w| on_arc(p, w[0].v, w[1].v)) {
                    return Loc::Exterior;
                }
                match (line.first(), line.last()) {
                    (Some(f), Some(l)) if !same(f.v, l.v) && (same(p, f.v) || same(p, l.v)) => {
                        Loc::Boundary
                    }
                    _ => Loc::Interior,
                }
            }
            Shape::Polygons(polys) => {
                let mut found = Loc::Exterior;
                for poly in polys {
                    match poly.locate(p) {
                        Loc::Interior => return Loc::Interior,
                        Loc::Boundary => found = Loc::Boundary,
                        Loc::Exterior => {}
                    }
                }
                found
            }
        }
    }
}

fn intersects(a: &Shape, b: &Shape) -> bool {
    let (ea, eb) = (a.edges(), b.edges());
    ea.iter().any(|(p, q)| {
        eb.iter()
            .any(|(r, s)| !arc_intersections(p.v, q.v, r.v, s.v).is_empty())
    }) || a.vertices().iter().any(|p| b.locate(p.v) != Loc::Exterior)
        || b.vertices().iter().any(|p| a.locate(p.v) != Loc::Exterior)
}

/// Checks a path (segments of `a`'s line or rings) against `b`: every piece between the points
/// where it meets `b`'s boundary must be inside or on `b`. Returns `None` if some part is
/// outside, else whether some part is in `b`'s interior.
fn path_in(segments: &[(Pt, Pt)], b: &Shape) -> Option<bool> {
    let boundary = b.edges();
    let mut touches_interior = false;
    for &(a0, a1) in segments {
        let (start, end) = (a0.v, a1.v);
        let length = angle(start, end);
        let mut cuts = vec![0.0, length];
        for (c, d) in &boundary {
            cuts.extend(
                arc_intersections(start, end, c.v, d.v)
                    .into_iter()
                    .map(|x| angle(start, x)),
            );
        }
        cuts.sort_by(f64::total_cmp);
        let mut probes = vec![start, end];
        probes.extend(
            cuts.windows(2)
                .filter(|w| w[1] - w[0] > TOL)
                .map(|w| along(start, end, (w[0] + w[1]) / 2.0)),
        );
        for p in probes {
            match b.locate(p) {
                Loc::Exterior => return None,
                Loc::Interior => touches_interior = true,
                Loc::Boundary => {}
            }
        }
    }
    Some(touches_interior)
}

/// Whether every segment of `a` lies on segments of `b` (same great circle, overlapping spans
/// covering it).
fn line_on_line(a: &[Pt], b: &[Pt]) -> bool {
    a.windows(2).all(|w| {
        let (start, end) = (w[0].v, w[1].v);
        let Some(n) = unit(cross(start, end)) else {
            return b.windows(2).any(|s| on_arc(start, s[0].v, s[1].v));
        };
        let length = angle(start, end);
        let signed = |x: V3| dot(cross(start, x), n).atan2(dot(start, x));
        let mut spans: Vec<(f64, f64)> = b
            .windows(2)
            .filter(|s| dot(s[0].v, n).abs() <= TOL && dot(s[1].v, n).abs() <= TOL)
            .map(|s| {
                let (t0, t1) = (signed(s[0].v), signed(s[1].v));
                (t0.min(t1), t0.max(t1))
            })
            .collect();
        spans.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut covered = 0.0;
        for (lo, hi) in spans {
            if lo > covered + TOL {
                break;
            }
            covered = f64::max(covered, hi);
        }
        covered >= length - TOL
    })
}

/// OGC within: `a` lies in `b` and their interiors meet.
fn within(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Point(p), _) => b.locate(p.v) == Loc::Interior,
        (Shape::Line(_), Shape::Point(_))
        | (Shape::Polygons(_), Shape::Point(_) | Shape::Line(_)) => false,
        (Shape::Line(la), Shape::Line(lb)) => line_on_line(la, lb),
        (Shape::Line(_), Shape::Polygons(_)) => path_in(&a.edges(), b) == Some(true),
        (Shape::Polygons(polys), Shape::Polygons(_)) => {
            // Every ring of `a` lies in `b`, and no part of `b`'s boundary (an outer ring or a
            // hole) lies inside `a`, else `a` would reach past it.
            !polys.is_empty()
                && path_in(&a.edges(), b).is_some()
                && b.vertices().iter().all(|v| a.locate(v.v) != Loc::Interior)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements

/// Geodesic distance in meters on the WGS-84 ellipsoid (Vincenty's inverse formula). For the
/// nearly antipodal pairs where it does not converge, the great-circle distance on the sphere of
/// mean radius (2a + b) / 3 stands in.
fn geodesic(p: Pos, q: Pos) -> f64 {
    let (a, f) = (WGS84_A, WGS84_F);
    let b = a * (1.0 - f);
    let l = (q.lon - p.lon).to_radians();
    let u1 = ((1.0 - f) * p.lat.to_radians().tan()).atan();
    let u2 = ((1.0 - f) * q.lat.to_radians().tan()).atan();
    let (sin_u1, cos_u1, sin_u2, cos_u2) = (u1.sin(), u1.cos(), u2.sin(), u2.cos());
    let mut lambda = l;
    for _ in 0..200 {
        let (sin_l, cos_l) = (lambda.sin(), lambda.cos());
        let sin_sigma =
            ((cos_u2 * sin_l).powi(2) + (cos_u1 * sin_u2 - sin_u1 * cos_u2 * cos_l).powi(2)).sqrt();
        if sin_sigma == 0.0 {
            return 0.0;
        }
        let cos_sigma = sin_u1 * sin_u2 + cos_u1 * cos_u2 * cos_l;
        let sigma = sin_sigma.atan2(cos_sigma);
        let sin_alpha = cos_u1 * cos_u2 * sin_l / sin_sigma;
        let cos2_alpha = 1.0 - sin_alpha * sin_alpha;
        // On the equator cos²α is 0 and the term vanishes.
        let cos_2sm = if cos2_alpha == 0.0 {
            0.0
        } else {
            cos_sigma - 2.0 * sin_u1 * sin_u2 / cos2_alpha
        };
        let c = f / 16.0 * cos2_alpha * (4.0 + f * (4.0 - 3.0 * cos2_alpha));
        let previous = lambda;
        lambda = l
            + (1.0 - c)
                * f
                * sin_alpha
                * (sigma
                    + c * sin_sigma * (cos_2sm + c * cos_sigma * (-1.0 + 2.0 * cos_2sm * cos_2sm)));
        if (lambda - previous).abs() < 1e-12 {
            let u_sq = cos2_alpha * (a * a - b * b) / (b * b);
            let big_a =
                1.0 + u_sq / 16384.0 * (4096.0 + u_sq * (-768.0 + u_sq * (320.0 - 175.0 * u_sq)));
            let big_b = u_sq / 1024.0 * (256.0 + u_sq * (-128.0 + u_sq * (74.0 - 47.0 * u_sq)));
            let delta_sigma = big_b
                * sin_sigma
                * (cos_2sm
                    + big_b / 4.0
                        * (cos_sigma * (-1.0 + 2.0 * cos_2sm * cos_2sm)
                            - big_b / 6.0
                                * cos_2sm
                                * (-3.0 + 4.0 * sin_sigma * sin_sigma)
                                * (-3.0 + 4.0 * cos_2sm * cos_2sm)));
            let s = b * big_a * (sigma - delta_sigma);
            if s.is_finite() {
                return s;
            }
            break;
        }
    }
    angle(to_vec(p), to_vec(q)) * (2.0 * a + b) / 3.0
}

/// Distance from `p` to the arc `ab`: to the arc's closest point on the sphere, measured on the
/// ellipsoid.
fn to_arc(p: Pt, a: Pt, b: Pt) -> f64 {
    let ends = || geodesic(p.p, a.p).min(geodesic(p.p, b.p));
    let Some(n) = unit(cross(a.v, b.v)) else {
        return ends();
    };
    match unit(sub(p.v, scale(n, dot(p.v, n)))) {
        Some(q) if between(q, a.v, b.v, n) => geodesic(p.p, to_pos(q)),
        _ => ends(),
    }
}

fn distance(a: &Shape, b: &Shape) -> f64 {
    if let (Shape::Point(p), Shape::Point(q)) = (a, b) {
        return geodesic(p.p, q.p);
    }
    if intersects(a, b) {
        return 0.0;
    }
    // Two disjoint arcs are closest at an end of one of them.
    let from = |x: &Shape, y: &Shape| {
        let (points, edges) = (y.vertices(), y.edges());
        let mut best = f64::INFINITY;
        for p in x.vertices() {
            for q in &points {
                best = best.min(geodesic(p.p, q.p));
            }
            for &(c, d) in &edges {
                best = best.min(to_arc(p, c, d));
            }
        }
        best
    };
    from(a, b).min(from(b, a))
}

/// The ellipsoid's eccentricity and its authalic ("equal-area") sphere: latitude mapping and
/// radius.
fn authalic_q(lat: f64) -> f64 {
    let e2 = WGS84_F * (2.0 - WGS84_F);
    let e = e2.sqrt();
    let s = lat.sin();
    (1.0 - e2) * (s / (1.0 - e2 * s * s) - (1.0 / (2.0 * e)) * ((1.0 - e * s) / (1.0 + e * s)).ln())
}

fn authalic_radius() -> f64 {
    WGS84_A * (authalic_q(PI / 2.0) / 2.0).sqrt()
}

fn authalic_lat(lat_deg: f64) -> f64 {
    (authalic_q(lat_deg.to_radians()) / authalic_q(PI / 2.0))
        .clamp(-1.0, 1.0)
        .asin()
}

/// Area (steradians of the authalic sphere) of the region left of a ring. The per-edge
/// spherical excess between the edge and the equator is exact for great-circle edges and
/// precise for small rings; Gauss–Bonnet fixes the multiple of 2π that rings around a pole
/// or clockwise rings need.
fn ring_area(ring: &Ring) -> f64 {
    let pts: Vec<(f64, f64)> = ring
        .verts
        .iter()
        .map(|p| (p.p.lon.to_radians(), authalic_lat(p.p.lat)))
        .collect();
    let n = pts.len();
    if n < 3 {
        return 0.0;
    }
    let excess: f64 = (0..n)
        .map(|i| {
            let ((l1, p1), (l2, p2)) = (pts[i], pts[(i + 1) % n]);
            let (t1, t2) = ((p1 / 2.0).tan(), (p2 / 2.0).tan());
            let dl = (l2 - l1 + PI).rem_euclid(TAU) - PI;
            2.0 * ((dl / 2.0).tan() * (t1 + t2) / (1.0 + t1 * t2)).atan()
        })
        .sum();
    // Eastward edges south of the interior count positive, so a counter-clockwise ring sums to
    // minus its area.
    let signed = -excess;
    let verts: Vec<V3> = pts
        .iter()
        .map(|&(lon, lat)| [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()])
        .collect();
    let rough = left_area(&verts);
    (signed + TAU * ((rough - signed) / TAU).round()).clamp(0.0, 2.0 * TAU)
}

fn area(shape: &Shape) -> f64 {
    let Shape::Polygons(polys) = shape else {
        return 0.0;
    };
    let steradians: f64 = polys
        .iter()
        .map(|poly| {
            let holes: f64 = poly
                .holes
                .iter()
                .map(|h| {
                    let left = ring_area(h);
                    left.min(2.0 * TAU - left)
                })
                .sum();
            (ring_area(&poly.outer) - holes).max(0.0)
        })
        .sum();
    steradians * authalic_radius().powi(2)
}

// ---------------------------------------------------------------------------------------------
// Entry points

fn shape_arg(v: Option<&Val>) -> Option<Shape> {
    read(v?)?.ok().map(|geo| Shape::new(&geo))
}

fn st_distance(args: &[Val], _: &FnContext) -> Val {
    match (shape_arg(args.first()), shape_arg(args.get(1))) {
        (Some(a), Some(b)) => Val::Num(distance(&a, &b)),
        _ => Val::Undefined,
    }
}

fn st_within(args: &[Val], _: &FnContext) -> Val {
    match (shape_arg(args.first()), shape_arg(args.get(1))) {
        (Some(a), Some(b)) => Val::Bool(within(&a, &b)),
        _ => Val::Undefined,
    }
}

fn st_intersects(args: &[Val], _: &FnContext) -> Val {
    match (shape_arg(args.first()), shape_arg(args.get(1))) {
        (Some(a), Some(b)) => Val::Bool(intersects(&a, &b)),
        _ => Val::Undefined,
    }
}

fn st_isvalid(args: &[Val], _: &FnContext) -> Val {
    args.first()
        .and_then(validate)
        .map(|r| Val::Bool(r.is_ok()))
        .unwrap_or_default()
}

fn st_isvaliddetailed(args: &[Val], _: &FnContext) -> Val {
    let Some(result) = args.first().and_then(validate) else {
        return Val::Undefined;
    };
    let mut members = vec![(Arc::from("valid"), Val::Bool(result.is_ok()))];
    if let Err(reason) = result {
        members.push((Arc::from("reason"), Val::str(reason)));
    }
    Val::obj(members)
}

/// Points and LineStrings have an area of 0, as the page says.
fn st_area(args: &[Val], _: &FnContext) -> Val {
    shape_arg(args.first())
        .map(|s| Val::Num(area(&s)))
        .unwrap_or_default()
}

#[cfg(test)]
// Coordinates are copied verbatim from the docs, digits beyond f64 precision included.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use serde_json::json;

    const CTX: FnContext = FnContext {
        clock: None,
        now_ticks: 0,
        seed: 0,
    };

    fn j(v: serde_json::Value) -> Val {
        Val::from_json(&v)
    }

    fn call(f: fn(&[Val], &FnContext) -> Val, args: &[Val]) -> Val {
        f(args, &CTX)
    }

    fn num(v: Val) -> f64 {
        match v {
            Val::Num(n) => n,
            other => panic!("expected a number, got {other:?}"),
        }
    }

    fn boolean(v: Val) -> bool {
        match v {
            Val::Bool(b) => b,
            other => panic!("expected a boolean, got {other:?}"),
        }
    }

    fn point(lon: f64, lat: f64) -> Val {
        j(json!({"type": "Point", "coordinates": [lon, lat]}))
    }

    fn polygon(rings: serde_json::Value) -> Val {
        j(json!({"type": "Polygon", "coordinates": rings}))
    }

    /// The docs' example square, counter-clockwise.
    fn square() -> Val {
        polygon(json!([[
            [31.8, -5],
            [32, -5],
            [32, -4.7],
            [31.8, -4.7],
            [31.8, -5]
        ]]))
    }

    #[test]
    fn st_distance_docs_example() {
        let target = point(-122.11758113953535, 47.66901087006131);
        let hq = point(-122.12826822304672, 47.63980239335718);
        let rd = point(-96.84368664765994, 46.81297794314663);
        // Documented: 3.345269817267368 km and 1907.438421299902 km.
        let d1 = num(call(st_distance, &[hq, target.clone()]));
        let d2 = num(call(st_distance, &[rd, target]));
        assert!((d1 - 3_345.269_817_267_368).abs() < 1e-3, "{d1}");
        assert!((d2 - 1_907_438.421_299_902).abs() < 0.1, "{d2}");
    }

    #[test]
    fn st_distance_shapes() {
        // A point inside a polygon is at distance 0; outside, the distance to its nearest edge.
        assert_eq!(num(call(st_distance, &[point(31.9, -4.8), square()])), 0.0);
        let outside = num(call(st_distance, &[point(31.9, -5.1), square()]));
        let direct = geodesic(
            Pos {
                lon: 31.9,
                lat: -5.1,
            },
            Pos {
                lon: 31.9,
                lat: -5.0,
            },
        );
        assert!((outside - direct).abs() < 2.0, "{outside} vs {direct}");
        // One tenth of a degree of latitude near the equator is about 11.06 km.
        assert!((direct - 11_057.0).abs() < 5.0, "{direct}");
        let line = j(json!({"type": "LineString", "coordinates": [[31.8, -5.5], [32, -5.5]]}));
        let to_line = num(call(st_distance, &[line.clone(), square()]));
        assert!((to_line - 55_300.0).abs() < 100.0, "{to_line}");
        assert_eq!(num(call(st_distance, &[point(31.8, -5.5), line])), 0.0);
        // Symmetric, zero for one point, and 20,003.93 km pole to pole along a meridian.
        let (a, b) = (point(10.0, 20.0), point(-30.0, 40.0));
        assert_eq!(
            num(call(st_distance, &[a.clone(), b.clone()])),
            num(call(st_distance, &[b, a.clone()]))
        );
        assert_eq!(num(call(st_distance, &[a.clone(), a])), 0.0);
        let poles = num(call(st_distance, &[point(0.0, 90.0), point(0.0, -90.0)]));
        assert!((poles - 20_003_931.46).abs() < 1.0, "{poles}");
        // Nearly antipodal on the equator: Vincenty fails, the sphere stands in.
        let far = num(call(st_distance, &[point(0.0, 0.0), point(179.9, 0.0)]));
        assert!(far > 19_900_000.0 && far < 20_100_000.0, "{far}");
        assert!(call(st_distance, &[point(0.0, 0.0), point(0.0, 91.0)]).is_undefined());
        assert!(call(st_distance, &[point(0.0, 0.0), Val::str("x")]).is_undefined());
        assert!(call(st_distance, &[Val::Undefined, point(0.0, 0.0)]).is_undefined());
    }

    #[test]
    fn st_within_docs_example() {
        let hq = point(-122.12824857332558, 47.6395516675712);
        let campus = polygon(json!([[
            [-122.13236581015025, 47.64606476313813],
            [-122.13221982500913, 47.633757091363975],
            [-122.11840598103835, 47.641749416109235],
            [-122.12061400629656, 47.64589264786028],
            [-122.13236581015025, 47.64606476313813]
        ]]));
        assert!(boolean(call(st_within, &[hq, campus])));
    }

    #[test]
    fn st_within_cases() {
        let sq = square();
        assert!(boolean(call(st_within, &[point(31.9, -4.8), sq.clone()])));
        assert!(!boolean(call(st_within, &[point(31.7, -4.8), sq.clone()])));
        // A point on the boundary is not within (OGC).
        assert!(!boolean(call(st_within, &[point(31.8, -4.8), sq.clone()])));
        // Clockwise: the same ring encloses the rest of the globe.
        let cw = polygon(json!([[
            [31.8, -5],
            [31.8, -4.7],
            [32, -4.7],
            [32, -5],
            [31.8, -5]
        ]]));
        assert!(!boolean(call(st_within, &[point(31.9, -4.8), cw.clone()])));
        assert!(boolean(call(st_within, &[point(0.0, 0.0), cw])));
        // Holes.
        let holed = polygon(json!([
            [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
            [[4, 4], [4, 6], [6, 6], [6, 4], [4, 4]]
        ]));
        assert!(boolean(call(st_within, &[point(2.0, 2.0), holed.clone()])));
        assert!(!boolean(call(st_within, &[point(5.0, 5.0), holed.clone()])));
        // Lines and polygons inside polygons; a line crossing the hole is not within.
        let inner = j(json!({"type": "LineString", "coordinates": [[1, 1], [3, 1], [3, 3]]}));
        assert!(boolean(call(st_within, &[inner, holed.clone()])));
        let across = j(json!({"type": "LineString", "coordinates": [[1, 5], [9, 5]]}));
        assert!(!boolean(call(st_within, &[across, holed.clone()])));
        let small = polygon(json!([[[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]]));
        assert!(boolean(call(st_within, &[small.clone(), holed.clone()])));
        let over_hole = polygon(json!([[[3, 3], [7, 3], [7, 7], [3, 7], [3, 3]]]));
        assert!(!boolean(call(st_within, &[over_hole, holed.clone()])));
        assert!(!boolean(call(st_within, &[holed.clone(), small.clone()])));
        // A polygon is within itself; a multipolygon part by part.
        assert!(boolean(call(st_within, &[small.clone(), small.clone()])));
        let multi = j(json!({"type": "MultiPolygon", "coordinates": [
            [[[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]],
            [[[7, 7], [8, 7], [8, 8], [7, 8], [7, 7]]]
        ]}));
        assert!(boolean(call(st_within, &[multi.clone(), holed.clone()])));
        assert!(!boolean(call(st_within, &[multi.clone(), small.clone()])));
        assert!(boolean(call(st_within, &[point(7.5, 7.5), multi])));
        // Points and lines on lines; nothing lies within a point but the point itself.
        let line = j(json!({"type": "LineString", "coordinates": [[0, 0], [0, 2], [0, 4]]}));
        assert!(boolean(call(st_within, &[point(0.0, 1.0), line.clone()])));
        assert!(!boolean(call(st_within, &[point(0.0, 0.0), line.clone()])));
        let part = j(json!({"type": "LineString", "coordinates": [[0, 1], [0, 3]]}));
        assert!(boolean(call(st_within, &[part.clone(), line.clone()])));
        assert!(!boolean(call(st_within, &[line.clone(), part])));
        assert!(boolean(call(
            st_within,
            &[point(1.0, 1.0), point(1.0, 1.0)]
        )));
        assert!(!boolean(call(st_within, &[line, point(0.0, 0.0)])));
        assert!(!boolean(call(st_within, &[small, point(1.0, 1.0)])));
        assert!(call(st_within, &[point(0.0, 0.0), j(json!({"type": "Circle"}))]).is_undefined());
    }

    #[test]
    fn st_intersects_docs_example() {
        let highway = polygon(json!([[
            [-122.13693695285855, 47.64996065621003],
            [-122.1351662656516, 47.64627863318731],
            [-122.13488295569863, 47.646326350048696],
            [-122.1366182291613, 47.650016321952904],
            [-122.13693695285855, 47.64996065621003]
        ]]));
        let campus = polygon(json!([[
            [-122.14034847687708, 47.6494835188378],
            [-122.14014779899375, 47.64625477474044],
            [-122.13256925774829, 47.646207057813655],
            [-122.13254564858545, 47.64941990019193],
            [-122.14034847687708, 47.6494835188378]
        ]]));
        assert!(boolean(call(st_intersects, &[highway, campus])));
    }

    #[test]
    fn st_intersects_cases() {
        let sq = square();
        let far = polygon(json!([[[40, 10], [41, 10], [41, 11], [40, 11], [40, 10]]]));
        assert!(!boolean(call(st_intersects, &[sq.clone(), far])));
        // Containment without edge crossings, both ways.
        let inner = polygon(json!([[
            [31.85, -4.9],
            [31.95, -4.9],
            [31.95, -4.8],
            [31.85, -4.8],
            [31.85, -4.9]
        ]]));
        assert!(boolean(call(st_intersects, &[inner.clone(), sq.clone()])));
        assert!(boolean(call(st_intersects, &[sq.clone(), inner])));
        // Boundary contact counts.
        assert!(boolean(call(
            st_intersects,
            &[point(31.8, -4.8), sq.clone()]
        )));
        assert!(boolean(call(
            st_intersects,
            &[point(32.0, -5.0), sq.clone()]
        )));
        assert!(!boolean(call(
            st_intersects,
            &[point(31.7, -4.8), sq.clone()]
        )));
        let crossing =
            j(json!({"type": "LineString", "coordinates": [[31.7, -4.8], [32.1, -4.8]]}));
        assert!(boolean(call(
            st_intersects,
            &[crossing.clone(), sq.clone()]
        )));
        let lines = j(json!({"type": "LineString", "coordinates": [[31.9, -4.6], [31.9, -4.9]]}));
        assert!(boolean(call(st_intersects, &[crossing, lines.clone()])));
        assert!(!boolean(call(st_intersects, &[lines, point(0.0, 0.0)])));
        assert!(boolean(call(
            st_intersects,
            &[point(1.0, 2.0), point(1.0, 2.0)]
        )));
        assert!(!boolean(call(
            st_intersects,
            &[point(1.0, 2.0), point(1.0, 2.000001)]
        )));
        assert!(call(st_intersects, &[sq.clone(), j(json!("not geojson"))]).is_undefined());
        let empty = j(json!({"type": "MultiPolygon", "coordinates": []}));
        assert!(!boolean(call(st_intersects, &[empty, sq])));
    }

    #[test]
    fn st_isvalid_docs_examples() {
        let good = point(-84.38876194345323, 33.75682784306348);
        let bad = point(133.75682784306348, -184.38876194345323);
        assert!(boolean(call(st_isvalid, std::slice::from_ref(&good))));
        assert!(!boolean(call(st_isvalid, std::slice::from_ref(&bad))));
        assert!(!boolean(call(st_isvalid, &[point(31.9, -132.8)])));
        let valid = call(st_isvaliddetailed, &[good]);
        assert_eq!(valid.to_json().unwrap(), json!({"valid": true}));
        let invalid = call(st_isvaliddetailed, &[bad]);
        assert_eq!(
            invalid.to_json().unwrap(),
            json!({"valid": false, "reason": "Latitude values must be between -90 and 90 degrees."})
        );
        let open = polygon(json!([[[31.8, -5], [31.8, -4.7], [32, -4.7], [32, -5]]]));
        assert_eq!(
            call(st_isvaliddetailed, &[open]).to_json().unwrap(),
            json!({"valid": false, "reason": "The Polygon input is not valid because the start and end points of the ring number 1 are not the same. Each ring of a polygon must have the same start and end points."})
        );
    }

    #[test]
    fn st_isvalid_cases() {
        let valid = |v: serde_json::Value| boolean(call(st_isvalid, &[j(v)]));
        let reason = |v: serde_json::Value| {
            call(st_isvaliddetailed, &[j(v)])
                .get("reason")
                .as_str()
                .map(str::to_string)
        };
        assert!(valid(json!({"type": "Point", "coordinates": [180, 90]})));
        assert!(valid(json!({"type": "Point", "coordinates": [1, 2, 300]})));
        assert!(valid(
            json!({"type": "LineString", "coordinates": [[31.8, -5], [31.8, -4.7]]})
        ));
        assert!(valid(json!({"type": "MultiPolygon", "coordinates": [
            [[[52, 12], [53, 12], [53, 13], [52, 13], [52, 12]]],
            [[[50, 0], [51, 0], [51, 5], [50, 5], [50, 0]]]
        ]})));
        assert!(valid(json!({"type": "MultiPolygon", "coordinates": []})));
        assert!(!valid(json!({"type": "Point", "coordinates": [181, 0]})));
        assert_eq!(
            reason(json!({"type": "Point", "coordinates": [-181, 0]})).unwrap(),
            "Longitude values must be between -180 and 180 degrees."
        );
        assert!(!valid(json!({"type": "Point", "coordinates": [1]})));
        assert!(!valid(json!({"type": "Point", "coordinates": ["1", 2]})));
        assert!(!valid(json!({"type": "Point"})));
        assert!(!valid(
            json!({"type": "LineString", "coordinates": [[1, 2]]})
        ));
        assert!(!valid(json!({"type": "Polygon", "coordinates": []})));
        assert!(!valid(
            json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]})
        ));
        assert!(
            reason(json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]}))
                .unwrap()
                .contains("fewer than 4")
        );
        // A bow tie crosses itself.
        let bow =
            json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]});
        assert!(!valid(bow.clone()));
        assert!(
            reason(bow)
                .unwrap()
                .contains("ring number 1 intersects itself")
        );
        // A hole that is not closed is ring number 2.
        let open_hole = json!({"type": "Polygon", "coordinates": [
            [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
            [[4, 4], [4, 6], [6, 6], [6, 4]]
        ]});
        assert!(
            reason(open_hole)
                .unwrap()
                .contains("ring number 2 are not the same")
        );
        assert!(!valid(
            json!({"type": "MultiPoint", "coordinates": [[0, 0]]})
        ));
        assert!(!valid(json!({"coordinates": [0, 0]})));
        assert!(call(st_isvalid, &[Val::str("Point")]).is_undefined());
        assert!(call(st_isvaliddetailed, &[Val::Num(1.0)]).is_undefined());
    }

    #[test]
    fn st_area_docs_example() {
        let a = num(call(st_area, &[square()]));
        // Documented: 735970283.0522614 m².
        assert!((a - 735_970_283.052_261_4).abs() < 1.0, "{a}");
    }

    #[test]
    fn st_area_cases() {
        let sq = num(call(st_area, &[square()]));
        // Zero for points and lines.
        assert_eq!(num(call(st_area, &[point(1.0, 2.0)])), 0.0);
        let line = j(json!({"type": "LineString", "coordinates": [[31.8, -5], [31.8, -4.7]]}));
        assert_eq!(num(call(st_area, &[line])), 0.0);
        // Clockwise encloses the rest of the globe: the two add up to the ellipsoid's surface.
        let cw = polygon(json!([[
            [31.8, -5],
            [31.8, -4.7],
            [32, -4.7],
            [32, -5],
            [31.8, -5]
        ]]));
        let rest = num(call(st_area, &[cw]));
        let earth = 510_065_621_724_088.4;
        assert!((sq + rest - earth).abs() / earth < 1e-9, "{}", sq + rest);
        // A hole is subtracted whatever its orientation; a multipolygon adds its parts.
        let outer = json!([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]);
        let hole = json!([
            [0.25, 0.25],
            [0.25, 0.75],
            [0.75, 0.75],
            [0.75, 0.25],
            [0.25, 0.25]
        ]);
        let hole_ccw = json!([
            [0.25, 0.25],
            [0.75, 0.25],
            [0.75, 0.75],
            [0.25, 0.75],
            [0.25, 0.25]
        ]);
        let full = num(call(st_area, &[polygon(json!([outer.clone()]))]));
        let holed = num(call(st_area, &[polygon(json!([outer.clone(), hole]))]));
        let holed_ccw = num(call(
            st_area,
            &[polygon(json!([outer.clone(), hole_ccw.clone()]))],
        ));
        let inner = num(call(st_area, &[polygon(json!([hole_ccw]))]));
        assert!(
            (holed - (full - inner)).abs() < 1.0 && (holed - holed_ccw).abs() < 1.0,
            "{full} {holed} {holed_ccw} {inner}"
        );
        // A one-degree cell at the equator is about 12,308 km².
        assert!((full / 1e6 - 12_308.0).abs() < 5.0, "{full}");
        let multi = j(
            json!({"type": "MultiPolygon", "coordinates": [[outer.clone()], [[[5, 5], [6, 5], [6, 6], [5, 6], [5, 5]]]]}),
        );
        let cell = num(call(
            st_area,
            &[polygon(json!([[[5, 5], [6, 5], [6, 6], [5, 6], [5, 5]]]))],
        ));
        assert!((num(call(st_area, &[multi])) - (full + cell)).abs() < 1.0);
        // A ring around the north pole: the cap north of 80°N.
        let cap = polygon(json!([[[0, 80], [90, 80], [180, 80], [-90, 80], [0, 80]]]));
        let cap_area = num(call(st_area, &[cap]));
        assert!(cap_area > 2.3e12 && cap_area < 2.6e12, "{cap_area}");
        assert!(
            call(
                st_area,
                &[j(
                    json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]})
                )]
            )
            .is_undefined()
        );
        assert!(call(st_area, &[Val::Null]).is_undefined());
    }

    #[test]
    fn registry_entries() {
        assert_eq!(FUNCTIONS.len(), 6);
        for f in FUNCTIONS {
            assert_eq!(f.kind, super::super::FnKind::Scalar);
            assert_eq!(f.min_args, f.max_args);
        }
        let spec = |name: &str| FUNCTIONS.iter().find(|f| f.name == name).unwrap();
        assert!(
            spec("ST_DISTANCE").uses_index
                && spec("ST_WITHIN").uses_index
                && spec("ST_INTERSECTS").uses_index
        );
        assert!(!spec("ST_AREA").uses_index && !spec("ST_ISVALID").uses_index);
    }
}
